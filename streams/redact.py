"""Keeps secrets out of logs, dead-letter headers and previews: token masking, capped echoes,
credential-free bootstrap strings, and a logging filter that applies them to every line."""

from __future__ import annotations

import logging
import re

__all__ = [
    "MASK",
    "MAX_ECHO_CHARS",
    "RedactingFilter",
    "install_log_redaction",
    "mask_bootstrap",
    "redact",
]

logger = logging.getLogger(__name__)

#: What a secret is replaced with.
MASK = "***"
#: A quoted value echoed in an error sentence is cut to this many characters: enough to
#: recognise a field value, too short to carry a payload out through a log or DLQ header.
MAX_ECHO_CHARS = 40

#: `user:password@host` in a URL or bootstrap string (with or without a scheme).
_CREDENTIALS = re.compile(r"(?P<head>(?:[A-Za-z][\w+.-]*://)?[^\s:/@,'\"]+):[^\s@/,'\"]+@")
#: A key name that marks its value secret, anywhere in the name and in any case (`db_password`,
#: `client_secret`, `X-Api-Key`, `SASL_PASSWORD`). A name ending in `tokens` counts tokens
#: (`num_tokens`, `max_tokens`) and is left alone.
_SECRET_WORD = (r"(?:password|passwd|pwd|secret|token(?!s\b)|api[_-]?key|access[_-]?key|private[_-]?key|"
                r"credentials?|auth(?:orization)?|sasl)")
#: `password=…`, `"db_password": "…"`, `Authorization: Bearer …` and the like: the whole value is
#: masked whatever its shape (a quoted value with spaces included).
_NAMED_SECRET = re.compile(
    r"(?i)(?P<name>(?<![\w.-])[\w.-]*" + _SECRET_WORD + r"[\w.-]*['\"]?\s*[=:]\s*"
    r"(?:bearer\s+|basic\s+)?)(?:\"[^\"]*\"|'[^']*'|[^\s,;'\"}]+)")
#: Well-known token shapes: OpenAI/Anthropic-style `sk-…`, GitHub `ghp_…`, Slack `xox?-…`,
#: AWS access key ids, JWTs, and `Bearer …`.
_KNOWN_TOKENS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|xox[abposr]-[A-Za-z0-9-]{8,}|"
    r"AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)|"
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}")
#: Any other long base64-like run mixing upper case, lower case and digits. Lower-case hex
#: (event ids, sha256 digests) is left alone: it carries no secret of ours and is what a
#: reader needs to find the record.
_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_+/=.-]{20,}")
#: A single- or double-quoted value inside a sentence (e.g. `unknown event type '…'`).
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _looks_secret(run: str) -> bool:
    return (any(c.isupper() for c in run) and any(c.islower() for c in run)
            and any(c.isdigit() for c in run))


def _mask_run(match: re.Match[str]) -> str:
    run = match.group(0)
    return MASK if _looks_secret(run) else run


def _cap_quoted(match: re.Match[str]) -> str:
    quote = "'" if match.group(1) is not None else '"'
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    if len(inner) <= MAX_ECHO_CHARS:
        return match.group(0)
    return f"{quote}{inner[:MAX_ECHO_CHARS]}…{quote}"


def mask_bootstrap(text: str) -> str:
    """`text` with the password of every `user:password@host` replaced by the mask."""
    return _CREDENTIALS.sub(lambda m: f"{m.group('head')}:{MASK}@", text)


def redact(text: str, *, cap_quoted: bool = True) -> str:
    """`text` with credentials, named secrets and token-like strings masked and (by default)
    every quoted value longer than MAX_ECHO_CHARS cut short."""
    text = mask_bootstrap(text)
    text = _NAMED_SECRET.sub(lambda m: f"{m.group('name')}{MASK}", text)
    text = _KNOWN_TOKENS.sub(MASK, text)
    text = _TOKEN_LIKE.sub(_mask_run, text)
    if cap_quoted:
        text = _QUOTED.sub(_cap_quoted, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites each record's message through `redact` (quoted values are not capped: log
    lines of our own are short, and client libraries' lines keep their meaning)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string must not lose the line
            message = str(record.msg)
        cleaned = redact(message, cap_quoted=False)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            # Tracebacks carry exception messages (and so values): format, then redact them.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info),
                                     cap_quoted=False)
        return True


def install_log_redaction(root: logging.Logger | None = None) -> RedactingFilter:
    """Adds one RedactingFilter to every handler of the root logger (call after
    logging.basicConfig); idempotent."""
    root = root or logging.getLogger()
    if not root.handlers:  # lastResort would print unfiltered lines
        logging.basicConfig(level=logging.WARNING)
    active = RedactingFilter()
    for handler in root.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(active)
    return active

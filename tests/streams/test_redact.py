"""Secrets stay out of logs, dead-letter headers and previews."""

from __future__ import annotations

import io
import logging

import pytest

from streams.dlq import error_sentence, safe_preview
from streams.redact import MASK, MAX_ECHO_CHARS, install_log_redaction, mask_bootstrap, redact

CANARY = "sk-canaryAb12Cd34Ef56"


@pytest.mark.parametrize("text", [
    f"password={CANARY}", f"token: {CANARY}", f"Authorization: Bearer {CANARY}",
    f"sasl_plain_password='{CANARY}'", f"unknown event type 'alien.{CANARY}'",
    "ghp_abcdefghijklmnopqrstuvwxyz012345", "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abcDEF123",
    "opaque Zq7Vx9Lm2Pw4Rt6Yu8Io0Kj",
])
def test_token_like_strings_are_masked(text: str) -> None:
    cleaned = redact(text)
    assert MASK in cleaned
    for secret in (CANARY, "ghp_abc", "AKIAABC", "eyJhbGci", "Zq7Vx9Lm"):
        assert secret not in cleaned


@pytest.mark.parametrize("text", [
    "dead-lettered flywheel.tasks[2]@41: invalid task.proposed event: field 'goal'",
    ("event 3f2a9c0e5b7d4e1f8a6b2c3d4e5f6a7b sha256 "
     "9ab980cc92c1c8e3fe2c47b423b263dce0815bab5b23bb049e7fe7c2b12714ab"),
    "device sim-0 timed out after 60 s",
])
def test_ordinary_sentences_ids_and_digests_are_left_alone(text: str) -> None:
    assert redact(text) == text


LOWER = "lowercasecanarysecret0001"  # no shape of a token: only its key says it is secret


@pytest.mark.parametrize("text", [
    f'{{"db_password": "{LOWER}"}}', f'{{"client_secret": "{LOWER}"}}', f"DB_PASSWORD={LOWER}",
    f"x-api-key: {LOWER}", f"'refresh_token': '{LOWER}'", f"MyAccessKeyId={LOWER}",
    f'{{"private_key_pem": "{LOWER}"}}', f"sasl_plain_password={LOWER}", f"UserCredential: {LOWER}",
    f'{{"passphrase_pwd": "{LOWER} with spaces"}}', f'{{"Secret": "{LOWER}"}}',
])
def test_a_secret_key_name_masks_its_value_whatever_its_shape(text: str) -> None:
    cleaned = redact(text)
    assert LOWER not in cleaned and MASK in cleaned
    assert "with spaces" not in cleaned  # a quoted value is masked whole


@pytest.mark.parametrize("text", [
    "{'loss': '1.235', 'num_tokens': '3801', 'epoch': '0.01818'}", "max_tokens=96", "output_tokens: 12",
    '{"goal": "text my password manager tips to Ann"}',
])
def test_counts_of_tokens_and_prose_about_secrets_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_echoed_values_are_capped() -> None:
    cleaned = redact("unknown event type '" + "a" * 500 + "'")
    assert len(cleaned) < 30 + MAX_ECHO_CHARS and "…" in cleaned


def test_bootstrap_credentials_are_masked() -> None:
    assert mask_bootstrap("sasl://alice:s3cret@broker:9092,bob:pw@b2:9093") == \
        "sasl://alice:***@broker:9092,bob:***@b2:9093"


def test_error_sentences_and_previews_are_redacted() -> None:
    assert CANARY not in error_sentence(ValueError(f"bad token={CANARY}"))
    assert CANARY not in safe_preview(f'{{"token": "{CANARY}"}}'.encode())
    assert CANARY not in safe_preview(b"x" * 5000 + CANARY.encode(), limit=10_000)


def test_log_lines_and_tracebacks_are_redacted() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    handler = logging.StreamHandler(stream)
    root.addHandler(handler)
    try:
        install_log_redaction(root)
        log = logging.getLogger("kafka.conn")
        log.warning("connect to %s failed", f"user:{CANARY}@host:9092")
        try:
            raise RuntimeError(f"api_key={CANARY}")
        except RuntimeError:
            log.exception("boom")
    finally:
        root.removeHandler(handler)
    text = stream.getvalue()
    assert "connect to user:***@host:9092 failed" in text and "RuntimeError" in text
    assert CANARY not in text

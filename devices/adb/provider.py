"""How Flywheel's app data lives on a device: packages, content-provider URIs, column types, and
the text formats of `content` (bind arguments in, "Row: 0 a=1, b=2" out).

On a real device each sandbox app (contacts, notes, ...) is a Flywheel companion app
`com.flywheel.<app>` whose provider `content://com.flywheel.<app>.provider/<table>` holds the
same flat rows as the sim phone, and whose `call` method runs the app's tools by verb.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

__all__ = [
    "CALL_RESULT_KEY",
    "COLUMN_TYPES",
    "LAUNCHER_PACKAGE",
    "PACKAGE_PREFIX",
    "app_for_package",
    "authority_for",
    "bind_args",
    "decode_value",
    "encode_value",
    "format_call_output",
    "format_query_rows",
    "package_for",
    "parse_bind",
    "parse_call_output",
    "parse_query_output",
    "parse_uri",
    "parse_where_id",
    "table_uri",
    "where_id",
]

logger = logging.getLogger(__name__)

#: Every sandbox app is one companion package under this prefix (matches the sim's resource ids).
PACKAGE_PREFIX = "com.flywheel."

#: The home screen's package; a dump rooted here means no app is in the foreground.
LAUNCHER_PACKAGE = "com.flywheel.launcher"

#: The Bundle key under which the companion provider's `call` returns the tool result as JSON.
CALL_RESULT_KEY = "result"

# Column kinds: s string, b boolean, l integer, d float, j JSON (list/object) carried as a
# string. Unlisted columns are strings. These follow the shared sim-phone table spec.
COLUMN_TYPES: dict[str, dict[str, str]] = {
    "contacts.contacts": {"starred": "b"},
    "calendar.events": {"attendees": "j"},
    "messages.messages": {"read": "b"},
    "clock.alarms": {"enabled": "b", "days": "j"},
    "clock.timers": {"seconds": "l"},
    "notes.notes": {"pinned": "b"},
    "email.emails": {"to": "j", "read": "b", "starred": "b"},
    "maps.places": {"rating": "d"},
    "maps.saved": {},
    "maps.trips": {"eta_min": "l"},
    "shopping.products": {"price": "d", "stock": "l"},
    "shopping.cart": {"quantity": "l"},
    "shopping.orders": {"items": "j", "total": "d"},
    "files.files": {"tags": "j", "size_kb": "l"},
}

_URI_RE = re.compile(r"content://com\.flywheel\.([a-z_]+)\.provider(?:/([a-z_]+))?")
_WHERE_ID_RE = re.compile(r"id\s*=\s*'((?:[^']|'')*)'")
_ROW_RE = re.compile(r"^Row: (\d+) ?(.*)$")


def package_for(app: str) -> str:
    return f"{PACKAGE_PREFIX}{app}"


def app_for_package(package: str | None) -> str | None:
    """'com.flywheel.notes' → 'notes'; the launcher or a foreign package → None."""
    if not package or not package.startswith(PACKAGE_PREFIX) or package == LAUNCHER_PACKAGE:
        return None
    return package[len(PACKAGE_PREFIX):].split(".", 1)[0]


def authority_for(app: str) -> str:
    return f"com.flywheel.{app}.provider"


def table_uri(app: str, table: str | None = None) -> str:
    base = f"content://{authority_for(app)}"
    return f"{base}/{table}" if table else base


def parse_uri(uri: str) -> tuple[str, str | None]:
    """A provider URI → (app, table or None); ValueError for a foreign URI."""
    match = _URI_RE.fullmatch(uri)
    if match is None:
        raise ValueError(f"{uri!r} is not a Flywheel provider URI")
    return match.group(1), match.group(2)


def where_id(row_id: str) -> str:
    """The SQL selection for one row by id, quotes doubled."""
    return "id='" + row_id.replace("'", "''") + "'"


def parse_where_id(where: str) -> str | None:
    match = _WHERE_ID_RE.fullmatch(where.strip())
    return match.group(1).replace("''", "'") if match else None


def _kind(app: str, table: str, column: str) -> str:
    return COLUMN_TYPES.get(f"{app}.{table}", {}).get(column, "s")


def encode_value(value: Any) -> tuple[str, str]:
    """A JSON value → (content bind type letter, text)."""
    if value is None:
        return "n", ""
    if isinstance(value, bool):
        return "b", "true" if value else "false"
    if isinstance(value, int):
        return "l", str(value)
    if isinstance(value, float):
        return "d", repr(value)
    if isinstance(value, (list, dict)):
        return "s", json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return "s", str(value)


def decode_value(kind: str, text: str) -> Any:
    """The text of a column of `kind` (as `content query` prints it) → a JSON value."""
    if text == "NULL":
        return None
    try:
        if kind == "b":
            return text.lower() in ("true", "1")
        if kind == "l":
            return int(text)
        if kind == "d":
            return float(text)
        if kind == "j":
            return json.loads(text)
    except ValueError:
        logger.warning("column of kind %s holds %r; kept as text", kind, text)
    return text


def bind_args(row: dict[str, Any]) -> list[str]:
    """`--bind col:type:value` arguments for `content insert/update`."""
    args: list[str] = []
    for column, value in row.items():
        letter, text = encode_value(value)
        args += ["--bind", f"{column}:{letter}:{text}"]
    return args


def parse_bind(arg: str, app: str, table: str) -> tuple[str, Any]:
    """One `col:type:value` bind → (column, JSON value), typed by the table's column kinds."""
    column, letter, text = arg.split(":", 2)
    if letter == "n":
        return column, None
    if letter == "b":
        return column, text.lower() == "true"
    if letter in ("i", "l"):
        return column, int(text)
    if letter in ("f", "d"):
        return column, float(text)
    kind = _kind(app, table, column)
    return column, (decode_value(kind, text) if kind == "j" else text)


def parse_query_output(output: str, app: str, table: str) -> list[dict[str, Any]]:
    """`content query` output ("Row: 0 id=ct1, name=Alice, ...") → typed rows.

    Columns are split at ", <column>=" and typed by the table's column kinds; a line that
    does not start with "Row: " continues the previous row's last value (a multi-line body).
    """
    text = output.strip()
    if not text or text.startswith("No result found"):
        return []
    records: list[str] = []
    for line in text.splitlines():
        match = _ROW_RE.match(line)
        if match:
            records.append(match.group(2))
        elif records:
            records[-1] += "\n" + line
        else:
            raise ValueError(f"content query printed {line[:80]!r} where a 'Row:' line was expected")
    rows = []
    for record in records:
        row: dict[str, Any] = {}
        for part in re.split(r", (?=[A-Za-z_][A-Za-z0-9_]*=)", record):
            column, _, value = part.partition("=")
            row[column] = decode_value(_kind(app, table, column), value)
        rows.append(row)
    return rows


def format_query_rows(rows: list[dict[str, Any]]) -> str:
    """Rows → `content query` output, as a device prints it."""
    if not rows:
        return "No result found.\n"
    lines = []
    for index, row in enumerate(rows):
        cells = []
        for column, value in row.items():
            if value is None:
                cells.append(f"{column}=NULL")
            else:
                cells.append(f"{column}={encode_value(value)[1]}")
        lines.append(f"Row: {index} " + ", ".join(cells))
    return "\n".join(lines) + "\n"


def format_call_output(result: dict[str, Any]) -> str:
    """The companion provider's `call` reply as `content call` prints a Bundle."""
    payload = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
    return f"Result: Bundle[{{{CALL_RESULT_KEY}={payload}}}]\n"


def parse_call_output(output: str) -> dict[str, Any]:
    """`content call` output → the JSON object the provider returned under CALL_RESULT_KEY."""
    marker = f"Result: Bundle[{{{CALL_RESULT_KEY}="
    start = output.find(marker)
    end = output.rfind("}]")
    if start < 0 or end < 0:
        raise ValueError(f"content call printed no result bundle ({output.strip()[:120]!r})")
    return json.loads(output[start + len(marker):end])

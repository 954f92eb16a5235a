"""Lexical memory retrieval: entries ranked by how many of a query's words they contain.

Memory holds user facts (`home_address`, `partner`) and episodic notes from earlier sessions
(keys starting with `note/`, by convention); both are plain key → JSON value entries, so the
final state's memory diff reads them alike. Notes the harness stores by itself during an
episode (`note/seen/<tool>`, as `MemoryPolicy.store` says) are ranked with them but kept out
of the final state (`HarnessState.seen`). Retrieval tokenises the query and every entry
(key words and value text), scores word overlap (an exact key or a whole-query substring
counts most) and returns the top k.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["NOTE_PREFIX", "entry_text", "is_note", "rank", "tokens"]

logger = logging.getLogger(__name__)

#: Keys of episodic notes (what happened in an earlier session) start with this.
NOTE_PREFIX = "note/"
# Words too common to say anything about which entry is meant.
_STOP = frozenset({"a", "an", "the", "my", "me", "i", "of", "to", "for", "in", "on", "at", "is",
                   "and", "or", "what", "with", "from", "your", "you", "it", "be", "was", "by"})
_WORD = re.compile(r"[a-z0-9]+")
# An entry containing the whole query as a substring outranks one that only shares words.
_SUBSTRING_BONUS = 2.0


def is_note(key: str) -> bool:
    return key.startswith(NOTE_PREFIX)


def entry_text(key: str, value: Any) -> str:
    """The searchable text of an entry: its key's words and its value."""
    body = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"{key.replace('_', ' ').replace('/', ' ')} {body}".casefold()


def tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def rank(query: str, entries: Iterable[tuple[str, Any]], top_k: int) -> list[tuple[str, Any]]:
    """The top-k entries for `query`, best first (ties by key); entries sharing nothing are out."""
    wanted = tokens(query)
    needle = " ".join(query.casefold().split())
    scored = []
    for key, value in entries:
        text = entry_text(key, value)
        score = float(len(wanted & tokens(text)))
        if needle and (needle in text or needle in key.casefold()):
            score += _SUBSTRING_BONUS
        if score > 0:
            scored.append((-score, key, value))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(key, value) for _, key, value in scored[:top_k]]

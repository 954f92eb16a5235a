"""Reviewer tokens are shown once and kept only as hashes."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from services.gate.tokens import ReviewerTokens, TokenError, hash_token


def test_tokens_are_stored_hashed_in_an_owner_only_file(tmp_path: Path) -> None:
    path = tmp_path / "reviewers.json"
    token = ReviewerTokens(path).issue("alice")
    text = path.read_text()
    assert token not in text and hash_token(token) in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ReviewerTokens(path).reviewer_for(token) == "alice"  # survives a reload


def test_unknown_wrong_and_revoked_tokens_sign_in_nobody(tmp_path: Path) -> None:
    tokens = ReviewerTokens(tmp_path / "r.json")
    token = tokens.issue("alice")
    assert tokens.reviewer_for(token[:-1] + ("x" if token[-1] != "x" else "y")) is None
    assert tokens.reviewer_for("") is None
    assert tokens.reviewer_for(hash_token(token)) is None  # the stored hash is not a token
    assert tokens.revoke("alice") and tokens.reviewer_for(token) is None


def test_reissuing_replaces_the_old_token(tmp_path: Path) -> None:
    tokens = ReviewerTokens(tmp_path / "r.json")
    old = tokens.issue("local")
    new = tokens.issue("local")
    assert tokens.reviewer_for(old) is None and tokens.reviewer_for(new) == "local"


def test_bad_names_and_a_broken_file_are_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(TokenError, match="letters, digits"):
        ReviewerTokens(tmp_path / "r.json").issue("a b")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(TokenError, match="unreadable"):
        ReviewerTokens(broken)


def test_a_running_gate_sees_tokens_issued_and_revoked_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    gate_side = ReviewerTokens(path)
    cli_side = ReviewerTokens(path)
    token = cli_side.issue("erin")
    assert gate_side.reviewer_for(token) == "erin"
    assert gate_side.hash_of("erin") == hash_token(token)
    ReviewerTokens(path).revoke("erin")
    assert gate_side.reviewer_for(token) is None and gate_side.hash_of("erin") is None

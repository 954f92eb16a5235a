"""The local reviewer's token is kept between runs (mode 0600) and reused while it is valid; a
revoked one, or `rotate`, gets a new token."""

from __future__ import annotations

import stat
from pathlib import Path

from services.gate.tokens import ReviewerTokens


def test_a_kept_token_is_reused_until_revoked_or_rotated(tmp_path: Path) -> None:
    tokens = ReviewerTokens(tmp_path / "reviewers.json")
    keep = tmp_path / "local-reviewer.token"
    first, reused = tokens.kept("local", keep)
    assert not reused and stat.S_IMODE(keep.stat().st_mode) == 0o600
    again, reused = ReviewerTokens(tmp_path / "reviewers.json").kept("local", keep)
    assert (again, reused) == (first, True)
    rotated, reused = tokens.kept("local", keep, rotate=True)
    assert rotated != first and not reused and tokens.reviewer_for(first) is None
    tokens.revoke("local")
    fresh, reused = tokens.kept("local", keep)
    assert fresh != rotated and not reused and tokens.reviewer_for(fresh) == "local"
    keep.write_text("fw_forged\n")  # a token the store does not know is never reused
    assert tokens.kept("local", keep)[1] is False

"""Checker helpers: values compare after normalisation, arguments must all be present."""

from __future__ import annotations

from devices.suite import checkers as ck


def test_values_match_normalises_case_numbers_and_list_order() -> None:
    assert ck.values_match("  Hello  World", "hello world")
    assert ck.values_match(12.5, 12.50) and ck.values_match(300, 300.0)
    assert ck.values_match(["fri", "mon"], ["mon", "fri"])
    assert not ck.values_match(True, 1)
    assert not ck.values_match("12", 13)


def test_args_match_needs_every_expected_argument() -> None:
    assert ck.args_match({"query": "Acme", "extra": 1}, {"query": "acme"})
    assert not ck.args_match({"query": "Acm"}, {"query": "acme"})
    assert not ck.args_match(None, {"query": "acme"})

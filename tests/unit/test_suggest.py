"""Did-you-mean suggestions."""

from __future__ import annotations

from hz.runtime.suggest import closest, did_you_mean


def test_close_typo() -> None:
    assert closest("titel", ["contract", "name", "title", "timeout"]) == "title"
    assert did_you_mean("promt", ["hz", "contract", "prompt"]) == "did you mean 'prompt'?"


def test_case_slip_wins() -> None:
    assert closest("Name", ["name", "game"]) == "name"


def test_nothing_close() -> None:
    assert closest("zzz", ["contract", "name"]) is None
    assert did_you_mean("zzz", []) is None

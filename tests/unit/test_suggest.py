"""Did-you-mean suggestions."""

from __future__ import annotations

from hz.runtime.artifacts.suggest import close_matches, closest, did_you_mean, did_you_mean_suffix


def test_close_typo() -> None:
    assert closest("titel", ["contract", "name", "title", "timeout"]) == "title"
    assert did_you_mean("promt", ["hz", "contract", "prompt"]) == "did you mean 'prompt'?"


def test_case_slip_wins() -> None:
    assert closest("Name", ["name", "game"]) == "name"


def test_nothing_close() -> None:
    assert closest("zzz", ["contract", "name"]) is None
    assert did_you_mean("zzz", []) is None


def test_the_forms_a_message_takes() -> None:
    assert did_you_mean_suffix("modle", ["model", "effort"]) == " (did you mean 'model'?)"
    assert did_you_mean_suffix("zzz", ["model"]) == ""
    assert close_matches("HZ10", ["HZ100", "HZ101", "HZ201", "HZ999"], n=5) == [
        "HZ101",
        "HZ100",
        "HZ201",
    ]

"""Timeout syntax and range, budget bounds (HZ301-HZ304)."""

from __future__ import annotations

import pytest

from compiler.checks.limits import check_max_usd, check_timeout, parse_duration
from compiler.source import Pos, SourceDoc


def doc(hz: dict[str, object]) -> SourceDoc:
    positions = {("hz", "timeout"): Pos(4, 12), ("hz", "agent", "max_usd"): Pos(6, 14)}
    return SourceDoc("c.yaml", "", {"hz": hz}, values=positions)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("10m", 600),
        ("1h", 3600),
        ("1h30m", 5400),
        ("1h0m1s", 3601),
        ("2m30s", 150),
        ("0s", 0),
        ("007m", 420),
    ],
)
def test_parse_duration(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "10", "10 m", "1.5h", "30m1h", "1h1h", "10M", "PT10M", "-5s", " 10m", "1d", "h"]
)
def test_parse_duration_refuses(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize(("raw", "seconds"), [(1, 1), (86400, 86400), ("24h", 86400), ("1s", 1)])
def test_timeout_bounds_accepted(raw: object, seconds: int) -> None:
    assert check_timeout(doc({"timeout": raw})) == (seconds, [])


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (0, "HZ302", "hz.timeout: 0 seconds is outside 1 second … 24 hours"),
        (86401, "HZ302", "hz.timeout: 86401 seconds is outside 1 second … 24 hours"),
        ("24h1s", "HZ302", "hz.timeout: 24h1s is outside 1 second … 24 hours"),
        (-3, "HZ302", "hz.timeout: -3 seconds is outside 1 second … 24 hours"),
        ("ten", "HZ301", "hz.timeout: 'ten' is not a duration"),
        (
            True,
            "HZ103",
            'hz.timeout: expected integer seconds or a duration such as "10m", '
            "got a boolean (true)",
        ),
        (
            1.5,
            "HZ103",
            'hz.timeout: expected integer seconds or a duration such as "10m", got a number (1.5)',
        ),
    ],
)
def test_timeout_refused(raw: object, code: str, message: str) -> None:
    seconds, diags = check_timeout(doc({"timeout": raw}))
    assert seconds is None
    assert [(d.code, d.message, d.line, d.column) for d in diags] == [(code, message, 4, 12)]


def test_missing_timeout_is_left_to_the_schema() -> None:
    assert check_timeout(doc({})) == (None, [])


@pytest.mark.parametrize(("raw", "usd"), [(0.01, 0.01), (100, 100.0), (1, 1.0)])
def test_budget_accepted(raw: object, usd: float) -> None:
    assert check_max_usd(doc({"agent": {"max_usd": raw}}), 100.0) == (usd, [])


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (0, "HZ303", "hz.agent.max_usd: the budget must be greater than 0, got 0"),
        (-0.5, "HZ303", "hz.agent.max_usd: the budget must be greater than 0, got -0.5"),
        (float("nan"), "HZ303", "hz.agent.max_usd: the budget must be greater than 0, got nan"),
        (100.01, "HZ304", "hz.agent.max_usd: 100.01 is over the ceiling of 100 US dollars"),
        (
            float("inf"),
            "HZ304",
            "hz.agent.max_usd: inf is over the ceiling of 100 US dollars",
        ),
        (
            False,
            "HZ103",
            "hz.agent.max_usd: expected a number of US dollars, got a boolean (false)",
        ),
        ("1", "HZ103", "hz.agent.max_usd: expected a number of US dollars, got a string ('1')"),
    ],
)
def test_budget_refused(raw: object, code: str, message: str) -> None:
    usd, diags = check_max_usd(doc({"agent": {"max_usd": raw}}), 100.0)
    assert usd is None
    assert [(d.code, d.message, d.line, d.column) for d in diags] == [(code, message, 6, 14)]


def test_quoted_seconds_get_a_precise_hint() -> None:
    _, (diag,) = check_timeout(doc({"timeout": "600"}))
    assert (diag.code, diag.hint) == ("HZ301", 'write 600 without quotes for seconds, or "600s"')

"""Timeout syntax and range, budget bounds (HZ301-HZ304)."""

from __future__ import annotations

import pytest

from hz.compiler.checks.limits import check_max_usd, check_timeout, parse_duration
from hz.compiler.source import Pos, SourceDoc


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


def loaded(timeout: str) -> SourceDoc:
    from hz.compiler.load.loader import load_bytes

    text = f"hz:\n  contract: 1\n  timeout: {timeout}\n"
    found, diags = load_bytes(text.encode(), "c.yaml")
    assert diags == []
    assert found is not None
    return found


NINES = "9" * 5000
CLIPPED = "9" * 40 + "…"
RANGE_HINT = "a session may run at least 1 second and at most 24 hours (86400 seconds)"


@pytest.mark.parametrize(
    ("written", "code", "message", "hint"),
    [
        (
            f'"{NINES}h"',
            "HZ302",
            f"hz.timeout: {CLIPPED} is outside 1 second … 24 hours",
            RANGE_HINT,
        ),
        (
            NINES,  # unquoted: more digits than Python converts, so loaded as text
            "HZ302",
            f"hz.timeout: {CLIPPED} seconds is outside 1 second … 24 hours",
            RANGE_HINT,
        ),
        (f'"{NINES}"', "HZ301", f"hz.timeout: '{CLIPPED}' is not a duration", RANGE_HINT),
        (
            f'"{NINES}x"',
            "HZ301",
            f"hz.timeout: '{CLIPPED}' is not a duration",
            'write integer seconds or hours, minutes and seconds: "90s", "10m", "1h30m"',
        ),
        (
            "1h90m",
            "HZ301",
            "hz.timeout: '1h90m' is not a duration",
            'minutes after hours and seconds after minutes must be below 60: write "2h30m"',
        ),
        (
            "1m60s",
            "HZ301",
            "hz.timeout: '1m60s' is not a duration",
            'minutes after hours and seconds after minutes must be below 60: write "2m"',
        ),
        (
            "23h60m1s",
            "HZ301",
            "hz.timeout: '23h60m1s' is not a duration",
            "minutes after hours and seconds after minutes must be below 60",
        ),
        (
            '"600"',
            "HZ301",
            "hz.timeout: '600' is not a duration",
            'write 600 without quotes for seconds, or "600s"',
        ),
    ],
)
def test_timeout_refusals_of_loaded_text(written: str, code: str, message: str, hint: str) -> None:
    seconds, diags = check_timeout(loaded(written))
    assert seconds is None
    assert [(d.code, d.message, d.hint, d.line, d.column) for d in diags] == [
        (code, message, hint, 3, 12)
    ]


@pytest.mark.parametrize(
    ("written", "seconds"),
    [("90m", 5400), ("90s", 90), ("1h59m59s", 7199), ('"0000000000000000000000001s"', 1)],
)
def test_single_unit_may_exceed_60(written: str, seconds: int) -> None:
    assert check_timeout(loaded(written)) == (seconds, [])


@pytest.mark.parametrize("text", ["1h60m", "1h0m60s", "2m75s", "1h90m"])
def test_parse_duration_refuses_components_of_60_or_more(text: str) -> None:
    assert parse_duration(text) is None

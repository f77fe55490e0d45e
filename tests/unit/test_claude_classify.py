"""The classification table, over streams recorded from the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.runtime.runners.claude_code.classify import classify, over_budget
from hz.runtime.runners.claude_code.stream import StreamParser, StreamSummary
from hz.runtime.runners.outcome import RunEnd, Verdict

STREAMS = Path(__file__).parent / "claude_streams"


def recorded(name: str) -> tuple[StreamSummary, RunEnd]:
    parser = StreamParser()
    for line in (STREAMS / f"{name}.jsonl").read_text().splitlines():
        parser.feed(line)
    code = int((STREAMS / f"{name}.meta").read_text().split()[0])
    return parser.summary(), RunEnd(exit_code=code, timed_out=False, timeout_seconds=60)


def verdict(name: str, *, allow: bool = True) -> Verdict:
    summary, end = recorded(name)
    return classify(summary, end, allow_api_key_billing=allow, now=0.0)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain", Verdict("completed")),
        ("read", Verdict("completed")),
        ("read_outside", Verdict("completed")),
        ("bash_refused", Verdict("completed")),
        ("structured_valid", Verdict("completed")),
        ("write_denied", Verdict("completed")),
        ("budget", Verdict("budget", "budget_exceeded", "Reached maximum budget ($0.5)")),
        ("max_turns", Verdict("failed", "max_turns", "Reached maximum number of turns (2)")),
        (
            "structured_invalid",
            Verdict(
                "failed",
                "schema_invalid",
                "Failed to provide valid structured output after 5 attempts — last "
                "StructuredOutput error: Output does not match required schema: /n: must be "
                "integer",
            ),
        ),
        ("rate_limited", Verdict("failed", "rate_limited", "the API answered HTTP 429")),
        (
            "rate_limited_retried",
            Verdict("failed", "rate_limited", "the API answered HTTP 429", 1.241),
        ),
        ("unauthorized", Verdict("failed", "auth_misconfigured", "the API answered HTTP 401")),
        ("not_logged_in", Verdict("failed", "auth_misconfigured", "the CLI is not logged in")),
        ("server_error", Verdict("failed", "runtime_error", "the API answered HTTP 500")),
        (
            "write_denied_then_error",
            Verdict("failed", "permission_denied", "permission denied for Write"),
        ),
    ],
)
def test_recorded_runs(name: str, expected: Verdict) -> None:
    assert verdict(name) == expected


def test_env_api_key_without_allow_api_key_billing_is_auth_misconfigured() -> None:
    assert verdict("plain", allow=False) == Verdict(
        "failed",
        "auth_misconfigured",
        "the CLI authenticated with ANTHROPIC_API_KEY although allow_api_key_billing is off",
    )


def test_not_logged_in_is_the_same_either_way() -> None:
    assert verdict("not_logged_in", allow=False) == verdict("not_logged_in", allow=True)


def test_a_result_then_a_lingering_process_is_completed_not_timeout() -> None:
    summary, _ = recorded("plain")
    end = RunEnd(exit_code=None, timed_out=False, timeout_seconds=60)
    assert classify(summary, end, allow_api_key_billing=True, now=0) == Verdict("completed")


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        (
            RunEnd(exit_code=None, timed_out=True, timeout_seconds=4),
            Verdict("timeout", None, "timed out after 4 s"),
        ),
        (
            RunEnd(exit_code=1, timed_out=False, timeout_seconds=4),
            Verdict("failed", "runtime_error", "ended without result (exit code 1)"),
        ),
        (
            RunEnd(exit_code=None, timed_out=False, timeout_seconds=4),
            Verdict("failed", "runtime_error", "ended without result (no exit code)"),
        ),
        (
            RunEnd(exit_code=0, timed_out=False, timeout_seconds=4, output_truncated=True),
            Verdict("failed", "output_limit", "output cap reached before a result"),
        ),
        (
            RunEnd(None, False, 4, launch_error="claude: program not found on PATH"),
            Verdict("failed", "launch_failed", "claude: program not found on PATH"),
        ),
    ],
)
def test_runs_without_a_result(end: RunEnd, expected: Verdict) -> None:
    empty = StreamParser().summary()
    assert classify(empty, end, allow_api_key_billing=True, now=0) == expected


def test_rate_limited_with_a_known_reset_time() -> None:
    parser = StreamParser()
    for line in (STREAMS / "rate_limited.jsonl").read_text().splitlines():
        parser.feed(line)
    parser.feed(
        '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":130}}'
    )
    end = RunEnd(exit_code=1, timed_out=False, timeout_seconds=60)
    got = classify(parser.summary(), end, allow_api_key_billing=True, now=100.0)
    assert got == Verdict("failed", "rate_limited", "the API answered HTTP 429", 30.0)


def test_timeout_while_waiting_out_a_429_is_rate_limited() -> None:
    lines = (STREAMS / "rate_limited_retried.jsonl").read_text().splitlines()
    retry = [line for line in lines if '"api_retry"' in line]
    end = RunEnd(exit_code=None, timed_out=True, timeout_seconds=4)
    parser = StreamParser()
    for line in [lines[0], *retry]:  # init, then the retry notice; the run ends there
        parser.feed(line)
    assert classify(parser.summary(), end, allow_api_key_billing=True, now=0) == Verdict(
        "failed",
        "rate_limited",
        "timed out after 4 s while the CLI waited to retry after HTTP 429",
        1.241,
    )
    # Once the model answered after the retry, a later timeout is an ordinary one.
    parser.feed((STREAMS / "plain.jsonl").read_text().splitlines()[1])
    assert classify(parser.summary(), end, allow_api_key_billing=True, now=0) == Verdict(
        "timeout", None, "timed out after 4 s"
    )


def test_a_budget_stop_that_overshot_says_by_how_much() -> None:
    stop = Verdict("budget", "budget_exceeded", "Reached maximum budget ($0.05)")
    assert over_budget(stop, 0.0712, 0.05).reason == (
        "Reached maximum budget ($0.05); spent $0.0712 against $0.05: the CLI checks between turns"
    )
    assert over_budget(stop, 0.05, 0.05) == stop  # within it: nothing to say
    assert over_budget(stop, None, 0.05) == stop
    failed = Verdict("failed", "runtime_error", "x")
    assert over_budget(failed, 1.0, 0.05) == failed  # only a budget stop

"""A foreground ``hz run`` retried automatically (a rate limit before any tool call) says so as
it starts waiting, counts every attempt in its summary and lists them in its JSON result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hz.cli.run import attempts_part, summary
from hz.runtime.artifacts.result import AgentResult, Attempt
from tests.conftest import Cli
from tests.helpers.ledger_cli import echo_space

LIMITED = (
    '[system.runner]\necho_status = "failed"\necho_failure_kind = "rate_limited"\n'
    "echo_retry_after = 0\n"
)


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    return echo_space(cli, tmp_path, LIMITED)


def run_ids(hz: Cli) -> list[str]:
    listed = json.loads(hz("runs", "list", "--format", "json").stdout)["runs"]
    return [run["id"] for run in reversed(listed)]


def test_each_retry_is_said_and_every_attempt_counted(hz: Cli) -> None:
    done = hz("run", "greet.yaml", "--input", "who=Ann", "--no-receipt")
    assert (done.returncode, done.stdout) == (4, "Say hi to Ann.\n")
    assert done.stderr == (
        "hz: attempt 2 of 3 after rate_limited (echo_status is failed): waiting 0.0 s\n"
        "hz: attempt 3 of 3 after rate_limited (echo_status is failed): waiting 0.0 s\n"
        "hz: failed (rate_limited): echo_status is failed · runner echo · model echo · 1 turn · "
        "0 tool calls · $0.0000 · 3 attempts, $0.0000 in all · 0.0s\n"
    )
    assert [len(i) for i in run_ids(hz)] == [25, 25, 25]


def test_the_json_result_lists_the_attempts(hz: Cli) -> None:
    done = hz("run", "greet.yaml", "--input", "who=Ann", "--no-receipt", "--format", "json")
    assert done.returncode == 4
    result = json.loads(done.stdout)
    assert [
        {k: v for k, v in attempt.items() if k != "duration_seconds"}
        for attempt in result["attempts"]
    ] == [
        {"run_id": run_id, "status": "failed", "failure_kind": "rate_limited", "cost_usd": 0.0}
        for run_id in run_ids(hz)
    ]


def test_quiet_says_nothing_and_one_attempt_lists_none(hz: Cli, tmp_path: Path) -> None:
    done = hz("run", "greet.yaml", "--input", "who=Ann", "--no-receipt", "-q")
    assert (done.returncode, done.stderr) == (4, "")
    (tmp_path / "once.toml").write_text(
        '[capabilities]\nagent_runner = "echo"\n[system]\nmax_attempts = 1\n' + LIMITED
    )
    once = hz("run", "greet.yaml", "--input", "who=Bo", "--no-receipt", "--format", "json",
              HZ_CONFIG=str(tmp_path / "once.toml"))  # fmt: skip
    assert (once.returncode, json.loads(once.stdout)["attempts"]) == (4, [])
    assert "attempt" not in once.stderr


def test_attempts_whose_cost_is_unknown_are_counted_apart() -> None:
    attempts = (
        Attempt(run_id="a", status="failed", failure_kind="rate_limited", cost_usd=0.0125),
        Attempt(run_id="b", status="failed", failure_kind="rate_limited"),
        Attempt(run_id="c", status="completed", cost_usd=0.02),
    )
    assert attempts_part(attempts) == "3 attempts, $0.0325 in all (1 without a reported cost)"
    result = AgentResult(runner="r", status="completed", cost_usd=0.02, attempts=attempts)
    assert summary(result, None) == (
        "hz: completed · runner r · 0 tool calls · $0.0200 · 3 attempts, $0.0325 in all (1 "
        "without a reported cost) · 0.0s"
    )

"""``hz run CONTRACT --format json`` end to end as a real process, with the real ``claude`` binary
bound through an operator configuration file (HZ_CONFIG) and a scripted fake model.

Every case checks the result JSON, the exit status of ``hz run --help``'s table (0 completed,
4 failed, 5 timeout, 6 budget), and that no process of the run outlives it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import (
    MODEL,
    FakeAnthropic,
    api_error,
    hang,
    text,
    tool_results,
    tool_use,
)
from tests.fakes.claude_hz import HzRun, Workspace, contract_text, hz_run, workspace
from tests.helpers.run_request import SCHEMA

pytestmark = pytest.mark.real_cli


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return workspace(tmp_path)


def outcome(run: HzRun) -> tuple[int, str, str | None, str | None]:
    result = run.result
    return run.returncode, result["status"], result["failure_kind"], result["reason"]


def assert_nothing_left(run: HzRun) -> None:
    assert run.groups, "the watcher saw the CLI's process group"
    assert run.left == ()
    assert "unknown option" not in run.result["stderr_tail"]


def test_plain_answer(hz_argv: list[str], space: Workspace) -> None:
    with FakeAnthropic([text("Hello there")]) as api:
        run = hz_run(hz_argv, space, api)
    assert outcome(run) == (0, "completed", None, None), run.stderr
    assert (run.result["runner"], run.result["model"], run.result["draft"]) == (
        "claude-code",
        MODEL,
        "Hello there",
    )
    assert api.requests[0]["messages"][0]["content"] == "Question: What is in notes.txt?\n"
    assert "Never write files." in json.dumps(api.requests[0])
    assert [p.name for p in (space.tmp / "receipts").glob("*.json")] == ["000001-notes-reader.json"]
    assert_nothing_left(run)


def test_read_round_trip(hz_argv: list[str], space: Workspace) -> None:
    notes = str(space.work / "notes.txt")
    with FakeAnthropic([tool_use("Read", {"file_path": notes}), text("marmalade")]) as api:
        run = hz_run(hz_argv, space, api)
    assert outcome(run) == (0, "completed", None, None), run.stderr
    assert (run.result["draft"], run.result["turns"]) == ("marmalade", 2)
    assert run.result["tool_calls"] == [
        {"name": "Read", "input": {"file_path": notes}, "is_error": False}
    ]
    [sent] = tool_results(api.requests)
    assert "the secret word is marmalade" in json.dumps(sent)
    assert_nothing_left(run)


def test_bash_under_a_read_grep_profile_is_reported_not_run(
    hz_argv: list[str], space: Workspace
) -> None:
    marker = space.work / "pwned"
    command = {"command": f"touch {marker}"}
    with FakeAnthropic([tool_use("Bash", command), text("I could not run it")]) as api:
        run = hz_run(hz_argv, space, api)
    assert outcome(run) == (0, "completed", None, None), run.stderr
    assert not marker.exists()
    assert (run.result["draft"], run.result["turns"]) == ("I could not run it", 2)
    assert run.result["tool_calls"] == [{"name": "Bash", "input": command, "is_error": True}]
    assert run.result["tool_call_counts"] == {"Bash": 1}
    [sent] = tool_results(api.requests)
    assert sent["is_error"] is True
    assert "No such tool available: Bash" in json.dumps(sent)
    assert_nothing_left(run)


def test_endless_tool_calls_end_at_the_contract_timeout(
    hz_argv: list[str], space: Workspace
) -> None:
    with FakeAnthropic([tool_use("Grep", {"pattern": "x"})], repeat_last=True) as api:
        run = hz_run(hz_argv, space, api, timeout=4)
    assert outcome(run) == (5, "timeout", None, "timed out after 4 s"), run.stderr
    assert run.result["tool_call_counts"]["Grep"] >= 2
    assert_nothing_left(run)
    assert run.elapsed < 4 + 2 + 20  # hz's own start-up included; generous on a shared machine


def test_budget_exhaustion_keeps_the_cost(hz_argv: list[str], space: Workspace) -> None:
    expensive = tool_use("Grep", {"pattern": "x"}, output_tokens=2_000_000)
    with FakeAnthropic([expensive, text("unreachable")]) as api:
        run = hz_run(hz_argv, space, api)
    cost = run.result["cost_usd"]
    assert cost > 0.5
    # The CLI checks its budget between turns: the turn that crossed it is paid in full.
    reason = (
        f"Reached maximum budget ($0.5); spent ${cost:.4f} against $0.50: the CLI checks "
        "between turns"
    )
    assert outcome(run) == (6, "budget", "budget_exceeded", reason), run.stderr
    assert run.stderr.startswith(f"hz: budget (budget_exceeded): {reason} · runner claude-code")
    env = {**os.environ, "HZ_CONFIG": str(space.config)}
    spent = subprocess.run([*hz_argv, "runs", "cost"], capture_output=True, text=True, env=env)
    run_id = json.loads(
        subprocess.run(
            [*hz_argv, "runs", "list", "--format", "json"], capture_output=True, text=True, env=env
        ).stdout
    )["runs"][0]["id"]
    assert spent.stdout.splitlines()[-1] == (
        f"over budget: {run_id} (notes-reader) spent ${cost:.4f} against $0.50: the CLI checks "
        "between turns"
    )
    assert len(api.requests) == 1
    assert (run.result["draft"], run.result["turns"]) == (None, 1)
    # The CLI stopped before running the tool: its outcome is unknown, not an error.
    assert run.result["tool_calls"] == [
        {"name": "Grep", "input": {"pattern": "x"}, "is_error": None}
    ]
    assert run.result["usage"]["output_tokens"] == 2_000_000
    assert run.result["cost_usd"] > 0.5
    [receipt] = (space.tmp / "receipts").glob("*.json")
    # The receipt keeps the CLI's reported cost of the stopped run too.
    assert json.loads(receipt.read_text())["cost_usd"] == run.result["cost_usd"]
    assert_nothing_left(run)


def test_rate_limited(hz_argv: list[str], space: Workspace) -> None:
    limited = api_error(429, "rate_limit_error", "Slow down", [("retry-after", "7")])
    with FakeAnthropic([limited]) as api:
        run = hz_run(hz_argv, space, api)
    assert outcome(run) == (4, "failed", "rate_limited", "the API answered HTTP 429"), run.stderr
    assert len(api.requests) == 1
    # Without retries the pinned CLI reports nothing of the retry-after header.
    assert (run.result["retry_after_seconds"], run.result["draft"]) == (None, None)
    assert_nothing_left(run)


def test_unauthorized(hz_argv: list[str], space: Workspace) -> None:
    with FakeAnthropic([api_error(401, "authentication_error", "invalid x-api-key")]) as api:
        run = hz_run(hz_argv, space, api)
    assert outcome(run) == (4, "failed", "auth_misconfigured", "the API answered HTTP 401"), (
        run.stderr
    )
    assert len(api.requests) == 1
    assert run.result["draft"] is None
    assert_nothing_left(run)


def test_structured_output_valid(hz_argv: list[str], space: Workspace) -> None:
    with FakeAnthropic([tool_use("StructuredOutput", {"n": 3})]) as api:
        run = hz_run(hz_argv, space, api, schema=SCHEMA)
    assert outcome(run) == (0, "completed", None, None), run.stderr
    assert run.result["structured_output"] == {"n": 3}
    assert json.loads(run.result["draft"]) == {"n": 3}
    # The contract's schema reached the model as the CLI's StructuredOutput tool.
    [offered] = [t for t in api.requests[0]["tools"] if t["name"] == "StructuredOutput"]
    assert offered["input_schema"] == SCHEMA
    assert_nothing_left(run)


def test_structured_output_invalid(hz_argv: list[str], space: Workspace) -> None:
    wrong = tool_use("StructuredOutput", {"n": "three"})
    with FakeAnthropic([wrong], repeat_last=True) as api:
        run = hz_run(hz_argv, space, api, schema=SCHEMA)
    assert outcome(run) == (
        4,
        "failed",
        "schema_invalid",
        "Failed to provide valid structured output after 5 attempts — last StructuredOutput "
        "error: Output does not match required schema: /n: must be integer",
    ), run.stderr
    assert (run.result["draft"], run.result["structured_output"]) == (None, None)
    assert_nothing_left(run)


def test_api_hanging_mid_stream_is_a_timeout(hz_argv: list[str], space: Workspace) -> None:
    with FakeAnthropic([hang(after_events=2)]) as api:
        run = hz_run(hz_argv, space, api, timeout=3)
        assert len(api.requests) == 1
    assert outcome(run) == (5, "timeout", None, "timed out after 3 s"), run.stderr
    assert (run.result["draft"], run.result["turns"], run.result["tool_calls"]) == (None, 0, [])
    assert_nothing_left(run)
    assert run.elapsed < 3 + 2 + 20


def test_hz_doctor_checks_the_pinned_cli(hz_argv: list[str], space: Workspace) -> None:
    env = {**os.environ, "HZ_CONFIG": str(space.config), "ANTHROPIC_API_KEY": "test-key"}
    done = subprocess.run(
        [*hz_argv, "doctor"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert "ok claude version: 2.1.332 (minimum 2.1.332)" in lines
    assert "ok claude login: API key from ANTHROPIC_API_KEY (billed to the API account)" in lines


def test_hz_runs_names_a_widened_session(hz_argv: list[str], space: Workspace) -> None:
    """Issue 10: a session widened by the operator's network_tools is named by hz runs."""
    with space.config.open("a") as f:  # the file ends in [system.runner]
        f.write('network_tools = ["WebFetch"]\n\n[system.policy]\n')
        f.write('require = ["timeout", "file_writes", "sub_agents"]\n')
    contract = space.tmp / "fetch.yaml"
    contract.write_text(
        contract_text(60)
        .replace("name: notes-reader", "name: fetcher")
        .replace("tools: [Read, Grep]", "tools: [Read, WebFetch]")
    )
    env = {
        **os.environ,
        "HZ_CONFIG": str(space.config),
        "HZ_STATE_DIR": str(space.tmp / "state"),
        "ANTHROPIC_API_KEY": "test-key",
    }

    def hz(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*hz_argv, *args], capture_output=True, text=True, env=env, timeout=120, check=False
        )

    with FakeAnthropic([text("ok")]) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        done = hz(
            "run", str(contract), "--input", "question=Q", "--workdir", str(space.work),
            "--no-receipt", "--format", "json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session_widened"] == ["WebFetch"]
    listed = hz("runs", "list")
    _header, line = listed.stdout.splitlines()
    host = socket.gethostname()  # where it ran: a foreground run has no worker
    assert line.split()[2:] == ["completed", "fetcher", "$0.0002", host, "widened:", "WebFetch"]
    shown = json.loads(hz("runs", "show", line.split()[0], "--format", "json").stdout)
    assert shown["session_widened"] == ["WebFetch"]
    text_shown = hz("runs", "show", line.split()[0]).stdout.splitlines()
    assert "widened:     WebFetch (network)" in text_shown


def test_the_same_contract_run_five_times_is_five_runs(
    hz_argv: list[str], space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: without a request key every hz run is a new run — after switching the runner
    from echo to claude-code, after a failure, with another fake model mode each time."""
    state = space.tmp / "state"
    monkeypatch.setenv("HZ_STATE_DIR", str(state))
    bound = space.config.read_text()
    space.config.write_text(bound.replace('agent_runner = "claude-code"', 'agent_runner = "echo"'))
    notes = str(space.work / "notes.txt")
    expensive = tool_use("Grep", {"pattern": "x"}, output_tokens=2_000_000)
    limited = api_error(429, "rate_limit_error", "Slow down", [("retry-after", "7")])
    ended = []
    for replies in (
        [text("unused: the echo runner answers")],
        [text("Hello there")],
        [limited],
        [tool_use("Read", {"file_path": notes}), text("marmalade")],
        [expensive, text("unreachable")],
    ):
        with FakeAnthropic(replies) as api:
            run = hz_run(hz_argv, space, api)
        assert "request key" not in run.stderr
        ended.append((*outcome(run), run.result["runner"], run.result["draft"]))
        space.config.write_text(bound)  # the first run's echo, claude-code from then on
    assert ended == [
        (0, "completed", None, None, "echo", ended[0][5]),
        (0, "completed", None, None, "claude-code", "Hello there"),
        (4, "failed", "rate_limited", "the API answered HTTP 429", "claude-code", None),
        (0, "completed", None, None, "claude-code", "marmalade"),
        (
            6,
            "budget",
            "budget_exceeded",
            "Reached maximum budget ($0.5); spent $40.0000 against $0.50: the CLI checks "
            "between turns",
            "claude-code",
            None,
        ),
    ]
    assert ended[0][5]  # the echo runner's answer
    receipts = sorted(p.name for p in (space.tmp / "receipts").glob("*.json"))
    assert receipts == [f"00000{n}-notes-reader.json" for n in range(1, 6)]
    listed = subprocess.run(
        [*hz_argv, "runs", "list", "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "HZ_CONFIG": str(space.config)},
        timeout=60,
        check=True,
    )
    runs = json.loads(listed.stdout)["runs"][::-1]  # listed newest first
    assert [(run["state"], run["runner"]) for run in runs] == [
        ("completed", "echo"),
        ("completed", "claude-code"),
        ("failed", "claude-code"),
        ("completed", "claude-code"),
        ("budget", "claude-code"),
    ]
    assert len({run["id"] for run in runs}) == len({run["request_key"] for run in runs}) == 5

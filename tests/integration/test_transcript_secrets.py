"""Transcripts of real runs keep no secret: the fake agent dumps its whole environment as its
answer, with secrets planted in hz's environment (hz in process, the agents real processes),
through the command runner."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import Cli, CliResult, default_receipt_dir
from tests.helpers.appserver_env import (
    THREAD,
    TURN_STARTED,
    answer,
    command_item,
    fake,
    turn,
)
from tests.helpers.contracts import contract
from tests.helpers.in_process import leaves_nothing
from tests.helpers.operator import AGENT

PLANTED = "planted-secret-5f1e0c9a"  # never passed to the agent
PASSED = "passed-secret-77aa01bc"  # passed on purpose, under a secret-looking name


def _run(
    cli: Cli, tmp_path: Path, *agent_args: str, hz_args: tuple[str, ...] = ("-q",)
) -> CliResult:
    command = [sys.executable, AGENT, *agent_args, "--contract-file={contract_file}"]
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\n"
        'command_env = ["HZ_TEST_API_KEY"]\n'
        "command_enforces_read_only = true\n"
        'command_read_only_tools = ["Read"]\n'
    )
    (tmp_path / "greet.yaml").write_text(contract(timeout="60s"))
    env = {
        "HZ_CONFIG": str(tmp_path / "operator.toml"),
        "AWS_SECRET_ACCESS_KEY": PLANTED,
        "PLAIN_VALUE": PLANTED,  # not secret-looking: only the allowlist keeps it out
        "HZ_TEST_API_KEY": PASSED,
    }
    with leaves_nothing("hz run"):
        return cli("run", "greet.yaml", "--input", "who=Ann", *hz_args, cwd=tmp_path, env=env)


def test_an_agent_echoing_its_environment_leaks_no_secret(cli: Cli, tmp_path: Path) -> None:
    done = _run(cli, tmp_path, "env")
    assert done.returncode == 0, done.stderr
    # The draft is redacted as well: it is what CI posts (docs/security.md).
    assert json.loads(done.stdout)["HZ_TEST_API_KEY"] == "[redacted HZ_TEST_API_KEY]"
    transcript = (default_receipt_dir() / "000001-greet.transcript.jsonl").read_text()
    header, *_, end = (json.loads(line) for line in transcript.splitlines())
    assert (end["type"], end["status"]) == ("end", "completed")
    assert json.loads(end["text"])["HZ_TEST_API_KEY"] == "[redacted HZ_TEST_API_KEY]"
    assert header["redacted"] == 1
    for path in default_receipt_dir().iterdir():
        if path.is_file():
            text = path.read_text()
            assert PLANTED not in text, path.name
            assert PASSED not in text, path.name


def test_a_failing_agent_leaves_its_stderr_tail_redacted(cli: Cli, tmp_path: Path) -> None:
    done = _run(cli, tmp_path, "fail", "--code", "3", "--stderr", f"boom {PASSED}\x1b[2J")
    assert done.returncode != 0
    shown = cli("receipts", "show", str(default_receipt_dir()), "1", "--transcript")
    assert shown.returncode == 0, shown.stderr
    tail = shown.stdout.split("stderr (tail):\n", 1)[1]
    assert tail == "    boom [redacted HZ_TEST_API_KEY]\\x1b[2J\n"
    assert PASSED not in shown.stdout
    assert "\x1b" not in shown.stdout


def test_a_secret_in_a_failing_agents_stderr_is_redacted_where_hz_shows_or_keeps_it(
    cli: Cli, tmp_path: Path
) -> None:
    done = _run(
        cli, tmp_path, "fail", "--code", "3", "--stderr", f"auth failed for {PASSED}",
        hz_args=("--format", "json"),
    )  # fmt: skip
    assert done.returncode == 4
    # The summary on stderr (a CI log), the result on stdout, the ledger and the receipt.
    assert done.stderr.splitlines()[1:] == [
        "  the agent's stderr, last lines:",
        "    auth failed for [redacted HZ_TEST_API_KEY]",
    ]
    assert json.loads(done.stdout)["stderr_tail"] == "auth failed for [redacted HZ_TEST_API_KEY]"
    state = default_receipt_dir().parent
    kept = [path for path in state.rglob("*") if path.is_file()]
    assert {path.name for path in kept} >= {"ledger.sqlite3", "000001-greet.json"}
    assert [path.name for path in kept if PASSED.encode() in path.read_bytes()] == []


def test_a_secret_the_agent_echoed_is_redacted_in_every_field_of_the_json_result(
    cli: Cli, tmp_path: Path
) -> None:
    # codex_env passes the key to the CLI; a (scripted) session then echoes it in a tool
    # call's command, a method name, a streamed delta split in two and its answer.
    delta = "item/agentMessage/delta"
    half = len(PASSED) // 2
    steps = [
        *TURN_STARTED,
        command_item("c1", f"echo {PASSED}"),
        {"method": f"x/{PASSED}", "params": {}},
        {"method": delta, "params": {"threadId": THREAD, "delta": PASSED[:half]}},
        {"method": delta, "params": {"threadId": THREAD, "delta": PASSED[half:]}},
        answer(f"the key is {PASSED}"),
        turn("completed"),
    ]
    program, _ = fake(tmp_path, steps)
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "codex-app-server"\n[system.runner]\n'
        f'codex_executable = "{program}"\ncodex_env = ["HZ_TEST_API_KEY"]\n'
    )
    (tmp_path / "greet.yaml").write_text(contract(timeout="60s"))
    env = {"HZ_CONFIG": str(tmp_path / "operator.toml"), "HZ_TEST_API_KEY": PASSED}

    def hz(*args: str) -> CliResult:
        with leaves_nothing(f"hz {args[0]}"):
            return cli(*args, cwd=tmp_path, env=env)

    done = hz("run", "greet.yaml", "--input", "who=Ann", "--format", "json", "-q")
    assert done.returncode == 0, done.stderr
    mark = "[redacted HZ_TEST_API_KEY]"
    result = json.loads(done.stdout)
    assert (result["draft"], result["tool_calls"], result["protocol_notes"]) == (
        f"the key is {mark}",
        [{"name": "command_execution", "input": {"command": f"echo {mark}"}, "is_error": False}],
        {f"unknown notification x/{mark}": 1},
    )
    shown = hz(
        "runs", "show", result_id(hz("runs", "list", "--format", "json")), "--format", "json"
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["result"]["tool_calls"] == result["tool_calls"]
    state = default_receipt_dir().parent
    kept = [path for path in state.rglob("*") if path.is_file()]
    assert {path.name for path in kept} >= {"ledger.sqlite3", "000001-greet.json"}
    for data in (done.stdout.encode(), shown.stdout.encode(), *(p.read_bytes() for p in kept)):
        assert PASSED.encode() not in data
        assert PASSED[:half].encode() not in data  # the deltas are not read: none is kept
        assert PASSED[half:].encode() not in data


def result_id(listed: CliResult) -> str:
    [run] = json.loads(listed.stdout)["runs"]
    return str(run["id"])

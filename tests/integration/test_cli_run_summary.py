"""What ``hz run`` tells a person: the summary line leaves out what the runner did not report,
a failed run shows the agent's last stderr lines, and a dry run warns when the program the run
would start is missing. hz in process driving the fake agent (a real process) through the
command runner."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from hz.cli.run import summary
from hz.runtime.artifacts.result import AgentResult
from tests.conftest import Cli, CliResult
from tests.helpers.in_process import leaves_nothing

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")

CONTRACT = """\
hz:
  contract: 1
  name: greet
  timeout: 60s
  agent:
    max_usd: 0.5
contract: Be brief.
prompt: Say hi.
"""


def hz(cli: Cli, tmp_path: Path, command: list[str], *args: str) -> CliResult:
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps([*command, '--contract-file={contract_file}'])}\n"
        "command_enforces_read_only = true\n"
    )
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    env = {"HZ_CONFIG": str(tmp_path / "operator.toml")}
    with leaves_nothing("hz run"):
        return cli("run", "greet.yaml", "--no-receipt", *args, cwd=tmp_path, env=env)


def _duration(text: str) -> str:
    return re.sub(r" · \d+\.\ds", " · Ds", text)


def test_a_failed_run_shows_the_agents_last_stderr_lines(cli: Cli, tmp_path: Path) -> None:
    lines = "\n".join(f"line {n}" for n in range(1, 13))
    done = hz(cli, tmp_path, [sys.executable, AGENT, "fail", f"--stderr={lines}\n", "--code=3"])
    assert done.returncode == 4
    assert _duration(done.stderr) == (
        "hz: failed (runtime_error): the command exited with code 3 · runner command · "
        "0 tool calls · Ds · not enforced: budget, tools, turns\n"
        "  the agent's stderr, last lines:\n" + "".join(f"    line {n}\n" for n in range(3, 13))
    )


def test_values_the_runner_did_not_report_are_left_out(cli: Cli, tmp_path: Path) -> None:
    done = hz(cli, tmp_path, [sys.executable, AGENT, "echo"])
    assert (done.returncode, done.stdout) == (0, "Say hi.\n")
    assert _duration(done.stderr) == (
        "hz: completed · runner command · 0 tool calls · Ds · not enforced: budget, tools, turns\n"
    )


def test_at_the_turn_limit_the_summary_does_not_contradict_the_reason() -> None:
    result = AgentResult(
        runner="claude-code",
        model="m",
        status="failed",
        failure_kind="max_turns",
        reason="Reached maximum number of turns (3)",
        turns=4,
        cost_usd=0.01,
        duration_seconds=2.0,
    )
    assert summary(result, None) == (
        "hz: failed (max_turns): Reached maximum number of turns (3) · runner claude-code · "
        "model m · 0 tool calls · $0.0100 · 2.0s"
    )


def test_dry_run_warns_when_the_program_is_missing(cli: Cli, tmp_path: Path) -> None:
    done = hz(cli, tmp_path, ["no-such-agent-hz"], "--dry-run")
    assert done.returncode == 0
    assert done.stdout.splitlines()[:3] == [
        "hz run --dry-run: nothing was started",
        "  runner:       command",
        "  argv:         no-such-agent-hz '--contract-file=<private>/contract.md'",
    ]
    assert done.stderr == (
        "hz: warning: no-such-agent-hz: program not found on PATH; the run would fail to start "
        "(launch_failed)\n"
        "  hint: hz doctor checks the bound runner\n"
    )
    missing = hz(cli, tmp_path, [str(tmp_path / "bin" / "agent")], "--dry-run", "--format", "json")
    assert json.loads(missing.stdout)["argv"][0] == str(tmp_path / "bin" / "agent")
    assert missing.stderr.splitlines()[0] == (
        f"hz: warning: {tmp_path}/bin/agent: program not found; the run would fail to start "
        "(launch_failed)"
    )
    present = hz(cli, tmp_path, [sys.executable, AGENT, "echo"], "--dry-run")
    assert (present.returncode, present.stderr) == (0, "")
    assert "  stdin:        the prompt, then closed" in present.stdout.splitlines()


def test_a_widened_session_is_named_in_the_summary() -> None:
    result = AgentResult(
        runner="claude-code",
        status="completed",
        turns=1,
        duration_seconds=1.0,
        session_widened=("WebFetch",),
    )
    assert summary(result, None) == (
        "hz: completed · runner claude-code · 1 turn · 0 tool calls · 1.0s · "
        "session widened: WebFetch (network)"
    )


def test_output_past_the_cap_is_named_in_the_summary() -> None:
    result = AgentResult(
        runner="codex-app-server",
        status="completed",
        turns=1,
        duration_seconds=1.0,
        output_truncated=True,
        protocol_notes={
            "tool calls left out (output cap)": 3,
            "tool inputs left out (output cap)": 2,
            "unknown notification x": 1,
        },
    )
    assert summary(result, None) == (
        "hz: completed · runner codex-app-server · 1 turn · 0 tool calls · 1.0s · "
        "output over the cap: 5 left out"
    )
    cut = result.model_copy(update={"protocol_notes": {}})
    assert summary(cut, None).endswith(" · 1.0s · output cut")


def test_the_agents_stderr_cannot_write_a_workflow_command_or_drive_the_terminal(
    cli: Cli, tmp_path: Path
) -> None:
    # GitHub reads `::command::` after leading blanks, and `##[command]` anywhere in a line.
    lines = "::warning::x\n  ::set-output name=a::b\nsee ##[add-mask]s\n\x1b[31mred\x9b2J\u202egnp."
    done = hz(cli, tmp_path, [sys.executable, AGENT, "fail", f"--stderr={lines}\n", "--code=3"])
    assert done.returncode == 4
    assert _duration(done.stderr).split("\n", 1)[1] == (
        "  the agent's stderr, last lines:\n"
        "    \\x3a:warning::x\n"
        "      \\x3a:set-output name=a::b\n"
        "    see ##\\x5badd-mask]s\n"
        "    \\x1b[31mred\\x9b2J\\u202egnp.\n"
    )
    assert not any(line.lstrip().startswith("::") for line in done.stderr.splitlines())


def test_the_reason_and_model_stay_on_the_summary_line() -> None:
    result = AgentResult(
        runner="claude-code",
        model="m\n::error::x",
        status="failed",
        failure_kind="runtime_error",
        reason="API Error\n::warning::y\x1b[2J",
        duration_seconds=2.0,
    )
    assert summary(result, None) == (
        "hz: failed (runtime_error): API Error\\n::warning::y\\x1b[2J · runner claude-code · "
        "model m\\n::error::x · 0 tool calls · 2.0s"
    )

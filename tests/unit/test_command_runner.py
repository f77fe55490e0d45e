"""The command runner's refusals, dry-run plan and doctor checks (nothing is started)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.execution.doctor import runner_checks
from hz.runtime.runners.command.runner import CommandRunner
from hz.runtime.runners.command.settings import CommandSettings
from hz.runtime.runners.protocol import Capabilities, Check, RunPlan
from tests.helpers.run_request import run_request

C = "--contract={contract_file}"
REFUSAL = (
    "refuses to run until [system.runner] command_enforces_read_only = true "
    "(hz cannot check that the command restricts its agent to read-only tools)"
)


def make(**settings: Any) -> CommandRunner:
    return CommandRunner(
        CommandSettings.from_table(
            {"command": ["/opt/agent/bin/agent", C], "command_enforces_read_only": True, **settings}
        )
    )


def plan(r: CommandRunner, workdir: Path | str | None, **kw: Any) -> RunPlan:
    return r.plan(run_request(workdir, prompt="prompt", timeout=90, max_usd=0.5, **kw))


@pytest.mark.parametrize("method", ["plan", "run"])
def test_refuses_until_read_only_is_declared(tmp_path: Path, method: str) -> None:
    r = make(command_enforces_read_only=False)
    with pytest.raises(RunnerError) as e:
        getattr(r, method)(run_request(tmp_path, timeout=5))
    assert e.value.message == f"the command runner {REFUSAL}"
    assert e.value.hint == (
        "set it in your user or site configuration once the command enforces read-only tools itself"
    )


def test_refuses_tools_not_listed_as_read_only(tmp_path: Path) -> None:
    r = make(command_read_only_tools=["Read", "Grep"])
    with pytest.raises(RunnerError) as e:
        plan(r, tmp_path, tools=("Read", "Bash", "Write"))
    assert e.value.message == (
        "the command runner may only pass tools listed in [system.runner] "
        "command_read_only_tools (Read, Grep); not listed: Bash, Write"
    )
    with pytest.raises(RunnerError) as e:
        plan(make(), tmp_path, tools=("Read",))
    assert e.value.message == (
        "the command runner may only pass tools listed in [system.runner] "
        "command_read_only_tools (none); not listed: Read"
    )


def test_refuses_an_unbound_working_directory() -> None:
    with pytest.raises(RunnerError) as e:
        plan(make(), None)
    assert e.value.message == "the tool profile has no working directory bound"


def test_plan_shows_argv_files_and_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "t")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.delenv("LANG", raising=False)
    monkeypatch.delenv("TMPDIR", raising=False)
    for name in [n for n in os.environ if n.startswith("LC_")]:
        monkeypatch.delenv(name)
    r = make(
        command=["/opt/agent/bin/agent", "--prompt={prompt_file}", C, "-o", "{output_file}",
                 "--usd={max_usd}", "--secs={timeout_seconds}", "--tools={tools}"],
        command_read_only_tools=["Read"],
        command_env=["AGENT_TOKEN"],
    )  # fmt: skip
    workdir = str(tmp_path.resolve())
    assert plan(r, tmp_path, tools=("Read",)) == RunPlan(
        argv=(
            "/opt/agent/bin/agent",
            "--prompt=<private>/prompt.md",
            "--contract=<private>/contract.md",
            "-o",
            "<private>/output.txt",
            "--usd=0.5",
            "--secs=90",
            "--tools=Read",
        ),
        cwd=workdir,
        env_names=("AGENT_TOKEN", "HOME", "PATH"),
        files=(
            ("prompt", "<private>/prompt.md"),
            ("contract", "<private>/contract.md"),
            ("output", "<private>/output.txt"),
        ),
        stdin="/dev/null",
        limits_unenforced=("turns",),
    )


def test_plan_without_prompt_file_sends_the_prompt_on_stdin(tmp_path: Path) -> None:
    p = plan(make(), tmp_path)
    assert (p.stdin, p.files, p.limits_unenforced) == (
        "the prompt, then closed",
        (("contract", "<private>/contract.md"),),
        ("budget", "tools", "turns"),
    )


def test_program_is_resolved_on_path_and_relative_paths_against_our_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "bin" / "my-agent"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin")
    assert plan(make(command=["my-agent", C]), tmp_path).argv[0] == str(tool)
    monkeypatch.chdir(tmp_path)
    assert plan(make(command=["bin/my-agent", C]), "/").argv[0] == str(tool)


def test_capabilities() -> None:
    assert CommandRunner.name == "command"
    assert CommandRunner.capabilities(None) == Capabilities(
        timeout="hard",
        budget="advisory",
        tools="advisory",
        turns="unsupported",
        structured_output="unsupported",
    )


def test_doctor_degraded_until_read_only_is_declared(tmp_path: Path) -> None:
    tool = tmp_path / "agent"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(stat.S_IRWXU)
    assert CommandRunner.doctor(CommandSettings.from_table({"command": [str(tool), C]})) == [
        Check("command runner settings", "ok", "valid"),
        Check("command executable", "ok", str(tool)),
        Check("command read-only", "degraded", REFUSAL),
    ]
    checks = CommandRunner.doctor(
        CommandSettings.from_table({"command": [str(tool), C], "command_enforces_read_only": True})
    )
    assert checks[2] == Check("command read-only", "ok", "declared by command_enforces_read_only")


def test_doctor_fails_on_a_missing_or_non_executable_program(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    ok = {"command_enforces_read_only": True}
    assert CommandRunner.doctor(CommandSettings.from_table({"command": [str(plain), C], **ok}))[
        1
    ] == Check("command executable", "failed", f"{plain}: not executable")
    assert CommandRunner.doctor(
        CommandSettings.from_table({"command": [str(tmp_path / "nope"), C], **ok})
    )[1] == Check("command executable", "failed", f"{tmp_path / 'nope'}: not found")
    assert CommandRunner.doctor(
        CommandSettings.from_table({"command": ["hz-no-such-agent", C], **ok})
    )[1] == Check("command executable", "failed", "hz-no-such-agent: not found on PATH")


def test_doctor_reports_invalid_settings_as_a_failed_check(tmp_path: Path) -> None:
    operator = tmp_path / "operator.toml"
    operator.write_text('[capabilities]\nagent_runner = "command"\n')
    assert runner_checks({"HZ_CONFIG": str(operator)}, tmp_path)[-1] == Check(
        "command runner settings",
        "failed",
        "[system.runner] command is not set: the command runner needs the agent's command line",
    )

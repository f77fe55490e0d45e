"""A bare program name is looked up only in the absolute PATH entries: an empty or relative
entry ("the current directory") would run a program a repository planted there."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.runtime.process.bounded import Limits, run_bounded, search_path
from hz.runtime.runners.claude_code.runner import ClaudeCodeRunner
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.command.runner import CommandRunner
from hz.runtime.runners.command.settings import CommandSettings
from tests.helpers.run_request import run_request

PATHS = [
    "/usr/bin:/bin:",
    ":/usr/bin:/bin",
    "/usr/bin::/bin",
    "/usr/bin:.:/bin",
    "bin:/usr/bin:/bin",
]


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding ``claude`` and ``acme-agent`` that leave a marker when run; it is
    both hz's working directory and the agent's, and ``bin/`` below it holds them again."""
    for where in (tmp_path, tmp_path / "bin"):
        where.mkdir(exist_ok=True)
        for name in ("claude", "acme-agent"):
            program = where / name
            program.write_text(f"#!/bin/sh\ntouch {tmp_path}/PLANTED-RAN\necho planted\n")
            program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("path", PATHS)
def test_search_path_keeps_only_absolute_entries(path: str) -> None:
    assert search_path({"PATH": path}) == "/usr/bin:/bin"


@pytest.mark.parametrize("path", PATHS)
def test_chokepoint_does_not_run_a_planted_program(planted: Path, path: str) -> None:
    outcome = run_bounded(
        ["claude", "--version"],
        stdin=None,
        cwd=str(planted),
        env={"PATH": path},
        limits=Limits(timeout=10),
    )
    assert outcome.launch_error == "claude: program not found on PATH"
    assert not (planted / "PLANTED-RAN").exists()


def test_chokepoint_still_finds_programs_on_absolute_entries(planted: Path) -> None:
    outcome = run_bounded(
        ["true"],
        stdin=None,
        cwd=str(planted),
        env={"PATH": "/usr/bin:/bin:"},
        limits=Limits(timeout=10),
    )
    assert (outcome.launch_error, outcome.exit_code) == (None, 0)


@pytest.mark.parametrize("path", PATHS)
def test_claude_runner_does_not_run_a_planted_claude(
    planted: Path, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path)
    runner = ClaudeCodeRunner(ClaudeSettings.from_table({}))
    result = runner.run(run_request(planted))
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "launch_failed",
        "claude: program not found on PATH",
    )
    assert runner.plan(run_request(planted)).argv[0] == "claude"
    assert not (planted / "PLANTED-RAN").exists()


def test_command_runner_does_not_run_a_planted_program(
    planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin:")
    settings = CommandSettings.from_table(
        {
            "command": ["acme-agent", "--contract={contract_file}"],
            "command_enforces_read_only": True,
        }
    )
    result = CommandRunner(settings).run(run_request(planted))
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "launch_failed",
        "the command did not start: acme-agent: program not found on PATH",
    )
    assert not (planted / "PLANTED-RAN").exists()

"""The runner conformance kit: tests any runner — built in or a plugin — must pass.

Subclass ``RunnerConformance`` in your own test suite and say how to point your runner at a
program (``settings_for``); the kit puts a hostile fake agent there (``fake_agent``) and runs
the runner through ``hz.runtime.execution.execute.execute`` in each scenario:

- **bounded**: an agent that ignores SIGTERM and leaves a child behind ends within the
  timeout plus the kill grace, as a ``timeout`` (or another typed outcome), and no process
  of the run survives;
- **secrets**: credentials planted in hz's environment (``PLANTED``) never reach the agent;
- **typed outcomes**: a crash is ``failed`` with a ``failure_kind``; a flood of output and a
  garbage stream (invalid UTF-8, NULs, escapes, ``NaN``, JSON 100,000 levels deep) end as a
  result — never an exception, never a traceback;
- **descriptor**: ``descriptor(settings)`` marks every capability with evidence or a reason,
  and every cited test exists under ``repository``.

docs/runners/plugins.md shows a plugin author how; tests/integration/test_conformance.py runs
it for hz's own runners.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.models import Budget, OutputSpec, ToolProfile
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.execution.execute import execute
from hz.runtime.runners.capabilities import NAMES, descriptor_of
from hz.runtime.runners.protocol import RunRequest
from hz.runtime.testing import fake_agent

#: Planted in hz's environment for every scenario; none of the values may reach the agent.
PLANTED: dict[str, str] = {
    "HZ_CREDENTIAL_CONFORMANCE": "hz-credential-planted-1",
    "ANTHROPIC_API_KEY": "sk-ant-planted-2",
    "OPENAI_API_KEY": "sk-planted-3",
    "AWS_SECRET_ACCESS_KEY": "aws-planted-4",
    "GITHUB_TOKEN": "ghp_planted5",
    "LC_SECRET": "lc-planted-6",
    "HTTPS_PROXY": "http://planted-7.invalid:1",
}
#: Beyond the run's timeout: the kill grace (2 s) and draining.
SLACK = 12.0
_NODE = re.compile(r"(?P<path>[\w./-]+\.py)::(?P<name>\w+)(\[[^\]]*\])?")


class RunnerConformance:
    """Subclass it with ``runner_class`` and ``settings_for``; pytest collects the tests."""

    #: The runner class under test (``hz.runtime.runners.protocol.RunnerClass``).
    runner_class: ClassVar[Any]
    #: Where the tests cited as evidence live (None: the evidence is not checked).
    repository: ClassVar[Path | None] = None
    #: The scenarios to run (all by default; ``()`` for a runner that starts no process).
    scenarios: ClassVar[tuple[str, ...]] = fake_agent.SCENARIOS
    #: The timeout of every scenario's run, in seconds. The ``sleep`` and ``flood`` agents
    #: never end by themselves, so each of them takes this long (plus the kill grace): a
    #: runner that starts slowly needs more, a fast one can be checked with less.
    timeout: ClassVar[float] = 3.0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Only the cases that apply to the runner are generated, so none is collected only to
        # be skipped: no scenario for a runner that starts no process, no evidence check
        # without a repository to look in. (pytest does not collect an attribute set to None.)
        super().__init_subclass__(**kwargs)
        for name, applies in (
            ("test_scenario", bool(cls.scenarios)),
            ("test_descriptor_evidence_exists", cls.repository is not None),
        ):
            setattr(cls, name, getattr(RunnerConformance, name) if applies else None)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One ``test_scenario`` case for each of the runner's own scenarios."""
        if "scenario" in metafunc.fixturenames:
            metafunc.parametrize("scenario", self.scenarios)

    def settings_for(self, program: str) -> dict[str, Any]:
        """The ``[system.runner]`` table that makes the runner start ``program`` as its
        agent (e.g. ``{"claude_executable": program}``)."""
        raise NotImplementedError

    # -- the descriptor ------------------------------------------------------------------

    def test_descriptor_marks_every_capability(self, tmp_path: Path) -> None:
        settings = self.runner_class.settings_model.from_table(self.settings_for("/bin/false"))
        descriptor = descriptor_of(self.runner_class, settings)
        assert [name for name, _ in descriptor.marks] == list(NAMES)
        for name, mark in descriptor.marks:
            assert mark.evidence or mark.reason, f"{name}: neither evidence nor a reason"

    def test_descriptor_evidence_exists(self) -> None:
        assert self.repository is not None
        settings = self.runner_class.settings_model.from_table(self.settings_for("/bin/false"))
        for name, mark in descriptor_of(self.runner_class, settings).marks:
            for node in mark.evidence:
                match = _NODE.fullmatch(node)
                assert match is not None, f"{name}: {node!r} is not a test node id"
                source = (self.repository / match["path"]).read_text(encoding="utf-8")
                found = re.search(rf"^\s*def {match['name']}\(", source, re.MULTILINE)
                assert found, f"{name}: {node} does not exist"

    # -- the scenarios -------------------------------------------------------------------

    def test_scenario(self, scenario: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        for name, value in PLANTED.items():
            monkeypatch.setenv(name, value)
        state = tmp_path / "state"
        state.mkdir()
        work = tmp_path / "work"
        work.mkdir()
        program = _wrapper(tmp_path / "agent", scenario, state)
        runner = self.runner_class(
            self.runner_class.settings_model.from_table(self.settings_for(str(program)))
        )
        request = RunRequest(
            prompt="conformance",
            contract="Never write files.",
            tools=ToolProfile().bind(work),
            timeout=self.timeout,
            budget=Budget(max_usd=0.5),
            output=OutputSpec(),
        )
        started = time.monotonic()
        result = execute(runner, request)  # an exception here fails the kit
        elapsed = time.monotonic() - started
        assert isinstance(result, AgentResult)
        assert elapsed < self.timeout + SLACK, f"{scenario}: took {elapsed:.1f} s"
        _check_outcome(scenario, result)
        _check_environment(state)
        _check_no_survivors(state)


def _wrapper(path: Path, scenario: str, state: Path) -> Path:
    """An executable that runs the fake agent in ``scenario``, whatever arguments it gets."""
    script = Path(fake_agent.__file__).resolve()
    path.write_text(f'#!/bin/sh\nexec {sys.executable} {script} {scenario} {state} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _check_outcome(scenario: str, result: AgentResult) -> None:
    if scenario in ("sleep", "crash"):
        assert result.status != "completed", f"{scenario}: {result.status}"
    if result.status == "failed":
        assert result.failure_kind is not None, f"{scenario}: failed without a failure_kind"
    if scenario == "sleep":
        assert result.status in ("timeout", "failed", "uncertain"), result.status
    if result.draft is not None:
        assert len(result.draft) <= 16 * 1024 * 1024, f"{scenario}: the draft is unbounded"


def _check_environment(state: Path) -> None:
    env_file = state / "env.json"
    if not env_file.exists():
        return  # the runner never started the agent
    seen = json.loads(env_file.read_text())
    for name, value in PLANTED.items():
        leaked = [key for key, got in seen.items() if value in got]
        assert not leaked, f"the planted {name} reached the agent as {', '.join(leaked)}"


def _check_no_survivors(state: Path, *, patience: float = 3.0) -> None:
    """The run's processes are gone, or go within ``patience`` seconds (they may still be
    being reaped)."""
    pids_file = state / "pids"
    if not pids_file.exists():
        return
    deadline = time.monotonic() + patience
    pids = [int(line.split()[0]) for line in pids_file.read_text().splitlines() if line]
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if _alive(pid)]
        if not alive:
            return
        time.sleep(0.1)
    for pid in alive:  # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"processes of the run survived it: {alive}")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False

"""hz's own runners pass the conformance kit (``hz.runtime.testing``): a hostile fake agent in
place of each CLI — bounded, no planted secret reaches it, a typed outcome for each failure,
no traceback on garbage, and descriptors whose cited tests exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from hz.runtime.runners.claude_code.runner import ClaudeCodeRunner
from hz.runtime.runners.codex.runner import CodexRunner
from hz.runtime.runners.codex_app_server.runner import CodexAppServerRunner
from hz.runtime.runners.command.runner import CommandRunner
from hz.runtime.runners.echo import EchoRunner
from hz.runtime.testing.conformance import RunnerConformance

REPO = Path(__file__).resolve().parents[2]
#: hz's runners start the fake agent at once: a second's timeout is enough for every scenario
#: (the kit's default, 3 s, leaves room for slower runners).
TIMEOUT = 1.0


class TestClaudeCode(RunnerConformance):
    runner_class = ClaudeCodeRunner
    repository = REPO
    timeout = TIMEOUT

    def settings_for(self, program: str) -> dict[str, Any]:
        return {"claude_executable": program, "claude_max_retries": 0}


class TestCodex(RunnerConformance):
    runner_class = CodexRunner
    repository = REPO
    timeout = TIMEOUT

    def settings_for(self, program: str) -> dict[str, Any]:
        return {"codex_executable": program}


class TestCodexAppServer(RunnerConformance):
    runner_class = CodexAppServerRunner
    repository = REPO
    timeout = TIMEOUT

    def settings_for(self, program: str) -> dict[str, Any]:
        return {"codex_executable": program}


class TestCommand(RunnerConformance):
    runner_class = CommandRunner
    repository = REPO
    timeout = TIMEOUT

    def settings_for(self, program: str) -> dict[str, Any]:
        return {
            "command": [program, "--contract={contract_file}"],
            "command_enforces_read_only": True,
        }


class TestEcho(RunnerConformance):
    """Starts no process: only its descriptor is checked."""

    runner_class = EchoRunner
    repository = REPO
    timeout = TIMEOUT
    scenarios: ClassVar[tuple[str, ...]] = ()

    def settings_for(self, program: str) -> dict[str, Any]:
        return {}

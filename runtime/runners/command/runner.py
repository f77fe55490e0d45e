"""The ``command`` runner: any agent CLI from a configured argv, fail closed.

hz cannot see inside the wrapped CLI, so this runner refuses to run (``RunnerError``) until
the operator declares ``command_enforces_read_only = true``, and passes only tools listed in
``command_read_only_tools``. Settings, placeholders, the environment policy and the mapping of
outcomes to results are documented in ``docs/runners/command.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.artifacts.models import ToolProfile
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.process.bounded import Limits, ProcessOutcome, run_bounded
from hz.runtime.process.environment import child_environment
from hz.runtime.process.privatefiles import PLACEHOLDER_DIR, private_directory, write_private_file
from hz.runtime.runners.base import SettingsRunner
from hz.runtime.runners.capabilities import Descriptor
from hz.runtime.runners.command.descriptor import descriptor as command_descriptor
from hz.runtime.runners.command.result import Output, OutputProblem, read_output_file, result_from
from hz.runtime.runners.command.settings import CommandSettings
from hz.runtime.runners.executables import which
from hz.runtime.runners.protocol import Capabilities, Check, RunPlan, RunRequest

PROMPT_FILE = "prompt.md"
CONTRACT_FILE = "contract.md"
OUTPUT_FILE = "output.txt"


class CommandRunner(SettingsRunner[CommandSettings]):
    name: ClassVar[str] = "command"
    settings_model: ClassVar[type[CommandSettings]] = CommandSettings

    @classmethod
    def descriptor(cls, settings: CommandSettings | None) -> Descriptor:
        """What it enforces, with the tests that prove it (``hz runners``, the pre-run gate)."""
        return command_descriptor(settings)

    @classmethod
    def capabilities(cls, settings: CommandSettings | None) -> Capabilities:
        # Budget and tools are passed on as placeholders, which the command may ignore: a
        # result names them unenforced when the command does not even take them.
        return Capabilities(
            timeout="hard",
            budget="advisory",
            tools="advisory",
            turns="unsupported",
            structured_output="unsupported",
        )

    @classmethod
    def accepted_tools(cls, settings: CommandSettings) -> tuple[str, ...]:
        """The tool names a contract may ask for (``hz validate`` warns about others)."""
        return settings.read_only_tools

    @classmethod
    def doctor(cls, settings: CommandSettings) -> list[Check]:
        checks = [Check("command runner settings", "ok", "valid")]
        program = _program(settings, child_environment(passthrough=settings.env))
        if "/" not in program:
            detail = f"{program}: not found on PATH"
            checks.append(Check("command executable", "failed", detail))
        elif not os.path.isfile(program):
            checks.append(Check("command executable", "failed", f"{program}: not found"))
        elif not os.access(program, os.X_OK):
            checks.append(Check("command executable", "failed", f"{program}: not executable"))
        else:
            checks.append(Check("command executable", "ok", program))
        if settings.enforces_read_only:
            checks.append(
                Check("command read-only", "ok", "declared by command_enforces_read_only")
            )
        else:
            checks.append(Check("command read-only", "degraded", _REFUSAL))
        return checks

    def plan(self, request: RunRequest) -> RunPlan:
        tool_names = self._admit(request.tools)
        working_dir = request.working_dir
        env = child_environment(passthrough=self.settings.env)
        private = Path(PLACEHOLDER_DIR)
        files = tuple(
            (role, str(private / name))
            for role, name, placeholder in _FILES
            if self.settings.uses(placeholder)
        )
        argv = self._argv(env, private, working_dir, tool_names, request)
        return RunPlan(
            argv=argv,
            cwd=working_dir,
            env_names=tuple(env),
            files=files,
            stdin="/dev/null" if self.settings.uses("prompt_file") else "the prompt, then closed",
            limits_unenforced=self._unenforced(),
        )

    def run(self, request: RunRequest) -> AgentResult:
        tool_names = self._admit(request.tools)
        working_dir = request.working_dir
        env = child_environment(passthrough=self.settings.env)
        uses_output = self.settings.uses("output_file")
        uses_prompt = self.settings.uses("prompt_file")
        limits = Limits(timeout=request.timeout, inactivity=self.settings.inactivity_timeout)
        files = {CONTRACT_FILE: request.contract}
        if uses_prompt:
            files[PROMPT_FILE] = request.prompt
        result_output: Output | OutputProblem | None = None
        try:
            with private_directory(files) as private:
                if uses_output:  # created 0600 here, so the agent's umask can't widen it
                    write_private_file(private.path, OUTPUT_FILE, b"")
                argv = self._argv(env, private.path, working_dir, tool_names, request)
                stdin = None if uses_prompt else request.prompt.encode("utf-8")
                outcome = run_bounded(argv, stdin=stdin, cwd=working_dir, env=env, limits=limits)
                if uses_output and outcome.exit_code == 0:
                    try:
                        result_output = read_output_file(private.path / OUTPUT_FILE)
                    except OutputProblem as e:
                        result_output = e
        except OSError as e:  # no temporary directory, disk full: nothing was started
            why = f"cannot write the private run files: {e.strerror or e}"
            outcome = ProcessOutcome(exit_code=None, launch_error=why)
        base = {
            "runner": self.name,
            "model": self.settings.model,
            "limits_unenforced": self._unenforced(),
        }
        return result_from(
            outcome,
            output=result_output,
            settings=self.settings,
            budget=request.budget,
            timeout=request.timeout,
            base=base,
        )

    def _admit(self, tools: ToolProfile) -> tuple[str, ...]:
        """Refuse before anything runs; the tools to pass."""
        if not self.settings.enforces_read_only:
            raise RunnerError(f"the command runner {_REFUSAL}", hint=_REFUSAL_HINT)
        allowed = self.settings.read_only_tools
        offending = [t for t in tools.tools if t not in allowed]
        if offending:
            raise RunnerError(
                "the command runner may only pass tools listed in [system.runner] "
                f"command_read_only_tools ({', '.join(allowed) or 'none'}); "
                f"not listed: {', '.join(offending)}"
            )
        return tools.tools or allowed

    def _argv(
        self,
        env: Mapping[str, str],
        private: Path,
        working_dir: str,
        tools: tuple[str, ...],
        request: RunRequest,
    ) -> tuple[str, ...]:
        values = {
            "prompt_file": str(private / PROMPT_FILE),
            "contract_file": str(private / CONTRACT_FILE),
            "output_file": str(private / OUTPUT_FILE),
            "working_dir": working_dir,
            "tools": ",".join(tools),
            "model": self.settings.model or "",
            "timeout_seconds": _number(request.timeout),
            "max_usd": _number(request.budget.max_usd),
        }
        argv = self.settings.render(values)
        return (_program(self.settings, env), *argv[1:])

    def _unenforced(self) -> tuple[str, ...]:
        missing = [
            limit
            for limit, placeholder in (("budget", "max_usd"), ("tools", "tools"))
            if not self.settings.uses(placeholder)
        ]
        return (*missing, "turns")


_FILES = (
    ("prompt", PROMPT_FILE, "prompt_file"),
    ("contract", CONTRACT_FILE, "contract_file"),
    ("output", OUTPUT_FILE, "output_file"),
)
_REFUSAL = (
    "refuses to run until [system.runner] command_enforces_read_only = true "
    "(hz cannot check that the command restricts its agent to read-only tools)"
)
_REFUSAL_HINT = (
    "set it in your user or site configuration once the command enforces read-only tools itself"
)


def _program(settings: CommandSettings, env: Mapping[str, str]) -> str:
    """argv[0] as an absolute path: found on the child's PATH, or relative to hz's directory
    (resolved before the child changes into the working directory)."""
    program = os.path.expanduser("".join(text for text, _ in settings.command[0]))
    if "/" in program:
        return os.path.abspath(program)
    return which(program, env) or program


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))

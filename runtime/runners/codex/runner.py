"""The ``codex`` runner: one ``codex exec --json`` session, as a plugin.

It registers through the entry-point group ``hz.runners`` (``pyproject.toml``), exactly as a
third-party runner would; docs/runners/plugins.md walks through it. The command line is in
``argv``, the event parser in ``events``, the status table in ``classify`` and the settings in
``settings``; docs/runners/codex.md is the user's view.

Codex has no spending cap, so every result names ``budget`` in ``limits_unenforced`` (and
hz refuses the run beforehand when ``require_enforced_budget`` is set). It cannot restrict the
session to named tools or count turns either: its read-only sandbox is what holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.process.bounded import Limits, ProcessOutcome, run_bounded
from hz.runtime.process.environment import child_environment
from hz.runtime.process.privatefiles import PLACEHOLDER_DIR, private_directory
from hz.runtime.runners.base import SettingsRunner
from hz.runtime.runners.capabilities import Descriptor
from hz.runtime.runners.codex.argv import (
    CONTRACT_FILE,
    SCHEMA_FILE,
    build_argv,
    private_codex_home,
)
from hz.runtime.runners.codex.classify import classify
from hz.runtime.runners.codex.descriptor import exec_descriptor
from hz.runtime.runners.codex.doctor import checks
from hz.runtime.runners.codex.events import CodexStream
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.executables import resolve_executable, unusable
from hz.runtime.runners.outcome import RunEnd
from hz.runtime.runners.protocol import (
    Capabilities,
    Check,
    ProgressReporter,
    RunPlan,
    RunRequest,
)

_ROLES = {CONTRACT_FILE: "contract", SCHEMA_FILE: "output schema"}
#: Lines the CLI prints on stderr on every run that say nothing about this one.
_NOISE = ("Reading prompt from stdin...", "WARNING: proceeding, even though we could not create")


def stderr_tail(outcome: ProcessOutcome, limit: int = 4096) -> str:
    lines = outcome.stderr.decode("utf-8", errors="replace").splitlines(keepends=True)
    kept = "".join(line for line in lines if not line.startswith(_NOISE))
    return kept[-limit:]


#: Codex has no spending cap, no allowlist of tool names and no turn limit.
_CAPABILITIES = Capabilities(
    timeout="hard",
    budget="unsupported",
    tools="unsupported",
    turns="unsupported",
    structured_output="hard",
)


class CodexRunner(SettingsRunner[CodexSettings]):
    name: ClassVar[str] = "codex"
    settings_model: ClassVar[type[CodexSettings]] = CodexSettings

    @classmethod
    def descriptor(cls, settings: CodexSettings | None) -> Descriptor:
        """What it enforces, with the tests that prove it (``hz runners``, the pre-run gate)."""
        return exec_descriptor()

    @classmethod
    def capabilities(cls, settings: CodexSettings | None) -> Capabilities:
        return _CAPABILITIES

    @classmethod
    def doctor(cls, settings: CodexSettings) -> list[Check]:
        return checks(settings)

    def environment(self, home: str) -> dict[str, str]:
        return child_environment(passthrough=self.settings.env, extra={"CODEX_HOME": home})

    def _files(self, request: RunRequest) -> dict[str, str]:
        files: dict[str, str] = {}
        if request.contract.strip():
            files[CONTRACT_FILE] = request.contract
        if isinstance(request.output.schema_, dict):  # a boolean schema: hz's check only
            files[SCHEMA_FILE] = json.dumps(request.output.schema_, ensure_ascii=False)
        return files

    def _argv(self, executable: str, working_dir: str, files: Mapping[str, str]) -> tuple[str, ...]:
        return build_argv(
            executable,
            self.settings,
            working_dir=working_dir,
            contract_file=files.get(CONTRACT_FILE),
            schema_file=files.get(SCHEMA_FILE),
        )

    def plan(self, request: RunRequest) -> RunPlan:
        working_dir = request.working_dir
        names = self._files(request)
        shown = {name: f"{PLACEHOLDER_DIR}/{name}" for name in names}
        home = str(self.settings.home) if self.settings.home else f"{PLACEHOLDER_DIR}/codex-home"
        env = self.environment(home)
        executable = resolve_executable(self.settings.executable, env) or self.settings.executable
        return RunPlan(
            argv=self._argv(executable, working_dir, shown),
            cwd=working_dir,
            env_names=tuple(sorted(env)),
            files=(*((_ROLES[name], path) for name, path in shown.items()), ("codex home", home)),
            stdin="the prompt, then closed",
            limits_unenforced=self.unenforced(request),
        )

    def run(self, request: RunRequest) -> AgentResult:
        working_dir = request.working_dir
        timeout = request.timeout
        stream = CodexStream()
        report = ProgressReporter(request.progress)

        def on_line(raw: bytes) -> bool:
            done = stream.feed(raw)
            calls = stream.kept
            report(stream.turns_started, len(calls), calls.last.name if calls.last else None)
            return done

        with self._home() as home:
            env = self.environment(str(home))
            executable = resolve_executable(self.settings.executable, env)
            if executable is None:
                missing = unusable(self.settings.executable)
                return self._result(stream, RunEnd.not_started(missing, timeout), None, request)
            with private_directory(self._files(request), prefix="hz-codex-") as private:
                paths = {name: str(path) for name, path in private.files.items()}
                outcome = run_bounded(
                    self._argv(executable, working_dir, paths),
                    stdin=request.prompt.encode("utf-8"),
                    cwd=working_dir,
                    env=env,
                    limits=Limits(timeout=timeout),
                    on_stdout_line=on_line,
                )
        return self._result(stream, RunEnd.of(outcome, timeout), outcome, request)

    @contextmanager
    def _home(self) -> Iterator[Path]:
        if self.settings.home is not None:
            yield self.settings.home
            return
        with private_codex_home() as home:
            yield home

    def _result(
        self,
        stream: CodexStream,
        end: RunEnd,
        outcome: ProcessOutcome | None,
        request: RunRequest,
    ) -> AgentResult:
        verdict = classify(stream, end)
        # The CLI asks the API for schema-shaped output but never checks it: hz does, after the
        # run (``hz.runtime.execution.execute``), as for every runner.
        return verdict.result(
            runner=self.name,
            model=self.settings.model,
            limits_unenforced=self.unenforced(request),
            draft=stream.final_message,
            tool_calls=stream.tool_calls,
            turns=stream.turns_started,
            usage=stream.usage,
            duration_seconds=outcome.duration_seconds if outcome else 0.0,
            exit_code=outcome.exit_code if outcome else None,
            stderr_tail=stderr_tail(outcome) if outcome else "",
            output_truncated=end.output_truncated or stream.kept.truncated,
            protocol_notes=stream.kept.notes(),
            transcript_events=tuple(stream.transcript.events),
            transcript_counts=stream.transcript.counts(),
        )

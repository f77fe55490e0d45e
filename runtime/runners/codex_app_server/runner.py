"""The ``codex-app-server`` runner: one turn through ``codex app-server`` (JSON-RPC on stdio).

A plugin like ``codex`` (entry point group ``hz.runners``), with the same ``[system.runner]``
keys, closed tool surface, key-free shell environment and read-only sandbox. What it adds over
``codex exec``: it can interrupt the exact turn it started (on cancel and at hz's timeout,
before the group is killed), reads refusals and failures from the server's typed fields, and
classifies a cancellation by the phase hz observed (``session``). The protocol is pinned from
the binary (``protocol``); docs/runners/codex-app-server.md is the user's view.
"""

from __future__ import annotations

import time
from typing import ClassVar

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.process.environment import child_environment
from hz.runtime.process.interactive import CEILINGS, Ceilings, Interactive, Stopped
from hz.runtime.process.privatefiles import PLACEHOLDER_DIR
from hz.runtime.runners.capabilities import Descriptor
from hz.runtime.runners.codex.argv import private_codex_home
from hz.runtime.runners.codex.descriptor import app_server_descriptor
from hz.runtime.runners.codex.runner import CodexRunner
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.codex_app_server.argv import build_argv, thread_params, turn_params
from hz.runtime.runners.codex_app_server.classify import LONG_LINES, classify
from hz.runtime.runners.codex_app_server.doctor import checks
from hz.runtime.runners.codex_app_server.session import Conversation, Session
from hz.runtime.runners.codex_app_server.settings import CodexAppServerSettings
from hz.runtime.runners.executables import resolve_executable, unusable
from hz.runtime.runners.outcome import Verdict
from hz.runtime.runners.protocol import Check, ProgressReporter, RunPlan, RunRequest

#: What the pinned server prints on stderr on every run that says nothing about this one.
_NOISE = ("WARNING: proceeding, even though we could not create",)


def stderr_tail(stopped: Stopped, limit: int = 4096) -> str:
    lines = stopped.stderr.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(_NOISE))[-limit:]


def _notes(talk: Conversation) -> dict[str, int]:
    notes = {f"declined {method}": n for method, n in talk.declined.items()}
    notes |= {f"unknown notification {method}": n for method, n in talk.turn.unknown.items()}
    if talk.malformed:
        notes["malformed lines"] = talk.malformed
    if talk.long_lines:
        notes[LONG_LINES] = talk.long_lines
    notes |= talk.turn.kept.notes()
    return dict(sorted(notes.items()))


class CodexAppServerRunner(CodexRunner):
    """Shares the ``codex`` runner's settings, environment and unenforced limits."""

    name: ClassVar[str] = "codex-app-server"

    settings_model: ClassVar[type[CodexAppServerSettings]] = CodexAppServerSettings

    def __init__(self, settings: CodexAppServerSettings, *, ceilings: Ceilings = CEILINGS) -> None:
        super().__init__(settings)
        #: The server's fixed waits (``Ceilings``): hz's own, shorter only in tests.
        self.ceilings = ceilings

    @classmethod
    def descriptor(cls, settings: CodexSettings | None) -> Descriptor:
        return app_server_descriptor()

    @classmethod
    def doctor(cls, settings: CodexSettings) -> list[Check]:
        return checks(settings)

    def environment(self, home: str) -> dict[str, str]:
        # The server logs to stderr with colours otherwise; the result keeps plain text.
        return child_environment(
            passthrough=self.settings.env, extra={"CODEX_HOME": home, "NO_COLOR": "1"}
        )

    def plan(self, request: RunRequest) -> RunPlan:
        working_dir = request.working_dir
        home = f"{PLACEHOLDER_DIR}/codex-home"
        env = self.environment(home)
        executable = resolve_executable(self.settings.executable, env) or self.settings.executable
        return RunPlan(
            argv=build_argv(executable, self.settings),
            cwd=working_dir,
            env_names=tuple(sorted(env)),
            files=(("codex home", home),),
            stdin="JSON-RPC: initialize, thread/start (the contract), turn/start (the prompt)",
            limits_unenforced=self.unenforced(request),
        )

    def run(self, request: RunRequest) -> AgentResult:
        working_dir = request.working_dir
        started = time.monotonic()
        deadline = started + request.timeout
        report = ProgressReporter(request.progress)

        def changed(talk: Conversation) -> None:
            calls = talk.turn.kept
            last = calls.last.name if calls.last else None
            report(1 if talk.turn.turn_id else 0, len(calls), last)

        with private_codex_home() as home:
            env = self.environment(str(home))
            executable = resolve_executable(self.settings.executable, env)
            if executable is None:
                return self._launch_failed(unusable(self.settings.executable), request, started)
            proc = Interactive.start(
                build_argv(executable, self.settings),
                cwd=working_dir,
                env=env,
                ceilings=self.ceilings,
            )
            if isinstance(proc, str):
                return self._launch_failed(proc, request, started)
            talk = Conversation()
            try:
                talk = Session(proc, deadline, changed).run(
                    thread_params(
                        self.settings, working_dir=working_dir, contract=request.contract
                    ),
                    turn_params(request.prompt, request.output),
                )
            finally:
                stopped = proc.stop(graceful=talk.turn.completed)
        verdict = classify(talk, timeout_seconds=request.timeout)
        # The server asks the API for schema-shaped output but never checks it: hz does, after
        # the run (``hz.runtime.execution.execute``), as for every runner.
        return verdict.result(
            runner=self.name,
            model=self.settings.model,
            limits_unenforced=self.unenforced(request),
            duration_seconds=time.monotonic() - started,
            draft=talk.turn.final_message,
            tool_calls=talk.turn.tool_calls,
            turns=1 if talk.turn.turn_id else 0,
            usage=talk.turn.usage,
            exit_code=stopped.exit_code,
            stderr_tail=stderr_tail(stopped),
            protocol_notes=_notes(talk),
            output_truncated=talk.turn.kept.truncated or talk.long_lines > 0,
            transcript_events=tuple(talk.turn.transcript.events),
            transcript_counts=talk.turn.transcript.counts(),
        )

    def _launch_failed(self, why: str, request: RunRequest, started: float) -> AgentResult:
        return Verdict("failed", "launch_failed", f"codex did not start: {why}").result(
            runner=self.name,
            model=self.settings.model,
            limits_unenforced=self.unenforced(request),
            duration_seconds=time.monotonic() - started,
        )

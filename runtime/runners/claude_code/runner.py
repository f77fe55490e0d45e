"""The ``claude-code`` runner: one headless ``claude -p`` session, bounded, read-only.

The prompt goes on stdin, the contract into a private file given with
``--append-system-prompt-file``; the CLI streams ``stream-json`` lines which are parsed as they
arrive (``stream``) and classified at the end (``classify``). The argv, the
environment policy and the mapping table are in docs/runners/claude-code.md.
"""

from __future__ import annotations

import json
import time
from typing import ClassVar

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.process.bounded import Limits, ProcessOutcome, run_bounded
from hz.runtime.process.limits import MAX_OUTPUT
from hz.runtime.process.privatefiles import PLACEHOLDER_DIR, private_directory
from hz.runtime.runners.base import SettingsRunner
from hz.runtime.runners.capabilities import Descriptor
from hz.runtime.runners.claude_code.argv import (
    build_argv,
    schema_on_stdin,
    session_tools,
    stdin_bytes,
    widening,
)
from hz.runtime.runners.claude_code.classify import classify, over_budget
from hz.runtime.runners.claude_code.descriptor import descriptor as claude_descriptor
from hz.runtime.runners.claude_code.doctor import checks as doctor_checks
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.claude_code.stream import StreamParser
from hz.runtime.runners.executables import resolve_executable, unusable
from hz.runtime.runners.outcome import RunEnd
from hz.runtime.runners.protocol import (
    Capabilities,
    Check,
    Enforcement,
    ProgressReporter,
    RunPlan,
    RunRequest,
)

CONTRACT_FILE = "contract.md"


class ClaudeCodeRunner(SettingsRunner[ClaudeSettings]):
    name: ClassVar[str] = "claude-code"
    settings_model: ClassVar[type[ClaudeSettings]] = ClaudeSettings

    @classmethod
    def descriptor(cls, settings: ClaudeSettings | None) -> Descriptor:
        """What it enforces, with the tests that prove it (``hz runners``, the pre-run gate)."""
        return claude_descriptor(settings)

    @classmethod
    def capabilities(cls, settings: ClaudeSettings | None) -> Capabilities:
        # The CLI never stops a model that keeps calling tools: only the operator's
        # ``max_turns`` makes turns a hard limit.
        limited = settings is not None and settings.max_turns is not None
        turns: Enforcement = "hard" if limited else "unsupported"
        return Capabilities(
            timeout="hard", budget="hard", tools="hard", turns=turns, structured_output="hard"
        )

    @classmethod
    def doctor(cls, settings: ClaudeSettings) -> list[Check]:
        return doctor_checks(settings)

    @classmethod
    def accepted_tools(cls, settings: ClaudeSettings) -> tuple[str, ...]:
        """The tool names a contract may ask for (``hz validate`` warns about others)."""
        return settings.read_only_tools

    def plan(self, request: RunRequest) -> RunPlan:
        env = self.settings.environment()
        executable = resolve_executable(self.settings.executable, env) or self.settings.executable
        contract_file = f"{PLACEHOLDER_DIR}/{CONTRACT_FILE}"
        argv = build_argv(
            executable,
            contract_file=contract_file,
            tools=session_tools(request.tools, self.settings),
            budget=request.budget,
            output=request.output,
            settings=self.settings,
        )
        return RunPlan(
            argv=argv,
            cwd=request.tools.working_dir or "",
            env_names=tuple(sorted(env)),
            files=(("contract", contract_file),),
            stdin=(
                "stream-json: an initialize request with the output schema, the prompt; then closed"
                if schema_on_stdin(request.output)
                else "the prompt, then closed"
            ),
            limits_unenforced=self.unenforced(request),
            session_widened=widening(session_tools(request.tools, self.settings)),
        )

    def run(self, request: RunRequest) -> AgentResult:
        names = session_tools(request.tools, self.settings)  # RunnerError before anything starts
        env = self.settings.environment()
        cwd = request.tools.working_dir or "."
        timeout = request.timeout
        executable = resolve_executable(self.settings.executable, env)
        if executable is None:
            missing = unusable(self.settings.executable)
            return self._result(request, RunEnd.not_started(missing, timeout), None, None)
        parser = StreamParser(max_line_chars=MAX_OUTPUT)
        report = ProgressReporter(request.progress)

        def on_line(raw: bytes) -> bool:
            done = parser.feed(raw.decode("utf-8", errors="replace"))
            report(parser.turns, parser.tool_call_count, parser.last_tool)
            return done

        with private_directory({CONTRACT_FILE: request.contract}, prefix="hz-claude-") as private:
            argv = build_argv(
                executable,
                contract_file=str(private.files[CONTRACT_FILE]),
                tools=names,
                budget=request.budget,
                output=request.output,
                settings=self.settings,
            )
            outcome = run_bounded(
                argv,
                stdin=stdin_bytes(request.prompt, request.output),
                cwd=cwd,
                env=env,
                # A line may be as long as the output cap: a long draft is still one result.
                limits=Limits(timeout=timeout, max_line=MAX_OUTPUT),
                on_stdout_line=on_line,
            )
        return self._result(request, RunEnd.of(outcome, timeout), parser, outcome)

    def _result(
        self,
        request: RunRequest,
        end: RunEnd,
        parser: StreamParser | None,
        outcome: ProcessOutcome | None,
    ) -> AgentResult:
        parser = parser or StreamParser()
        summary = parser.summary()
        verdict = classify(
            summary, end, allow_api_key_billing=self.settings.allow_api_key_billing, now=time.time()
        )
        result = summary.result
        if result is not None:
            verdict = over_budget(verdict, result.total_cost_usd, request.budget.max_usd)
        draft = structured = None
        if verdict.status == "completed" and result is not None:
            if result.has_structured_output and result.structured_output is not None:
                structured = result.structured_output
                draft = json.dumps(structured, ensure_ascii=False, indent=2)
            else:
                draft = result.text
        return verdict.result(
            runner=self.name,
            model=summary.model,
            limits_unenforced=self.unenforced(request),
            draft=draft,
            structured_output=structured,
            tool_calls=summary.tool_calls,
            turns=result.num_turns if result and result.num_turns is not None else parser.turns,
            usage=result.usage if result is not None else summary.streamed_usage,
            cost_usd=result.total_cost_usd if result is not None else None,
            duration_seconds=outcome.duration_seconds if outcome is not None else 0.0,
            exit_code=outcome.exit_code if outcome is not None else None,
            stderr_tail=outcome.stderr_tail() if outcome is not None else "",
            output_truncated=end.output_truncated or parser.kept.truncated,
            protocol_notes=parser.kept.notes(),
            session_widened=widening(session_tools(request.tools, self.settings)),
            transcript_events=tuple(parser.transcript.events),
            transcript_counts=parser.transcript.counts(),
        )

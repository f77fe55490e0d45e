"""How an agent CLI's run ended, and the verdict a runner's classifier draws from it.

``RunEnd`` is the process side (independent of what the CLI printed), ``Verdict`` the status,
failure kind and reason a runner reports; each CLI runner's ``classify`` maps its own parsed
output and a ``RunEnd`` to a ``Verdict``, and ``Verdict.result`` turns that into the run's
``AgentResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hz.runtime.artifacts.result import AgentResult, FailureKind, Status
from hz.runtime.process.bounded import ProcessOutcome


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How the process ended, independent of what it printed."""

    exit_code: int | None
    timed_out: bool
    timeout_seconds: float
    launch_error: str | None = None
    output_truncated: bool = False
    finished_after_done: bool = False
    describe_exit: str = ""

    @classmethod
    def of(cls, outcome: ProcessOutcome, timeout_seconds: float) -> RunEnd:
        return cls(
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
            timeout_seconds=timeout_seconds,
            launch_error=outcome.launch_error,
            output_truncated=outcome.stdout_truncated,
            finished_after_done=outcome.finished_after_done,
            describe_exit=outcome.describe_exit(),
        )

    @classmethod
    def not_started(cls, why: str, timeout_seconds: float) -> RunEnd:
        """The executable could not be found: nothing ran."""
        return cls(None, False, timeout_seconds, launch_error=why)


@dataclass(frozen=True, slots=True)
class Verdict:
    status: Status
    failure_kind: FailureKind | None = None
    reason: str | None = None
    retry_after_seconds: float | None = None

    def result(
        self, *, runner: str, model: str | None, limits_unenforced: tuple[str, ...], **fields: Any
    ) -> AgentResult:
        """The run's result: this verdict, who ran it, and what else the runner observed
        (``fields``: the draft, tool calls, usage, the process's exit...)."""
        return AgentResult(
            runner=runner,
            model=model,
            status=self.status,
            failure_kind=self.failure_kind,
            reason=self.reason,
            retry_after_seconds=self.retry_after_seconds,
            limits_unenforced=limits_unenforced,
            **fields,
        )

"""The ``echo`` runner: a runner in the product for demos and tests, as httpx ships a
``MockTransport``. It starts no process and answers with the prompt as its draft.

``[system.runner] echo_status`` (default ``completed``) and ``echo_failure_kind`` make it end
as any other runner could, so scripts can try their handling of every status without an
agent installed.
"""

from __future__ import annotations

import time
from typing import Annotated, ClassVar, get_args

from pydantic import Field

from hz.runtime.protocol import Capabilities, Check, Progress, RunPlan, RunRequest
from hz.runtime.result import AgentResult, FailureKind, Status
from hz.runtime.runners.settings import Expect, RunnerSettings

_STATUSES: tuple[str, ...] = get_args(Status)
_KINDS: tuple[str, ...] = get_args(FailureKind)


class EchoSettings(RunnerSettings):
    status: Annotated[
        Status,
        Field(
            alias="echo_status",
            description="how every run ends: " + ", ".join(f"`{s}`" for s in _STATUSES),
        ),
        Expect(f"must be one of {', '.join(_STATUSES)}, got {{value!r}}"),
    ] = "completed"
    failure_kind: Annotated[
        FailureKind | None,
        Field(alias="echo_failure_kind", description="the failure kind of every run"),
        Expect(f"must be one of {', '.join(_KINDS)}, got {{value!r}}"),
    ] = None
    model: Annotated[
        str,
        Field(strict=True, min_length=1, description="the model the result names"),
        Expect("must be a non-empty string, got {value!r}"),
    ] = "echo"


class EchoRunner:
    name: ClassVar[str] = "echo"
    settings_model: ClassVar[type[EchoSettings]] = EchoSettings

    def __init__(self, settings: EchoSettings) -> None:
        self.settings = settings

    @classmethod
    def capabilities(cls, settings: EchoSettings | None) -> Capabilities:
        # Nothing runs, so nothing can exceed a limit: every limit holds by construction.
        return Capabilities(
            timeout="hard", budget="hard", tools="hard", turns="hard", structured_output="advisory"
        )

    @classmethod
    def doctor(cls, settings: EchoSettings) -> list[Check]:
        return [Check("echo", "ok", "built in; starts no process, answers with the prompt")]

    def plan(self, request: RunRequest) -> RunPlan:
        return RunPlan(argv=(), cwd=request.tools.working_dir or "", env_names=(), stdin="none")

    def run(self, request: RunRequest) -> AgentResult:
        started = time.monotonic()
        if request.progress is not None:
            request.progress(
                Progress(elapsed_seconds=time.monotonic() - started, turns=1, tool_calls=0)
            )
        status = self.settings.status
        return AgentResult(
            runner=self.name,
            model=self.settings.model,
            status=status,
            failure_kind=self.settings.failure_kind,
            draft=request.prompt,
            turns=1,
            cost_usd=0.0,
            duration_seconds=time.monotonic() - started,
            reason=None if status == "completed" else f"echo_status is {status}",
        )

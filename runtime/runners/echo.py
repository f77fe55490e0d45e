"""The ``echo`` runner: a runner in the product for demos and tests, as httpx ships a
``MockTransport``. It starts no process and answers with the prompt as its draft.

``[system.runner] echo_status`` (default ``completed``) and ``echo_failure_kind`` make it end
as any other runner could, so scripts can try their handling of every status without an
agent installed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar, get_args

from hz.runtime.errors import ConfigError
from hz.runtime.protocol import Capabilities, Check, Progress, RunPlan, RunRequest
from hz.runtime.result import AgentResult, FailureKind, Status

_STATUSES: tuple[str, ...] = get_args(Status)
_KINDS: tuple[str, ...] = get_args(FailureKind)


class EchoRunner:
    name: ClassVar[str] = "echo"
    # Nothing runs, so nothing can exceed a limit: every limit holds by construction.
    capabilities: ClassVar[Capabilities] = Capabilities(
        timeout="hard", budget="hard", tools="hard", turns="hard", structured_output="advisory"
    )
    settings_keys: ClassVar[frozenset[str]] = frozenset({"echo_status", "echo_failure_kind"})

    def __init__(self, *, model: str, status: Status, failure_kind: FailureKind | None) -> None:
        self.model = model
        self.status: Status = status
        self.failure_kind: FailureKind | None = failure_kind

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> EchoRunner:
        status = settings.get("echo_status", "completed")
        if status not in _STATUSES:
            raise ConfigError(
                f"[system.runner] echo_status must be one of {', '.join(_STATUSES)}, got {status!r}"
            )
        kind = settings.get("echo_failure_kind")
        if kind is not None and kind not in _KINDS:
            raise ConfigError(
                f"[system.runner] echo_failure_kind must be one of {', '.join(_KINDS)}, "
                f"got {kind!r}"
            )
        model = settings.get("model", "echo")
        return cls(model=str(model), status=status, failure_kind=kind)

    @classmethod
    def doctor(cls, settings: Mapping[str, Any]) -> list[Check]:
        cls.from_settings(settings)
        return [Check("echo", "ok", "built in; starts no process, answers with the prompt")]

    def plan(self, request: RunRequest) -> RunPlan:
        return RunPlan(argv=(), cwd=request.tools.working_dir or "", env_names=(), stdin="none")

    def run(self, request: RunRequest) -> AgentResult:
        started = time.monotonic()
        if request.progress is not None:
            request.progress(
                Progress(elapsed_seconds=time.monotonic() - started, turns=1, tool_calls=0)
            )
        completed = self.status == "completed"
        return AgentResult(
            runner=self.name,
            model=self.model,
            status=self.status,
            failure_kind=self.failure_kind,
            draft=request.prompt,
            turns=1,
            cost_usd=0.0,
            duration_seconds=time.monotonic() - started,
            reason=None if completed else f"echo_status is {self.status}",
        )

"""The typed end of every run. ``schemas/result.schema.json`` is generated from ``AgentResult``."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import Field, JsonValue, computed_field, model_validator

from hz.runtime.artifacts.models import Frozen
from hz.runtime.artifacts.transcript import TranscriptEvent

Status = Literal["completed", "timeout", "budget", "failed", "cancelled", "uncertain"]

FailureKind = Literal[
    "rate_limited",
    "budget_exceeded",
    "max_turns",
    "schema_invalid",
    "refusal",
    "auth_misconfigured",
    "permission_denied",
    "launch_failed",
    "inactivity_timeout",
    "output_limit",
    "runtime_error",
    "aborted",
    "protocol_error",
]


class Usage(Frozen):
    """Tokens as the runner reported them; ``input_tokens`` excludes cached input."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class ToolCall(Frozen):
    """One tool call the agent asked for, in order. ``is_error`` when the tool refused/failed."""

    name: str
    input: JsonValue = None
    is_error: bool | None = None


class Attempt(Frozen):
    """One automatic attempt of a run (``AgentResult.attempts``): its run in the ledger, how
    it ended, and what it cost (None: not reported; an attempt whose agent started may have
    been billed all the same)."""

    run_id: str
    status: Status
    failure_kind: FailureKind | None = None
    cost_usd: float | None = None
    duration_seconds: float = 0.0


class AgentResult(Frozen):
    """What one agent session ended in. A timeout or a crash is a result, never an exception.

    ``reason`` says why a run did not complete; ``limits_unenforced`` names the limits (e.g.
    ``budget``, ``tools``) the runner could not enforce for this run; ``session_widened`` the
    tools the operator allowed beyond reading local files (e.g. ``WebFetch``: the network)
    that this session was given. ``uncertain``: the run
    was cancelled or lost at a point where the agent may have acted and hz could not observe
    what it did (never to be retried blindly). ``protocol_notes`` counts what a runner
    declined or ignored in its agent's protocol (approval requests, unknown notifications).
    ``attempts``: when ``hz run`` retried automatically (a rate limit before any tool call),
    every attempt, this one last; empty when it ran once.
    """

    kind: Literal["result"] = "result"
    format_version: Literal[1] = 1
    runner: str
    model: str | None = None
    status: Status
    failure_kind: FailureKind | None = None
    draft: str | None = None
    structured_output: JsonValue = None
    tool_calls: tuple[ToolCall, ...] = ()
    turns: int | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    duration_seconds: float = 0.0
    exit_code: int | None = None
    stderr_tail: str = ""
    reason: str | None = None
    retry_after_seconds: float | None = None
    limits_unenforced: tuple[str, ...] = ()
    session_widened: tuple[str, ...] = ()
    output_truncated: bool = False
    protocol_notes: dict[str, int] = Field(default_factory=dict)
    attempts: tuple[Attempt, ...] = ()
    #: What a runner with an event stream recorded for the run's transcript (already capped,
    #: ``hz.runtime.transcript.record``); not part of the result's JSON.
    transcript_events: tuple[TranscriptEvent, ...] = Field(default=(), exclude=True)
    #: What the runner's recorder left out or replaced: ``dropped``, ``truncated``, ``redacted``.
    transcript_counts: dict[str, int] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _derived_counts(cls, data: Any) -> Any:
        # ``tool_call_counts`` is written for readers of the JSON; it is derived from
        # ``tool_calls``, so a result read back must agree with itself.
        if isinstance(data, dict) and "tool_call_counts" in data:
            data = dict(data)
            counts = data.pop("tool_call_counts")
            calls = data.get("tool_calls") or ()
            names = [c.name if isinstance(c, ToolCall) else c.get("name") for c in calls]
            if counts != dict(sorted(Counter(names).items())):
                raise ValueError("tool_call_counts does not match tool_calls")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tool_call_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(call.name for call in self.tool_calls).items()))

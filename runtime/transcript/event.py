"""One event of a transcript, and the caps every transcript is held to.

Apart from ``hz.runtime.transcript.model`` so that ``AgentResult`` can carry a runner's
recorded events without an import cycle (it imports nothing of the result).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from hz.runtime.models import Frozen

EventType = Literal["message", "tool_call", "tool_result", "usage", "end", "stderr"]


@dataclass(frozen=True, slots=True)
class Caps:
    """How much of a run a transcript keeps."""

    events: int = 2000
    stream_bytes: int = 1024 * 1024
    field_chars: int = 4000


class TranscriptEvent(Frozen):
    """One normalised event. ``turn`` counts the model's turns from 1 (``None``: unknown);
    ``usage`` holds token counts by the names of ``hz.runtime.result.Usage``; ``status`` is a
    result status (``end`` only)."""

    type: EventType
    turn: int | None = None
    name: str | None = None
    text: str | None = None
    input: JsonValue = None
    is_error: bool | None = None
    usage: dict[str, int] | None = None
    status: str | None = None
    exit_code: int | None = None

"""The transcript format: what an agent did in one run, capped, next to the run's receipt.

A transcript is one JSON Lines file (``<receipt stem>.transcript.jsonl``: the fields below
but ``events`` on the first line, then one event per line) named by the receipt's
``transcript_file`` and vouched for by its ``transcript_sha256``. Its events are the
runner's event stream normalised — ``message`` (the model's text), ``tool_call`` (name and
input), ``tool_result`` (the tool's output, truncated), ``usage`` (tokens of one turn) — and,
for every runner, the closing ``end`` (status, exit code, the draft) and ``stderr`` (its tail).
A runner without a structured stream (``command``, ``echo``) has only the closing events and
the tool calls its result names.

Bounded against a flooding agent: every string is cut at ``Caps.field_chars``, the stream at
``Caps.events`` events and ``Caps.stream_bytes`` bytes of canonical JSON (the closing events
are cut per field only); ``events_dropped`` and ``fields_truncated`` say what was left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from hz.runtime.artifacts.models import Frozen

EventType = Literal["message", "tool_call", "tool_result", "usage", "end", "stderr"]


@dataclass(frozen=True, slots=True)
class Caps:
    """How much of a run a transcript keeps."""

    events: int = 2000
    stream_bytes: int = 1024 * 1024
    field_chars: int = 4000


class TranscriptEvent(Frozen):
    """One normalised event. ``turn`` counts the model's turns from 1 (``None``: unknown);
    ``usage`` holds token counts by the names of ``hz.runtime.artifacts.result.Usage``;
    ``status`` is a result status (``end`` only)."""

    type: EventType
    turn: int | None = None
    name: str | None = None
    text: str | None = None
    input: JsonValue = None
    is_error: bool | None = None
    usage: dict[str, int] | None = None
    status: str | None = None
    exit_code: int | None = None


class Transcript(Frozen):
    """One transcript file."""

    kind: Literal["transcript"] = "transcript"
    format_version: Literal[1] = 1
    runner: str
    events: tuple[TranscriptEvent, ...]
    events_dropped: int = 0
    fields_truncated: int = 0
    redacted: int = 0
    caps: dict[str, int]

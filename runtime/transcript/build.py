"""A run's transcript from its result: the runner's recorded events, else what the result
itself says (its tool calls), then the closing ``end`` and ``stderr`` events."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.artifacts.transcript import Caps, Transcript
from hz.runtime.transcript.record import Recorder

#: Not ``.json``: whoever globs ``*.json`` in a receipt directory still finds only receipts.
TRANSCRIPT_SUFFIX = ".transcript.jsonl"


def transcript_of(
    result: AgentResult, *, caps: Caps | None = None, environ: Mapping[str, str] | None = None
) -> Transcript:
    recorder = Recorder(caps, environ)
    # ``redacted`` alone is what hz replaced in the result, not a runner's recording.
    if result.transcript_events or result.transcript_counts.keys() - {"redacted"}:
        recorder.extend(result.transcript_events, result.transcript_counts)
    else:  # no structured stream: the tool calls the result names, if any
        for call in result.tool_calls:
            recorder.add("tool_call", name=call.name, input=call.input, is_error=call.is_error)
        recorder.redacted += result.transcript_counts.get("redacted", 0)
    recorder.close(
        "end",
        status=result.status,
        exit_code=result.exit_code,
        text=result.draft,
        usage=result.usage.to_json_data(),
        turn=result.turns,
    )
    if result.stderr_tail:
        recorder.close("stderr", text=result.stderr_tail)
    return Transcript(
        runner=result.runner,
        events=tuple(recorder.events),
        events_dropped=recorder.dropped,
        fields_truncated=recorder.truncated,
        redacted=recorder.redacted,
        caps={
            "events": recorder.caps.events,
            "stream_bytes": recorder.caps.stream_bytes,
            "field_chars": recorder.caps.field_chars,
        },
    )


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def transcript_bytes(transcript: Transcript) -> bytes:
    """The file's bytes, what the receipt's ``transcript_sha256`` is of: JSON Lines, the
    transcript without its events first, then one line per event (``None`` fields left out)."""
    header = transcript.model_dump(mode="json", exclude={"events"})
    lines = [_line(header)]
    lines += [_line(e.model_dump(mode="json", exclude_none=True)) for e in transcript.events]
    return "".join(lines).encode("utf-8")


def read_transcript(data: bytes) -> Transcript:
    """A transcript file's bytes back as a ``Transcript`` (``ValueError`` when they are not)."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        raise ValueError("the file is empty")
    try:
        header = strict_json.loads(lines[0])
        events = [strict_json.loads(line) for line in lines[1:]]
    except strict_json.JsonError as e:
        raise ValueError(f"not JSON Lines ({e})") from e
    if not isinstance(header, dict):
        raise ValueError("its first line is not a JSON object")
    try:
        return Transcript.model_validate({**header, "events": events})
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the transcript"
        raise ValueError(f"not in the transcript format ({where}: {first['msg']})") from e

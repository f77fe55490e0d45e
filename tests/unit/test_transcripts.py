"""Transcripts: capped, truncated and redacted as recorded; vouched for by the receipt."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.result import AgentResult, ToolCall
from hz.runtime.artifacts.transcript import Caps, TranscriptEvent
from hz.runtime.receipts.show import format_transcript
from hz.runtime.receipts.verify import verify_chain
from hz.runtime.receipts.write import receipt_body, write_receipt
from hz.runtime.transcript.build import read_transcript, transcript_bytes, transcript_of
from hz.runtime.transcript.record import Recorder, secret_values
from tests.helpers.packets import make_packet

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SECRET = "sk-planted-0123456789"


def test_secret_values_by_name_longest_first() -> None:
    environ = {
        "GITHUB_TOKEN": "ghp_abcdefgh",
        "MY_API_KEY": "ghp_abcdefgh-longer",
        "PASSWORD": "short",
        "HOME": "/home/someone-long",
    }
    assert secret_values(environ) == (
        ("ghp_abcdefgh-longer", "MY_API_KEY"),
        ("ghp_abcdefgh", "GITHUB_TOKEN"),
    )


def test_fields_are_redacted_then_truncated() -> None:
    recorder = Recorder(Caps(field_chars=40), {"ANTHROPIC_API_KEY": SECRET})
    recorder.add("message", turn=1, text=f"the key is {SECRET}!")
    recorder.add("tool_call", name="Bash", input={"command": f"echo {SECRET}", "n": 3})
    recorder.add("tool_result", name="Bash", text="x" * 50)
    assert [e.model_dump(exclude_defaults=True) for e in recorder.events] == [
        {"type": "message", "turn": 1, "text": "the key is [redacted ANTHROPIC_API_KEY]!"},
        {
            "type": "tool_call",
            "name": "Bash",
            "input": {"command": "echo [redacted ANTHROPIC_API_KEY]", "n": 3},
        },
        {"type": "tool_result", "name": "Bash", "text": "x" * 40 + "… [10 more characters]"},
    ]
    assert (recorder.redacted, recorder.truncated) == (2, 1)


def test_a_large_input_becomes_its_truncated_json_text() -> None:
    recorder = Recorder(Caps(field_chars=20), {})
    recorder.add("tool_call", name="Edit", input={"a": "1" * 15, "b": "2" * 15, "c": "3" * 15})
    assert recorder.events[0].input == '{"a": "1111111111111… [52 more characters]'


def test_the_stream_is_capped_by_events_and_bytes() -> None:
    by_count = Recorder(Caps(events=3), {})
    for n in range(10):
        by_count.add("message", text=str(n))
    by_count.close("end", status="completed")
    assert [e.text for e in by_count.events] == ["0", "1", "2", None]
    assert by_count.dropped == 7
    by_bytes = Recorder(Caps(stream_bytes=100, field_chars=30), {})
    for _ in range(10):
        by_bytes.add("message", text="y" * 30)
    assert (len(by_bytes.events), by_bytes.dropped) == (1, 9)


def test_a_flood_of_events_costs_a_bounded_transcript() -> None:
    events = tuple(TranscriptEvent(type="message", text="z" * 10_000) for _ in range(5000))
    result = AgentResult(
        runner="claude-code",
        status="completed",
        draft="d" * 1_000_000,
        transcript_events=events,
        transcript_counts={"dropped": 7, "truncated": 5000, "redacted": 1},
    )
    transcript = transcript_of(result, environ={})
    data = transcript_bytes(transcript)
    assert len(data) < Caps().stream_bytes + 3 * Caps().field_chars + 4096
    assert transcript.events_dropped == 5000 - len(transcript.events) + 1 + 7
    assert transcript.redacted == 1
    assert transcript.events[-1].type == "end"
    assert transcript.events[-1].text == "d" * 4000 + "… [996000 more characters]"


def test_a_runner_without_a_stream_records_its_result() -> None:
    result = AgentResult(
        runner="command",
        status="failed",
        tool_calls=(ToolCall(name="Read", input={"path": "a"}, is_error=False),),
        exit_code=3,
        stderr_tail="boom\n\x1b[31mred\x1b[0m",
        turns=None,
    )
    data = transcript_bytes(transcript_of(result, environ={}))
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert lines[0] == {
        "kind": "transcript",
        "format_version": 1,
        "runner": "command",
        "events_dropped": 0,
        "fields_truncated": 0,
        "redacted": 0,
        "caps": {"events": 2000, "stream_bytes": 1048576, "field_chars": 4000},
    }
    document = read_transcript(data).model_dump(mode="json", exclude_none=True)
    assert read_transcript(data) == transcript_of(result, environ={})
    assert (
        lines[1:]
        == document["events"]
        == [
            {"type": "tool_call", "name": "Read", "input": {"path": "a"}, "is_error": False},
            {
                "type": "end",
                "status": "failed",
                "exit_code": 3,
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
            },
            {"type": "stderr", "text": "boom\n\x1b[31mred\x1b[0m"},
        ]
    )
    assert format_transcript("t.json", document) == (
        "transcript t.json (command: 3 events)\n"
        "tool call Read\n"
        '    {"path": "a"}\n'
        "end: failed, exit 3; usage: in 0, out 0, cache read 0, cache write 0\n"
        "stderr (tail):\n"
        "    boom\n"
        "    \\x1b[31mred\\x1b[0m\n"
    )


def _write(directory: Path, result: AgentResult) -> Path:
    transcript = transcript_bytes(transcript_of(result, environ={}))
    body = receipt_body(make_packet(), result, started_at=NOW, ended_at=NOW, transcript=transcript)
    return write_receipt(directory, body, transcript)


def test_the_receipt_names_its_transcript_and_verify_checks_it(tmp_path: Path) -> None:
    result = AgentResult(runner="echo", status="completed", draft="hi")
    first = _write(tmp_path, result)
    second = _write(tmp_path, result)
    receipt = json.loads(first.read_text())
    transcript = tmp_path / "000001-greet.transcript.jsonl"
    assert receipt["transcript_file"] == transcript.name
    assert receipt["transcript_sha256"] == sha256_hex(transcript.read_bytes())
    assert verify_chain(tmp_path) == (2, [])
    transcript.write_text(transcript.read_text().replace('"hi"', '"bye"'))
    assert "bye" in transcript.read_text()
    (tmp_path / "000002-greet.transcript.jsonl").unlink()
    assert second.name == "000002-greet.json"
    assert verify_chain(tmp_path) == (
        2,
        [
            "000001-greet.json: its transcript 000001-greet.transcript.jsonl was changed after "
            "it was written (its sha256 does not match)",
            "000002-greet.json: its transcript 000002-greet.transcript.jsonl is missing",
        ],
    )


def test_a_file_that_is_no_transcript_is_refused() -> None:
    cases = {
        b"": "the file is empty",
        b"[1]\n": "its first line is not a JSON object",
        b'{"kind": "transcript"}\n{"type": "end"\n': "not JSON Lines (Expecting ',' delimiter: "
        "line 1 column 15 (char 14))",
        b'{"kind": "receipt"}\n': "not in the transcript format (kind: Input should be "
        "'transcript')",
    }
    for data, message in cases.items():
        with pytest.raises(ValueError) as raised:
            read_transcript(data)
        assert str(raised.value) == message

"""The stream-json parser over lines recorded from the real CLI (tests/unit/claude_streams)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hz.runtime.artifacts.result import ToolCall, Usage
from hz.runtime.runners.claude_code.stream import StreamParser, StreamSummary

STREAMS = Path(__file__).parent / "claude_streams"
RECORDED = sorted(p.stem for p in STREAMS.glob("*.jsonl"))


def parse_lines(lines: list[str]) -> tuple[StreamParser, list[bool]]:
    parser = StreamParser()
    return parser, [parser.feed(line) for line in lines]


def recorded(name: str) -> list[str]:
    return (STREAMS / f"{name}.jsonl").read_text().splitlines()


def summary_of(name: str) -> StreamSummary:
    parser, _ = parse_lines(recorded(name))
    return parser.summary()


def test_every_scenario_was_recorded() -> None:
    assert RECORDED == [
        "bash_refused",
        "budget",
        "max_turns",
        "not_logged_in",
        "plain",
        "rate_limited",
        "rate_limited_retried",
        "read",
        "read_outside",
        "server_error",
        "structured_invalid",
        "structured_valid",
        "unauthorized",
        "write_denied",
        "write_denied_then_error",
    ]


@pytest.mark.parametrize("name", RECORDED)
def test_done_exactly_at_the_result_line(name: str) -> None:
    lines = recorded(name)
    _, done = parse_lines(lines)
    last = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "result")
    assert done == [i >= last for i in range(len(lines))]


def test_plain_answer() -> None:
    summary = summary_of("plain")
    assert (summary.model, summary.api_key_source) == ("claude-fake-1", "ANTHROPIC_API_KEY")
    assert summary.result is not None
    assert summary.result.subtype == "success"
    assert summary.result.is_error is False
    assert summary.result.text == "Hello there"
    assert summary.result.num_turns == 1
    assert summary.result.total_cost_usd == 0.000188
    assert summary.result.usage == Usage(input_tokens=12, output_tokens=7)
    assert summary.result.has_structured_output is False
    assert summary.tool_calls == ()
    assert summary.skipped_lines == 0


def test_tool_calls_carry_input_and_whether_the_tool_refused() -> None:
    [read] = summary_of("read").tool_calls
    assert read.name == "Read"
    assert read.is_error is False
    assert str(read.input).endswith("notes.txt'}")
    assert summary_of("bash_refused").tool_calls == (
        ToolCall(name="Bash", input={"command": "touch pwned"}, is_error=True),
    )


def test_repeated_tool_use_ids_pair_with_their_results_in_order() -> None:
    calls = summary_of("structured_invalid").tool_calls
    assert [c.name for c in calls] == ["StructuredOutput"] * 5
    assert all(c.is_error is True for c in calls)


def test_error_results_take_usage_from_model_usage() -> None:
    result = summary_of("budget").result
    assert result is not None
    assert result.usage == Usage(input_tokens=12, output_tokens=2_000_000)
    assert result.total_cost_usd == 40.000048
    assert result.errors == ("Reached maximum budget ($0.5)",)


def test_synthetic_error_messages_are_not_turns() -> None:
    parser, _ = parse_lines(recorded("rate_limited"))
    assert parser.turns == 0
    summary = parser.summary()
    assert summary.assistant_errors == ("rate_limit",)
    assert summary.result is not None
    assert summary.result.api_error_status == 429


def test_permission_denials_and_the_system_event_for_them() -> None:
    summary = summary_of("write_denied_then_error")
    assert summary.result is not None
    assert summary.result.permission_denials == ("Write",)
    assert summary.unknown_events == ()


def test_structured_output_is_kept() -> None:
    result = summary_of("structured_valid").result
    assert result is not None
    assert (result.has_structured_output, result.structured_output) == (True, {"n": 3})


def test_unknown_events_and_subtypes_are_counted_and_ignored() -> None:
    lines = recorded("plain")
    extra = [
        '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}',
        '{"type":"system","subtype":"ui_invalidate"}',
        '{"type":"system","subtype":"ui_invalidate"}',
        '{"type":"stream_event","event":{}}',
        '{"no_type":true}',
    ]
    summary = StreamParser()
    for line in [*extra, *lines]:
        summary.feed(line)
    got = summary.summary()
    assert got.unknown_events == (("?", 1), ("stream_event", 1), ("system/ui_invalidate", 2))
    assert got.result is not None
    assert got.result.text == "Hello there"


def test_non_json_and_over_long_lines_are_skipped_and_counted() -> None:
    parser = StreamParser(max_line_chars=100)
    for line in ["not json", "[1, 2]", '"a string"', "", "x" * 101, '{"type":"result"']:
        assert parser.feed(line) is False
    assert parser.summary().skipped_lines == 5
    assert parser.summary().result is None


def test_every_field_is_optional_and_mistyped_fields_read_as_absent() -> None:
    parser = StreamParser()
    parser.feed('{"type":"system","subtype":"init","model":5,"apiKeySource":null}')
    parser.feed('{"type":"assistant","message":{"content":[{"type":"tool_use"},"junk",null]}}')
    parser.feed('{"type":"assistant","message":"nonsense"}')
    parser.feed('{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":7}]}}')
    line = (
        '{"type":"result","subtype":3,"is_error":"yes","num_turns":true,'
        '"total_cost_usd":"1","usage":{"input_tokens":-5,"output_tokens":2.5},'
        '"errors":["a",1],"permission_denials":[{"tool_name":4},"x"]}'
    )
    assert parser.feed(line) is True
    summary = parser.summary()
    assert (summary.model, summary.api_key_source) == (None, None)
    assert summary.tool_calls == (ToolCall(name="?", input=None, is_error=None),)
    result = summary.result
    assert result is not None
    assert (result.subtype, result.is_error, result.num_turns) == (None, False, None)
    assert (result.total_cost_usd, result.usage) == (None, Usage())
    assert (result.errors, result.permission_denials) == (("a",), ("?",))


def test_a_second_result_line_does_not_replace_the_first() -> None:
    lines = recorded("plain")
    parser, _ = parse_lines([*lines, lines[-1].replace("Hello there", "Other")])
    result = parser.summary().result
    assert result is not None
    assert result.text == "Hello there"


def test_rate_limit_event_rejection_gives_the_reset_time() -> None:
    parser = StreamParser()
    parser.feed('{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":99}}')
    assert parser.summary().rate_limit_resets_at == 99.0


def test_api_retry_after_a_429_gives_the_clis_retry_delay() -> None:
    summary = summary_of("rate_limited_retried")
    assert summary.rate_limit_retry_delay == 1.241
    assert summary.unknown_events == ()
    assert summary_of("rate_limited").rate_limit_retry_delay is None


def test_a_session_without_result_keeps_the_streamed_usage() -> None:
    # Lines of one message repeat its usage; a killed session has no result event.
    def line(message_id: str, block: dict[str, object], usage: dict[str, int]) -> str:
        message = {"id": message_id, "content": [block], "usage": usage}
        return json.dumps({"type": "assistant", "message": message})

    parser = StreamParser()
    first = {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 100}
    parser.feed(line("m1", {"type": "text", "text": "looking"}, first))
    parser.feed(line("m1", {"type": "tool_use", "id": "t1", "name": "Grep"}, first))
    parser.feed(line("m2", {"type": "tool_use", "id": "t2", "name": "Grep"}, {"output_tokens": 3}))
    summary = parser.summary()
    assert (summary.result, parser.turns) == (None, 2)
    assert summary.streamed_usage == Usage(
        input_tokens=10, output_tokens=5, cache_read_input_tokens=100
    )


def test_a_lone_surrogate_in_the_answer_is_replaced_and_the_cost_kept() -> None:
    line = (
        '{"type": "result", "subtype": "success", "is_error": false, "num_turns": 1, '
        '"result": "bad \\ud800 text", "total_cost_usd": 0.25}'
    )
    parser, done = parse_lines([line])
    result = parser.summary().result
    assert done == [True]
    assert result is not None
    assert (result.text, result.total_cost_usd) == ("bad \ufffd text", 0.25)


@pytest.mark.parametrize(
    "answer",
    [
        '{"type": "result", "subtype": "success", "total_cost_usd": NaN}',
        '{"type": "result", "subtype": "success", "num_turns": ' + "9" * 5000 + "}",
        '{"type": "result", "structured_output": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
)
def test_result_lines_that_are_no_json_are_skipped(answer: str) -> None:
    parser, done = parse_lines([answer])
    assert (done, parser.summary().result, parser.summary().skipped_lines) == ([False], None, 1)


def test_the_transcript_has_messages_tool_calls_results_and_usage_per_turn() -> None:
    parser, _ = parse_lines(recorded("read"))
    parser.summary()
    path = "/tmp/tmp1eb4wq7o/tmpubdn7oky/notes.txt"
    usage = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert [e.model_dump(exclude_none=True) for e in parser.transcript.events] == [
        {"type": "tool_call", "turn": 1, "name": "Read", "input": {"file_path": path}},
        {
            "type": "tool_result",
            "turn": 1,
            "name": "Read",
            "text": "1\thi from the notes\n2\t",
            "is_error": False,
        },
        {"type": "usage", "turn": 1, "usage": {"input_tokens": 12, "output_tokens": 1, **usage}},
        {"type": "message", "turn": 2, "text": "It says hi"},
        {"type": "usage", "turn": 2, "usage": {"input_tokens": 12, "output_tokens": 1, **usage}},
    ]
    parser.summary()  # a second summary records nothing more
    assert len(parser.transcript.events) == 5


def test_a_flood_past_the_output_cap_keeps_bounded_calls_names_and_codes() -> None:
    # The CLI prints on past the 8 MiB of stdout hz keeps: what the parser keeps is capped.
    mib = "x" * (1024 * 1024)
    parser = StreamParser()
    for n in range(40):
        use = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": mib}}
        message = {"id": f"m{n}", "content": [use]}
        parser.feed(json.dumps({"type": "assistant", "message": message}))
        parser.feed(json.dumps({"type": f"future/{n:02d}/{mib}"}))
        parser.feed(json.dumps({"type": "assistant", "error": f"code/{n:02d}/{mib}"}))
    summary = parser.summary()
    left_out = f"(an input of {len(mib) + 17:,} bytes, over the output cap)"
    assert summary.tool_calls == (ToolCall(name="Read", input=left_out),) * 40
    name = f"(a name of {len(mib) + 10:,} characters, over the output cap)"
    assert summary.unknown_events == ((name, 40),)
    assert summary.assistant_errors == (name.replace("586", "584"),)
    assert (parser.kept.truncated, parser.kept.notes()) == (
        True,
        {"tool inputs left out (output cap)": 40},
    )


def test_a_flood_of_tiny_tool_calls_and_turns_keeps_a_megabyte_and_one_usage_sum() -> None:
    parser = StreamParser()
    for n in range(40_000):
        use = {"type": "tool_use", "id": f"t{n}", "name": "Grep", "input": {}}
        usage = {"input_tokens": 1, "output_tokens": 2}
        message = {"id": f"m{n}", "content": [use], "usage": usage}
        parser.feed(json.dumps({"type": "assistant", "message": message}))
    summary = parser.summary()
    kept = len(summary.tool_calls)
    assert 20_000 < kept < 40_000
    assert parser.kept.notes() == {"tool calls left out (output cap)": 40_000 - kept}
    assert (parser.turns, summary.streamed_usage) == (
        40_000,
        Usage(input_tokens=40_000, output_tokens=80_000),
    )

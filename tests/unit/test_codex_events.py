"""The ``codex exec --json`` parser and classifier, on event lines recorded from the pinned CLI
(0.171.0) driven by tests/fakes/responses_server.py."""

from __future__ import annotations

import json

import pytest

from hz.runtime.artifacts.result import ToolCall, Usage
from hz.runtime.runners.codex.classify import classify, http_status
from hz.runtime.runners.codex.events import CodexStream
from hz.runtime.runners.outcome import RunEnd, Verdict

THREAD = '{"type":"thread.started","thread_id":"01a228c6-824a-7043-b1b3-6f73d43f4e82"}'
METADATA_WARNING = (
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for'
    " `some-model` not found. Defaulting to fallback metadata; this can degrade performance and"
    ' cause issues."}}'
)
TURN = '{"type":"turn.started"}'
ANSWER = '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"done"}}'
COMPLETED = (
    '{"type":"turn.completed","usage":{"input_tokens":80,"cached_input_tokens":16,'
    '"cache_write_input_tokens":0,"output_tokens":18,"reasoning_output_tokens":4}}'
)
COMMAND_STARTED = (
    '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":'
    '"/bin/bash -lc \'ls /nonexistent\'","aggregated_output":"","exit_code":null,'
    '"status":"in_progress"}}'
)
COMMAND_FAILED = (
    '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":'
    '"/bin/bash -lc \'ls /nonexistent\'","aggregated_output":"ls: cannot access '
    '\'/nonexistent\': No such file or directory\\n","exit_code":2,"status":"failed"}}'
)
RETRY = (
    '{"type":"error","message":"Reconnecting... 1/2 (exceeded retry limit, last status: 429 Too'
    ' Many Requests)"}'
)
ERROR_429 = '{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}'
FAILED_429 = (
    '{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many'
    ' Requests"}}'
)
FAILED_401 = (
    '{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API'
    ' key provided, url: http://127.0.0.1:46275/v1/responses"}}'
)
FAILED_QUOTA = (
    '{"type":"turn.failed","error":{"message":"Quota exceeded. Check your plan and billing'
    ' details."}}'
)
CLEAN_EXIT = RunEnd(exit_code=0, timed_out=False, timeout_seconds=60, describe_exit="exited")


def feed(*lines: str) -> CodexStream:
    stream = CodexStream()
    for line in lines:
        stream.feed(line.encode())
    return stream


def test_plain_answer_with_metadata_warning() -> None:
    stream = feed(THREAD, METADATA_WARNING, TURN, ANSWER, COMPLETED)
    assert stream.thread_id == "01a228c6-824a-7043-b1b3-6f73d43f4e82"
    assert stream.final_message == "done"
    assert stream.turns_started == 1
    assert stream.errors == []
    assert stream.warnings == [
        "Model metadata for `some-model` not found. Defaulting to fallback metadata; this can "
        "degrade performance and cause issues."
    ]
    assert classify(stream, CLEAN_EXIT) == Verdict("completed")


def test_usage_keeps_cached_input_apart() -> None:
    assert feed(COMPLETED).usage == Usage(
        input_tokens=64, output_tokens=18, cache_read_input_tokens=16
    )


def test_feed_says_done_only_at_turn_completed() -> None:
    stream = CodexStream()
    assert [stream.feed(line) for line in (THREAD, TURN, ANSWER, COMPLETED)] == [
        False,
        False,
        False,
        True,
    ]


def test_command_execution_is_one_tool_call_updated_in_place() -> None:
    stream = feed(THREAD, TURN, COMMAND_STARTED, COMMAND_FAILED, ANSWER, COMPLETED)
    assert stream.tool_calls == (
        ToolCall(
            name="command_execution",
            input={"command": "/bin/bash -lc 'ls /nonexistent'"},
            is_error=True,
        ),
    )


def test_a_command_that_never_completed_stays_open() -> None:
    assert feed(COMMAND_STARTED).tool_calls[0].is_error is None


def test_mcp_and_web_search_items_are_tool_calls() -> None:
    mcp = (
        '{"type":"item.completed","item":{"id":"i1","type":"mcp_tool_call","server":"docs",'
        '"tool":"search","arguments":{"q":"x"},"status":"completed"}}'
    )
    web = '{"type":"item.completed","item":{"id":"i2","type":"web_search","query":"hz runner"}}'
    assert feed(mcp, web).tool_calls == (
        ToolCall(name="mcp__docs__search", input={"q": "x"}, is_error=False),
        ToolCall(name="web_search", input={"query": "hz runner"}),
    )


def test_retry_notices_are_not_failures() -> None:
    stream = feed(THREAD, TURN, RETRY, ANSWER, COMPLETED)
    assert stream.errors == []
    assert classify(stream, CLEAN_EXIT) == Verdict("completed")


def test_unknown_events_and_junk_lines_are_ignored() -> None:
    stream = feed(
        THREAD,
        '{"type":"thread.renamed"}',
        "not json",
        "[1, 2]",
        '{"type":"item.completed","item":{"id":"x","type":"hologram"}}',
        TURN,
        ANSWER,
        COMPLETED,
    )
    assert (stream.tool_calls, stream.errors, stream.final_message) == ((), [], "done")
    assert classify(stream, CLEAN_EXIT) == Verdict("completed")


@pytest.mark.parametrize(
    ("lines", "verdict"),
    [
        (
            (ERROR_429, FAILED_429),
            Verdict(
                "failed", "rate_limited", "exceeded retry limit, last status: 429 Too Many Requests"
            ),
        ),
        (
            (FAILED_401,),
            Verdict(
                "failed",
                "auth_misconfigured",
                "unexpected status 401 Unauthorized: Incorrect API key provided, url: "
                "http://127.0.0.1:46275/v1/responses",
            ),
        ),
        (
            (FAILED_QUOTA,),
            Verdict(
                "failed", "rate_limited", "Quota exceeded. Check your plan and billing details."
            ),
        ),
        (
            ('{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}',),
            Verdict("failed", "runtime_error", "stream disconnected before completion"),
        ),
    ],
)
def test_failed_turns(lines: tuple[str, ...], verdict: Verdict) -> None:
    end = RunEnd(exit_code=1, timed_out=False, timeout_seconds=60, describe_exit="exited with 1")
    assert classify(feed(THREAD, TURN, *lines), end) == verdict


def test_a_declined_command_on_a_failed_turn_is_a_permission_refusal() -> None:
    declined = (
        '{"type":"item.completed","item":{"id":"item_1","type":"command_execution",'
        '"command":"touch x","aggregated_output":"","exit_code":null,"status":"declined"}}'
    )
    failed = '{"type":"turn.failed","error":{"message":"command rejected"}}'
    end = RunEnd(exit_code=1, timed_out=False, timeout_seconds=60)
    assert classify(feed(TURN, declined, failed), end) == Verdict(
        "failed", "permission_denied", "command rejected"
    )
    # A declined command on a turn the CLI completed is a result like any other.
    assert classify(feed(TURN, declined, ANSWER, COMPLETED), CLEAN_EXIT) == Verdict("completed")


def test_the_model_text_never_decides() -> None:
    text = (
        '{"type":"item.completed","item":{"id":"m","type":"agent_message",'
        '"text":"unexpected status 401 Unauthorized"}}'
    )
    end = RunEnd(exit_code=0, timed_out=False, timeout_seconds=60, describe_exit="exited with 0")
    assert classify(feed(TURN, text), end) == Verdict(
        "failed", "runtime_error", "codex exited with 0 without turn.completed"
    )


def test_error_without_turn_failed_and_exit() -> None:
    end = RunEnd(exit_code=1, timed_out=False, timeout_seconds=60, describe_exit="exited with 1")
    assert classify(feed(THREAD, TURN, ERROR_429), end) == Verdict(
        "failed", "rate_limited", "exceeded retry limit, last status: 429 Too Many Requests"
    )


def test_timeout_before_turn_completed() -> None:
    end = RunEnd(exit_code=None, timed_out=True, timeout_seconds=7.5)
    assert classify(feed(THREAD, TURN), end) == Verdict("timeout", None, "timed out after 7.5 s")


def test_a_timeout_while_the_cli_waits_to_retry_keeps_its_notice() -> None:
    end = RunEnd(exit_code=None, timed_out=True, timeout_seconds=4)
    notice = "Reconnecting... 1/2 (exceeded retry limit, last status: 429 Too Many Requests)"
    assert classify(feed(THREAD, METADATA_WARNING, TURN, RETRY), end) == Verdict(
        "failed",
        "rate_limited",
        f"timed out after 4 s while the CLI waited to retry after HTTP 429; its last notice: "
        f"{notice}",
    )
    # The model answered after the retry: the notice is history, not why the run ended.
    later = feed(THREAD, TURN, RETRY, COMMAND_STARTED)
    assert classify(later, end) == Verdict("timeout", None, "timed out after 4 s")
    dropped = (
        '{"type":"error","message":"Reconnecting... 3/5 (stream disconnected before completion)"}'
    )
    assert classify(feed(THREAD, TURN, dropped), end) == Verdict(
        "timeout",
        None,
        "timed out after 4 s while the CLI waited to retry; its last notice: Reconnecting... 3/5 "
        "(stream disconnected before completion)",
    )
    # A 429 quoted from elsewhere in a notice does not make it one.
    quoted = '{"type":"error","message":"Reconnecting... 1/2 (it said last status: 429 …)"}'
    assert classify(feed(THREAD, TURN, quoted), end).failure_kind is None
    flood = json.dumps({"type": "error", "message": "Reconnecting... " + "\x1b" * 10_000})
    assert len(feed(THREAD, TURN, flood).retry_notice or "") == 500


def test_lingering_after_turn_completed_is_completed() -> None:
    end = RunEnd(exit_code=None, timed_out=False, timeout_seconds=60, finished_after_done=True)
    assert classify(feed(TURN, ANSWER, COMPLETED), end) == Verdict("completed")


def test_turn_completed_without_answer() -> None:
    assert classify(feed(TURN, COMPLETED), CLEAN_EXIT) == Verdict(
        "failed", "runtime_error", "the turn completed without an answer"
    )


def test_launch_failure() -> None:
    end = RunEnd(None, False, 60, launch_error="codex: program not found on PATH")
    assert classify(CodexStream(), end) == Verdict(
        "failed", "launch_failed", "codex did not start: codex: program not found on PATH"
    )


def test_truncated_output_without_result() -> None:
    end = RunEnd(exit_code=0, timed_out=False, timeout_seconds=60, output_truncated=True)
    assert classify(feed(TURN), end) == Verdict(
        "failed", "output_limit", "codex output exceeded the capture limit"
    )


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("exceeded retry limit, last status: 429 Too Many Requests", 429),
        ("unexpected status 403 Forbidden: no", 403),
        ("the model said unexpected status 401", None),
        ("Reconnecting... 1/2 (exceeded retry limit, last status: 429 Too Many Requests)", None),
    ],
)
def test_http_status_only_from_the_cli_forms(message: str, status: int | None) -> None:
    assert http_status(message) == status


def test_the_transcript_has_completed_items_and_usage_per_turn() -> None:
    stream = feed(THREAD, TURN, COMMAND_STARTED, COMMAND_FAILED, ANSWER, COMPLETED)
    assert [e.model_dump(exclude_none=True) for e in stream.transcript.events] == [
        {
            "type": "tool_call",
            "turn": 1,
            "name": "command_execution",
            "input": {"command": "/bin/bash -lc 'ls /nonexistent'"},
        },
        {
            "type": "tool_result",
            "turn": 1,
            "name": "command_execution",
            "text": "ls: cannot access '/nonexistent': No such file or directory\n",
            "is_error": True,
        },
        {"type": "message", "turn": 1, "text": "done"},
        {
            "type": "usage",
            "turn": 1,
            "usage": {
                "input_tokens": 64,
                "output_tokens": 18,
                "cache_read_input_tokens": 16,
                "cache_creation_input_tokens": 0,
            },
        },
    ]


def test_a_flood_past_the_output_cap_keeps_bounded_calls_and_messages() -> None:
    # codex prints on past the 8 MiB of stdout hz keeps: what the parser keeps is capped.
    mib = "x" * (1024 * 1024)
    stream = CodexStream()
    for n in range(40):
        item = {"id": f"c{n}", "type": "command_execution", "command": mib, "status": "completed"}
        stream.feed(json.dumps({"type": "item.completed", "item": item}))
        stream.feed(json.dumps({"type": "error", "message": f"e{n}"}))
        stream.feed(
            json.dumps({"type": "item.completed", "item": {"type": "error", "message": f"w{n}"}})
        )
    left_out = f"(an input of {len(mib) + 15:,} bytes, over the output cap)"
    assert (
        stream.tool_calls
        == (ToolCall(name="command_execution", input=left_out, is_error=False),) * 40
    )
    assert (stream.errors, stream.warnings) == (
        ["e36", "e37", "e38", "e39"],
        ["w36", "w37", "w38", "w39"],
    )
    assert stream.kept.notes() == {"tool inputs left out (output cap)": 40}

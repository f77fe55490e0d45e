"""The output cap every result is held to (``hz.runtime.runners.output_cap.bounded``), whatever
runner made it: a plugin's result included."""

from __future__ import annotations

from hz.runtime.artifacts.result import AgentResult, ToolCall
from hz.runtime.runners.output_cap import MAX_OUTPUT, MAX_RECORDS, bounded

MIB = 1024 * 1024


def test_a_result_within_the_caps_is_kept_as_it_is() -> None:
    result = AgentResult(
        runner="x",
        status="completed",
        draft="d" * (MAX_OUTPUT - MAX_RECORDS),
        tool_calls=(ToolCall(name="Read", input={"file_path": "a"}),),
        protocol_notes={"unknown notification x": 3},
    )
    assert bounded(result) is result


def test_a_completed_answer_over_the_cap_is_cut_and_fails_as_output_limit() -> None:
    result = AgentResult(
        runner="x", status="completed", draft="é" * (4 * MIB), structured_output={"a": 1}
    )
    cut = bounded(result)
    assert cut.model_dump(include={"status", "failure_kind", "reason", "output_truncated"}) == {
        "status": "failed",
        "failure_kind": "output_limit",
        "reason": "the answer is larger than the output cap (8 MiB for a session's output in "
        "all): its first 7,340,032 bytes are kept",
        "output_truncated": True,
    }
    assert (cut.draft, cut.structured_output) == ("é" * (7 * MIB // 2), None)


def test_a_failed_runs_long_draft_is_cut_and_keeps_its_status() -> None:
    result = AgentResult(
        runner="x", status="failed", failure_kind="runtime_error", reason="r", draft="d" * 9 * MIB
    )
    cut = bounded(result)
    assert (cut.status, cut.failure_kind, cut.reason, len(cut.draft or "")) == (
        "failed",
        "runtime_error",
        "r",
        7 * MIB,
    )


def test_names_reason_notes_and_tool_calls_are_held_to_their_caps() -> None:
    result = AgentResult(
        runner="x",
        model="m" * 1000,
        status="failed",
        reason="r" * 5000,
        stderr_tail="e" * 5000 + "end",
        tool_calls=(
            ToolCall(name="n" * 300, input={"command": "c" * (2 * MIB)}),
            *(ToolCall(name="ls", input={"path": "p" * 200}) for _ in range(10_000)),
        ),
        protocol_notes={f"unknown notification {n}": n for n in range(1, 101)},
    )
    cut = bounded(result)
    assert cut.model != result.model
    assert cut.model == "(a name of 1,000 characters, over the output cap)"
    assert cut.reason == "r" * 4000 + "… [1000 more characters]"
    assert cut.stderr_tail == "e" * 4093 + "end"
    assert cut.tool_calls[0] == ToolCall(
        name="(a name of 300 characters, over the output cap)",
        input=f"(an input of {2 * MIB + 15:,} bytes, over the output cap)",
    )
    kept = len(cut.tool_calls)
    assert 3000 < kept < 10_001
    notes = cut.protocol_notes
    assert notes["other (names past the output cap)"] == sum(range(65, 101))
    assert notes["tool calls left out (output cap)"] == 10_001 - kept
    assert notes["tool inputs left out (output cap)"] == 1
    assert len(notes) == 64 + 3
    assert cut.output_truncated is True
    assert len(cut.model_dump_json()) <= MAX_RECORDS

"""The codex-app-server runner against a scripted fake server (tests/fakes/fake_appserver.py):
the protocol's edges that the real CLI does not show on demand — typed failures, approval
requests, unknown notifications, malformed lines, a server that dies mid-turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.result import AgentResult, ToolCall, Usage
from hz.runtime.runners.codex.surface import closed_surface, shell_environment
from hz.runtime.runners.codex_app_server.runner import CodexAppServerRunner
from hz.runtime.runners.codex_app_server.settings import CodexAppServerSettings
from tests.helpers.appserver_env import (
    THREAD,
    TURN,
    TURN_STARTED,
    USAGE,
    answer,
    command_item,
    fake,
    flood,
    turn,
)
from tests.helpers.run_request import run_request


def make_runner(table: dict[str, Any]) -> CodexAppServerRunner:
    return CodexAppServerRunner(CodexAppServerSettings.from_table(table))


def run(program: Path, tmp_path: Path, **extra: Any) -> AgentResult:
    runner = make_runner({"codex_executable": str(program), **extra})
    return runner.run(run_request(tmp_path, prompt="the prompt", contract="the contract"))


def sent(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_a_completed_turn(tmp_path: Path) -> None:
    program, record = fake(tmp_path, [*TURN_STARTED, USAGE, answer("42"), turn("completed")])
    result = run(program, tmp_path, model="m1")
    assert (result.status, result.draft, result.turns) == ("completed", "42", 1)
    assert result.usage == Usage(input_tokens=70, output_tokens=7, cache_read_input_tokens=30)
    assert result.exit_code == 0
    assert [e.model_dump(exclude_none=True) for e in result.transcript_events] == [
        {"type": "message", "turn": 1, "text": "42"},
        {"type": "usage", "turn": 1, "usage": result.usage.to_json_data()},
    ]
    methods = [m.get("method") for m in sent(record)]
    assert methods == ["initialize", "initialized", "thread/start", "turn/start"]
    thread_start, turn_start = sent(record)[2]["params"], sent(record)[3]["params"]
    assert thread_start == {
        "cwd": str(tmp_path),
        "ephemeral": True,
        "sandbox": "read-only",
        "approvalPolicy": "never",
        "baseInstructions": "the contract",
        "model": "m1",
    }
    assert turn_start == {
        "threadId": THREAD,
        "input": [{"type": "text", "text": "the prompt", "text_elements": []}],
    }


def test_a_sandbox_refusal_is_read_from_the_typed_fields(tmp_path: Path) -> None:
    error = {"message": "sandbox denied the write", "codexErrorInfo": "sandboxError"}
    program, _ = fake(tmp_path, [*TURN_STARTED, turn("failed", error)])
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "permission_denied",
        "sandbox denied the write",
    )


def test_words_about_permissions_do_not_make_a_refusal(tmp_path: Path) -> None:
    error = {"message": "Permission denied: the sandbox refused", "codexErrorInfo": "other"}
    program, _ = fake(tmp_path, [*TURN_STARTED, turn("failed", error)])
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "runtime_error",
        "Permission denied: the sandbox refused",
    )


@pytest.mark.parametrize(
    ("info", "kind"),
    [
        ("rateLimitExceeded", "rate_limited"),
        ("usageLimitExceeded", "rate_limited"),
        ("unauthorized", "auth_misconfigured"),
        ({"httpConnectionFailed": {"httpStatusCode": 429}}, "rate_limited"),
        ({"responseStreamConnectionFailed": {"httpStatusCode": 401}}, "auth_misconfigured"),
        ({"httpConnectionFailed": {"httpStatusCode": 500}}, "runtime_error"),
    ],
)
def test_typed_failures(tmp_path: Path, info: Any, kind: str) -> None:
    program, _ = fake(
        tmp_path, [*TURN_STARTED, turn("failed", {"message": "m", "codexErrorInfo": info})]
    )
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == ("failed", kind, "m")


def test_approval_requests_are_declined_and_counted(tmp_path: Path) -> None:
    approval = {
        "id": 77,
        "method": "item/commandExecution/requestApproval",
        "params": {"threadId": THREAD, "turnId": TURN, "itemId": "c1"},
    }
    other = {"id": "x", "method": "item/tool/call", "params": {}}
    steps = [*TURN_STARTED, approval, other, "@sleep 0.5", answer("ok"), turn("completed")]
    program, record = fake(tmp_path, steps, reply=[])
    result = run(program, tmp_path)
    assert (result.status, result.draft) == ("completed", "ok")
    assert result.protocol_notes == {
        "declined item/commandExecution/requestApproval": 1,
        "declined item/tool/call": 1,
    }
    replies = [m for m in sent(record) if "method" not in m]
    assert replies == [
        {"jsonrpc": "2.0", "id": 77, "result": {"decision": "decline"}},
        {
            "jsonrpc": "2.0",
            "id": "x",
            "error": {"code": -32601, "message": "hz does not serve item/tool/call"},
        },
    ]


def test_unknown_notifications_are_counted_and_ignored(tmp_path: Path) -> None:
    unknown = {"method": "thread/futureThing", "params": {"threadId": THREAD}}
    program, _ = fake(tmp_path, [*TURN_STARTED, unknown, unknown, answer("ok"), turn("completed")])
    result = run(program, tmp_path)
    assert (result.status, result.draft) == ("completed", "ok")
    assert result.protocol_notes == {"unknown notification thread/futureThing": 2}


def test_a_malformed_line_before_the_turn_is_a_failed_protocol_error(tmp_path: Path) -> None:
    program, _ = fake(tmp_path, [], thread_start=["@raw {not json"])
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "protocol_error",
        "a malformed line from codex app-server: not JSON: Expecting property name enclosed "
        "in double quotes",
    )
    assert result.protocol_notes == {"malformed lines": 1}


def test_a_malformed_line_once_the_turn_may_run_is_uncertain(tmp_path: Path) -> None:
    program, _ = fake(tmp_path, [*TURN_STARTED, "@raw [1, 2]"])
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == (
        "uncertain",
        "protocol_error",
        "a malformed line from codex app-server: not a JSON object: list",
    )


def test_the_server_ending_mid_turn_is_uncertain(tmp_path: Path) -> None:
    program, _ = fake(tmp_path, [*TURN_STARTED, "@exit 3"])
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == (
        "uncertain",
        "protocol_error",
        "codex app-server ended its output before turn/completed",
    )
    assert result.exit_code == 3


def test_an_error_answer_keeps_the_servers_words(tmp_path: Path) -> None:
    refused = [{"id": "$id", "error": {"code": -32600, "message": "unknown model `m2`"}}]
    program, _ = fake(tmp_path, [], thread_start=refused)
    result = run(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "runtime_error",
        "thread/start: unknown model `m2` (code -32600)",
    )


def test_a_missing_program_is_launch_failed(tmp_path: Path) -> None:
    result = run(tmp_path / "no-such-codex", tmp_path)
    assert (result.status, result.failure_kind) == ("failed", "launch_failed")
    assert result.reason == f"codex did not start: {tmp_path / 'no-such-codex'}: program not found"


def test_codex_home_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        make_runner({"codex_home": "/tmp"})
    assert caught.value.message == (
        "[system.runner] codex_home is not supported by the codex-app-server runner: every run "
        "gets a fresh private CODEX_HOME (app-server cannot ignore a user config.toml)"
    )


def test_notify_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        make_runner({"codex_config": ['notify=["sh","-c","id"]']})
    assert caught.value.message == (
        "[system.runner] codex_config: notify cannot be overridden: codex runs the notify "
        "program outside its sandbox after the turn"
    )


def test_plan(tmp_path: Path) -> None:
    runner = make_runner(
        {
            "codex_executable": "/opt/codex",
            "codex_env": ["K"],
            "codex_config": ['model_provider="p"'],
        }
    )
    plan = runner.plan(run_request(tmp_path))
    assert plan.argv == (
        "/opt/codex",
        "app-server",
        "--listen",
        "stdio://",
        "-c",
        'approval_policy="never"',
        "-c",
        'sandbox_mode="read-only"',
        "--disable",
        "unbounded_connection_retries",
        # Shared with the codex runner, spelled out in tests/unit/test_codex_settings.py.
        *closed_surface(),
        *shell_environment(["K"]),
        "-c",
        "project_doc_max_bytes=0",
        "-c",
        'model_provider="p"',
    )
    assert plan.files == (("codex home", "<private>/codex-home"),)
    assert plan.stdin == (
        "JSON-RPC: initialize, thread/start (the contract), turn/start (the prompt)"
    )


@pytest.mark.parametrize(
    ("method", "declined"),
    [
        ("item/fileChange/requestApproval", {"decision": "decline"}),
        ("item/permissions/requestApproval", {"permissions": {}, "scope": "turn"}),
        ("execCommandApproval", {"decision": "denied"}),
        ("applyPatchApproval", {"decision": "denied"}),
        ("mcpServer/elicitation/request", {"action": "decline"}),
        ("item/tool/requestUserInput", {"answers": {}}),
    ],
)
def test_every_kind_of_request_is_declined(
    tmp_path: Path, method: str, declined: dict[str, Any]
) -> None:
    request = {"id": 5, "method": method, "params": {"threadId": THREAD}}
    steps = [*TURN_STARTED, request, "@sleep 0.3", answer("ok"), turn("completed")]
    program, record = fake(tmp_path, steps, reply=[])
    result = run(program, tmp_path)
    assert (result.status, result.protocol_notes) == ("completed", {f"declined {method}": 1})
    assert [m for m in sent(record) if "method" not in m] == [
        {"jsonrpc": "2.0", "id": 5, "result": declined}
    ]


# -- the output cap: what a flooding server can add to the result and to hz's memory --------

MIB = 1024 * 1024


def run_measured(program: Path, tmp_path: Path) -> tuple[AgentResult, int]:
    """The result as hz keeps it (``execute``) and the peak of hz's own allocations."""
    import tracemalloc

    from hz.runtime.execution.execute import execute

    runner = make_runner({"codex_executable": str(program)})
    tracemalloc.start()
    try:
        result = execute(runner, run_request(tmp_path, prompt="p", contract="c"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak


def test_a_flood_of_long_names_and_inputs_is_held_to_the_output_cap(tmp_path: Path) -> None:
    # 60 unknown methods and 60 commands of 1 MiB each: 120 MiB the server said.
    steps = [
        *TURN_STARTED,
        flood(60, {"method": "flood/$n/$pad", "params": {}}, pad=MIB),
        flood(60, command_item("c$n", "$pad"), pad=MIB),
        answer("42"),
        turn("completed"),
    ]
    program, _ = fake(tmp_path, steps)
    result, peak = run_measured(program, tmp_path)
    assert (result.status, result.draft, result.output_truncated) == ("completed", "42", True)
    left_out = f"(an input of {MIB + 15:,} bytes, over the output cap)"
    assert (
        result.tool_calls
        == (ToolCall(name="command_execution", input=left_out, is_error=False),) * 60
    )
    assert result.protocol_notes == {
        f"unknown notification (a name of {MIB + 9:,} characters, over the output cap)": 60,
        "tool inputs left out (output cap)": 60,
    }
    assert len(result.model_dump_json()) < 64 * 1024
    assert peak < 48 * MIB


def test_a_flood_of_tiny_tool_calls_keeps_a_megabyte_of_them_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    steps = [
        *TURN_STARTED,
        flood(20_000, command_item("c$n", "ls")),
        answer("42"),
        turn("completed"),
    ]
    program, _ = fake(tmp_path, steps)
    result, _ = run_measured(program, tmp_path)
    assert (result.status, result.draft, result.output_truncated) == ("completed", "42", True)
    kept = len(result.tool_calls)
    assert result.tool_calls[-1] == ToolCall(
        name="command_execution", input={"command": "ls"}, is_error=False
    )
    assert result.protocol_notes == {"tool calls left out (output cap)": 20_000 - kept}
    assert MIB // 2 < len(result.model_dump_json()) <= MIB


def test_a_single_line_of_100_mib_is_skipped_and_named(tmp_path: Path) -> None:
    huge = {
        "method": "item/completed",
        "params": {"item": {"type": "agentMessage", "text": "$pad"}},
    }
    steps = [*TURN_STARTED, flood(1, huge, pad=100 * MIB), turn("completed")]
    program, _ = fake(tmp_path, steps)
    result, peak = run_measured(program, tmp_path)
    assert (result.status, result.failure_kind, result.reason, result.draft) == (
        "failed",
        "output_limit",
        "the turn completed without an answer hz could read; lines over the output cap "
        "(8 MiB), skipped: 1",
        None,
    )
    assert (result.output_truncated, result.protocol_notes) == (
        True,
        {"lines over the output cap (8 MiB), skipped": 1},
    )
    assert peak < 48 * MIB


def retrying(message: str, info: Any, details: str | None) -> dict[str, Any]:
    error = {"message": message, "codexErrorInfo": info, "additionalDetails": details}
    return {
        "method": "error",
        "params": {"threadId": THREAD, "turnId": TURN, "error": error, "willRetry": True},
    }


@pytest.mark.parametrize(
    ("info", "details", "kind", "after"),
    [
        (
            {"responseStreamDisconnected": {"httpStatusCode": 429}},
            "exceeded retry limit, last status: 429 Too Many Requests",
            "rate_limited",
            " after HTTP 429",
        ),
        # The status is read from the typed field only, never from the words.
        ({"responseStreamDisconnected": {"httpStatusCode": 502}}, "status: 429\x1b[2J", None, ""),
        (None, None, None, ""),
    ],
)
def test_a_timeout_while_the_server_waits_to_retry_keeps_its_notice(
    tmp_path: Path, info: Any, details: str | None, kind: str | None, after: str
) -> None:
    program, _ = fake(
        tmp_path,
        [*TURN_STARTED, retrying("Reconnecting... 1/3", info, details), "@sleep 2"],
        turn_interrupt=[{"id": "$id", "result": {}}, turn("interrupted")],
    )
    runner = make_runner({"codex_executable": str(program)})
    result = runner.run(run_request(tmp_path, prompt="p", contract="c", timeout=1))
    notice = "Reconnecting... 1/3" + (f" ({details})" if details else "")
    assert (result.status, result.failure_kind, result.reason) == (
        "failed" if kind == "rate_limited" else "timeout",
        kind,
        f"timed out after 1 s during the turn (interrupted) while the CLI waited to retry{after}; "
        f"its last notice: {notice}",
    )


def test_a_notice_the_turn_went_on_after_is_not_why_it_timed_out(tmp_path: Path) -> None:
    limited = {"responseStreamDisconnected": {"httpStatusCode": 429}}
    program, _ = fake(
        tmp_path,
        [
            *TURN_STARTED,
            retrying("Reconnecting... 1/3", limited, None),
            answer("so far"),
            "@sleep 2",
        ],
        turn_interrupt=[{"id": "$id", "result": {}}, turn("interrupted")],
    )
    runner = make_runner({"codex_executable": str(program)})
    result = runner.run(run_request(tmp_path, prompt="p", contract="c", timeout=1))
    assert (result.status, result.failure_kind, result.reason) == (
        "timeout",
        None,
        "timed out after 1 s during the turn (interrupted)",
    )

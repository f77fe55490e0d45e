"""Run orchestration: binding, the capability check before the adapter, the output check."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.errors import FormatError, RunnerError
from hz.runtime.artifacts.models import OutputSpec, Packet
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.execution.execute import bind, execute
from hz.runtime.runners import registry
from hz.runtime.runners.echo import EchoRunner, EchoSettings
from hz.runtime.runners.protocol import Capabilities, Progress, RunPlan, RunRequest
from tests.helpers.packets import make_packet
from tests.helpers.run_request import run_request, runner_config


class SoftBudgetRunner(EchoRunner):
    """An echo runner that only advises on budgets; counts the runs that reached it."""

    name: ClassVar[str] = "soft"

    @classmethod
    def capabilities(cls, settings: EchoSettings | None) -> Capabilities:
        return Capabilities(
            timeout="hard", budget="advisory", tools="hard", turns="hard", structured_output="hard"
        )

    runs: ClassVar[int] = 0

    def run(self, request: RunRequest) -> AgentResult:
        SoftBudgetRunner.runs += 1
        return super().run(request)


def run(packet: Packet, runner_name: str, settings: dict[str, Any], workdir: Path) -> AgentResult:
    runner = bind(runner_config(runner_name, settings))
    return execute(runner, RunRequest.for_packet(packet, workdir=workdir))


@pytest.fixture
def soft(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(registry.CORE, "soft", f"{__name__}:SoftBudgetRunner")
    monkeypatch.setattr(SoftBudgetRunner, "runs", 0)
    return "soft"


def test_echo_run_completes_with_the_prompt(tmp_path: Path) -> None:
    result = run(make_packet(), "echo", {}, tmp_path)
    assert (result.status, result.draft, result.runner, result.model) == (
        "completed",
        "Say hi.",
        "echo",
        "echo",
    )


def test_workdir_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        run(make_packet(), "echo", {}, tmp_path / "nope")
    assert caught.value.message == f"working directory {tmp_path / 'nope'} does not exist"


def test_required_budget_enforcement_refuses_before_the_adapter(tmp_path: Path, soft: str) -> None:
    with pytest.raises(RunnerError) as caught:
        run(make_packet(), soft, {"require_enforced_budget": True}, tmp_path)
    assert caught.value.message == (
        "runner 'soft' cannot enforce a budget (advisory) and [system.runner] "
        "require_enforced_budget is true; nothing was started"
    )
    assert SoftBudgetRunner.runs == 0


def test_advisory_budget_runs_when_not_required(tmp_path: Path, soft: str) -> None:
    result = run(make_packet(), soft, {}, tmp_path)
    assert (result.status, SoftBudgetRunner.runs) == ("completed", 1)


def test_json_draft_is_parsed_into_structured_output(tmp_path: Path) -> None:
    packet = make_packet('{"title": "x"}', OutputSpec(format="json", schema_={"type": "object"}))
    result = run(packet, "echo", {}, tmp_path)
    assert (result.status, result.structured_output) == ("completed", {"title": "x"})


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "string"}}},
    "required": ["items"],
}


@pytest.mark.parametrize(
    ("draft", "reason"),
    [
        ("not json", "the draft is not valid JSON: Expecting value at line 1 column 1"),
        (
            '{"items": ["a", 2]}',
            "the draft does not match the output schema at $.items[1]: 2 is not of type 'string'",
        ),
        ("{}", "the draft does not match the output schema at $: 'items' is a required property"),
    ],
)
def test_schema_mismatch_is_failed_schema_invalid_with_draft_kept(
    tmp_path: Path, draft: str, reason: str
) -> None:
    packet = make_packet(draft, OutputSpec(format="json", schema_=SCHEMA))
    result = run(packet, "echo", {}, tmp_path)
    assert (result.status, result.failure_kind, result.reason, result.draft) == (
        "failed",
        "schema_invalid",
        reason,
        draft,
    )


def test_a_run_that_did_not_complete_is_not_reclassified(tmp_path: Path) -> None:
    packet = make_packet("not json", OutputSpec(format="json", schema_=SCHEMA))
    settings = {"echo_status": "timeout"}
    result = run(packet, "echo", settings, tmp_path)
    assert (result.status, result.failure_kind) == ("timeout", None)


def test_plan_starts_nothing(tmp_path: Path) -> None:
    request = RunRequest.for_packet(make_packet(), workdir=tmp_path)
    assert bind(runner_config("echo", {})).plan(request) == RunPlan(
        argv=(), cwd=str(tmp_path.resolve()), env_names=(), stdin="none"
    )


def test_markdown_output_is_not_checked(tmp_path: Path) -> None:
    result = run(make_packet("{"), "echo", {}, tmp_path)
    assert (result.status, result.structured_output) == ("completed", None)


def test_a_secret_the_agent_wrote_is_redacted_in_every_string_of_its_result() -> None:
    from hz.runtime.artifacts.result import ToolCall
    from hz.runtime.execution.execute import without_secrets

    key = "sk-live-0123456789"
    result = AgentResult(
        runner="command",
        model=f"model-{key}",
        status="failed",
        failure_kind="runtime_error",
        reason=f"API error: bad key {key}",
        draft=f"the key is {key}",
        structured_output={key: [f"x{key}", 1, None]},
        tool_calls=(ToolCall(name=f"mcp__{key}", input={"command": f"echo {key}"}),),
        stderr_tail=f"auth {key}\nagain {key}",
        protocol_notes={f"unknown notification {key}": 2, "unknown notification x": 1},
    )
    environ = {"ANTHROPIC_API_KEY": key, "PLAIN": key, "SHORT_TOKEN": "abc"}
    mark = "[redacted ANTHROPIC_API_KEY]"
    assert without_secrets(result, environ).model_dump(
        exclude={"runner", "status", "failure_kind", "usage", "kind", "format_version"},
        exclude_defaults=True,
    ) == {
        "model": f"model-{mark}",
        "reason": f"API error: bad key {mark}",
        "draft": f"the key is {mark}",
        "structured_output": {mark: [f"x{mark}", 1, None]},
        "tool_calls": ({"name": f"mcp__{mark}", "input": {"command": f"echo {mark}"}},),
        "tool_call_counts": {f"mcp__{mark}": 1},
        "stderr_tail": f"auth {mark}\nagain {mark}",
        "protocol_notes": {f"unknown notification {mark}": 2, "unknown notification x": 1},
    }
    clean = AgentResult(runner="command", status="completed", draft="plain", stderr_tail="x")
    assert without_secrets(clean, environ) is clean


def test_a_part_of_a_secret_where_hz_cut_the_stderr_tail_is_redacted() -> None:
    from hz.runtime.execution.execute import without_secrets

    key = "sk-live-0123456789"
    environ = {"ANTHROPIC_API_KEY": key}
    mark = "[redacted ANTHROPIC_API_KEY]"
    cut = AgentResult(runner="x", status="failed", stderr_tail=f"{key[6:]} ends {key[:7]}")
    assert without_secrets(cut, environ).stderr_tail == f"{mark} ends {mark}"
    short = AgentResult(runner="x", status="failed", stderr_tail="789 ends sk-")
    assert without_secrets(short, environ) is short  # 3 characters say nothing of the key
    draft = AgentResult(runner="x", status="failed", draft=f"text {key[:9]}", output_truncated=True)
    assert without_secrets(draft, environ).draft == f"text {mark}"


def test_a_secret_is_found_as_json_writes_it_too() -> None:
    from hz.runtime.execution.execute import without_secrets

    key = 'k3y"with\\quote-ü'
    environ = {"MY_API_TOKEN": key}
    draft = '{"token": "k3y\\"with\\\\quote-ü", "ascii": "k3y\\"with\\\\quote-\\u00fc"}'
    result = AgentResult(runner="x", status="completed", draft=draft, structured_output={"t": key})
    assert without_secrets(result, environ).model_dump(include={"draft", "structured_output"}) == {
        "draft": '{"token": "[redacted MY_API_TOKEN]", "ascii": "[redacted MY_API_TOKEN]"}',
        "structured_output": {"t": "[redacted MY_API_TOKEN]"},
    }


def test_a_secret_is_found_as_go_and_php_write_json_too() -> None:
    """Go's encoder (gh, kubectl, terraform -json) writes ``<>&`` as ``\\u003c…``, PHP's
    ``/`` as ``\\/``: the key came back in clear that way (attack on issue 21, note of H9)."""
    from hz.runtime.execution.execute import without_secrets

    environ = {"MY_API_TOKEN": "sk-abc/DEF+ghi<jk>&lm=12345"}
    draft = (
        "go: sk-abc/DEF+ghi\\u003cjk\\u003e\\u0026lm=12345, php: sk-abc\\/DEF+ghi<jk>&lm=12345, "
        "both: sk-abc\\/DEF+ghi\\u003cjk\\u003e\\u0026lm=12345"
    )
    result = AgentResult(runner="x", status="completed", draft=draft)
    assert without_secrets(result, environ).draft == (
        "go: [redacted MY_API_TOKEN], php: [redacted MY_API_TOKEN], both: [redacted MY_API_TOKEN]"
    )


class NamesATool(EchoRunner):
    """Reports one tool call named ``tool`` (as claude-code reports an MCP tool's name)."""

    tool = ""

    def run(self, request: RunRequest) -> AgentResult:
        assert request.progress is not None
        request.progress(Progress(elapsed_seconds=1.0, turns=1, tool_calls=1, last_tool=self.tool))
        return super().run(request)


def test_a_secret_in_a_tools_name_is_redacted_in_the_progress_hz_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The result's tool calls were redacted, the progress the ledger keeps (``observed``,
    ``hz runs show``) and the live line show were not (attack on issue 21, H9)."""
    key = "sk-abc/DEF+ghi<jk>&lm=12345"
    monkeypatch.setenv("MY_API_TOKEN", key)
    runner = NamesATool(EchoSettings())
    runner.tool = f"mcp__x__{key}"
    seen: list[Progress] = []
    request = run_request(tmp_path, progress=seen.append)
    result = execute(runner, request)
    assert result.status == "completed"
    # (The echo runner's own report, with no tool, follows.)
    assert [p.last_tool for p in seen] == ["mcp__x__[redacted MY_API_TOKEN]", None]
    runner.tool = "m" * 1000  # an agent's name, cut to what the ledger keeps
    execute(runner, request)
    assert [p.last_tool for p in seen[2:]] == ["m" * 200, None]

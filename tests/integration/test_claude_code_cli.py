"""The claude-code runner against the real, pinned ``claude`` binary and a scripted fake model.

Each test scripts the model's turns in ``FakeAnthropic`` and points the CLI at it through the
runner's own environment policy: ``allow_api_key_billing = true`` lets ANTHROPIC_API_KEY pass,
``claude_env = ["ANTHROPIC_BASE_URL"]`` adds the fake's address, ``claude_max_retries = 0``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.artifacts.result import AgentResult, ToolCall
from hz.runtime.runners.claude_code.runner import ClaudeCodeRunner
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.protocol import Check, Progress
from tests.fakes.anthropic_server import (
    MODEL,
    FakeAnthropic,
    api_error,
    hang,
    text,
    tool_results,
    tool_use,
)
from tests.fakes.claude_cli import (
    claude_binary,
    group_of,
    living_in_groups,
    processes_with_env,
)
from tests.helpers.run_request import SCHEMA, run_request

pytestmark = pytest.mark.real_cli


@pytest.fixture
def claude() -> Path:
    return claude_binary()


def settings(claude: Path, **extra: Any) -> dict[str, Any]:
    return {
        "claude_executable": str(claude),
        "allow_api_key_billing": True,
        "claude_env": ["ANTHROPIC_BASE_URL"],
        "claude_max_retries": 0,
        "model": MODEL,
        **extra,
    }


def run(
    api: FakeAnthropic,
    claude: Path,
    work: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    tools: tuple[str, ...] = ("Read", "Grep"),
    timeout: float = 60,
    output: OutputSpec | None = None,
    progress: Any = None,
    **extra: Any,
) -> AgentResult:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    runner = ClaudeCodeRunner(ClaudeSettings.from_table(settings(claude, **extra)))
    return runner.run(
        run_request(
            work,
            prompt="Answer the question.",
            contract="Never write files.",
            tools=tools,
            timeout=timeout,
            max_usd=0.5,
            output=output,
            progress=progress,
        )
    )


def test_plain_answer(claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic([text("Hello there")]) as api:
        result = run(api, claude, work, monkeypatch)
    assert (result.status, result.failure_kind, result.reason) == ("completed", None, None)
    assert (result.draft, result.model, result.turns, result.exit_code) == (
        "Hello there",
        MODEL,
        1,
        0,
    )
    assert result.usage.input_tokens == 12
    assert result.usage.output_tokens == 7
    assert result.cost_usd is not None
    assert result.cost_usd > 0
    assert result.tool_calls == ()
    # The contract reached the model as system text, the prompt as the user's message.
    body = json.dumps(api.requests[0])
    assert "Never write files." in body
    assert api.requests[0]["messages"][0] == {"role": "user", "content": "Answer the question."}


def test_read_round_trip_in_working_dir(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = str(work / "notes.txt")
    seen: list[Progress] = []
    with FakeAnthropic([tool_use("Read", {"file_path": notes}), text("marmalade")]) as api:
        result = run(api, claude, work, monkeypatch, progress=seen.append)
    assert [(p.turns, p.tool_calls, p.last_tool) for p in seen] == [(1, 1, "Read"), (2, 1, "Read")]
    assert result.status == "completed"
    assert result.draft == "marmalade"
    assert result.tool_calls == (ToolCall(name="Read", input={"file_path": notes}, is_error=False),)
    assert result.turns == 2
    [sent] = tool_results(api.requests)
    assert "the secret word is marmalade" in json.dumps(sent)
    assert sent.get("is_error") is not True


def test_bash_under_read_grep_profile_is_not_run(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = work / "pwned"
    bash = tool_use("Bash", {"command": f"touch {marker}"})
    with FakeAnthropic([bash, text("I could not run it")]) as api:
        result = run(api, claude, work, monkeypatch)
    assert not marker.exists()
    assert result.status == "completed"
    assert result.tool_calls == (
        ToolCall(name="Bash", input={"command": f"touch {marker}"}, is_error=True),
    )
    assert result.tool_call_counts == {"Bash": 1}
    [sent] = tool_results(api.requests)
    assert sent["is_error"] is True
    assert "No such tool available: Bash" in json.dumps(sent)


def test_endless_tool_calls_end_at_hz_timeout_with_the_group_killed(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups: set[int] = set()
    child_env: dict[str, str] = {}
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SSE_PORT", "4711")
    monkeypatch.setenv("HZ_CREDENTIAL_GITHUB", "ghp_secret")
    monkeypatch.setenv("UNLISTED_VARIABLE", "x")

    with FakeAnthropic([tool_use("Grep", {"pattern": "x"})], repeat_last=True) as api:

        def watch(_: Progress) -> None:
            for pid, env in processes_with_env("ANTHROPIC_BASE_URL", api.url).items():
                child_env.update(env)
                pgid = group_of(pid)
                if pgid is not None:
                    groups.add(pgid)

        started = time.monotonic()
        result = run(api, claude, work, monkeypatch, timeout=4, progress=watch)
        elapsed = time.monotonic() - started
    assert (result.status, result.failure_kind) == ("timeout", None)
    assert result.reason == "timed out after 4 s"
    assert elapsed < 4 + 2 + 10  # timeout + kill grace + generous slack on a busy machine
    assert len(api.requests) >= 2
    assert result.tool_call_counts["Grep"] >= 2
    assert groups, "the progress callback saw the CLI's processes"
    assert living_in_groups(groups) == []
    assert processes_with_env("ANTHROPIC_BASE_URL", api.url) == {}
    # What the CLI's environment was: the policy, observed on the real process.
    assert child_env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert child_env["DISABLE_AUTOUPDATER"] == "1"
    assert child_env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    for name in ("CLAUDECODE", "CLAUDE_CODE_SSE_PORT", "HZ_CREDENTIAL_GITHUB", "UNLISTED_VARIABLE"):
        assert name not in child_env


def test_budget_exhaustion_keeps_the_cost(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expensive = tool_use("Grep", {"pattern": "x"}, output_tokens=2_000_000)
    with FakeAnthropic([expensive, text("unreachable")]) as api:
        result = run(api, claude, work, monkeypatch)
    assert (result.status, result.failure_kind) == ("budget", "budget_exceeded")
    assert result.cost_usd is not None
    assert result.cost_usd > 0.5
    assert result.reason == (
        f"Reached maximum budget ($0.5); spent ${result.cost_usd:.4f} against $0.50: the CLI "
        "checks between turns"
    )
    assert result.usage.output_tokens == 2_000_000
    assert result.draft is None


def test_rate_limited(claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limited = api_error(429, "rate_limit_error", "Slow down", [("retry-after", "7")])
    with FakeAnthropic([limited]) as api:
        result = run(api, claude, work, monkeypatch)
    assert (result.status, result.failure_kind) == ("failed", "rate_limited")
    assert result.reason == "the API answered HTTP 429"
    # Without retries the pinned CLI reports nothing of the retry-after header.
    assert result.retry_after_seconds is None
    assert result.exit_code == 1


def test_rate_limited_after_a_retry_reports_the_retry_after(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limited = api_error(429, "rate_limit_error", "Slow down", [("retry-after", "2")])
    with FakeAnthropic([limited, limited]) as api:
        result = run(api, claude, work, monkeypatch, claude_max_retries=1)
    assert len(api.requests) == 2
    assert (result.status, result.failure_kind) == ("failed", "rate_limited")
    # The CLI's retry delay honours retry-after, plus its own jitter.
    assert result.retry_after_seconds is not None
    assert 2.0 <= result.retry_after_seconds <= 3.0


def test_unauthorized(claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic([api_error(401, "authentication_error", "invalid x-api-key")]) as api:
        result = run(api, claude, work, monkeypatch)
    assert (result.status, result.failure_kind) == ("failed", "auth_misconfigured")
    assert result.reason == "the API answered HTTP 401"


def test_structured_output_valid(claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output = OutputSpec(format="json", schema=SCHEMA)
    with FakeAnthropic([tool_use("StructuredOutput", {"n": 3})]) as api:
        result = run(api, claude, work, monkeypatch, output=output)
    assert result.status == "completed"
    assert result.structured_output == {"n": 3}
    assert json.loads(result.draft or "") == {"n": 3}
    [offered] = [t for t in api.requests[0]["tools"] if t["name"] == "StructuredOutput"]
    assert offered["input_schema"] == SCHEMA


def test_structured_output_invalid(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = OutputSpec(format="json", schema=SCHEMA)
    wrong = tool_use("StructuredOutput", {"n": "three"})
    with FakeAnthropic([wrong], repeat_last=True) as api:
        result = run(api, claude, work, monkeypatch, output=output)
    assert (result.status, result.failure_kind) == ("failed", "schema_invalid")
    assert result.reason is not None
    assert result.reason.startswith("Failed to provide valid structured output after 5 attempts")
    assert result.draft is None


def test_api_hanging_mid_stream_is_a_timeout(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic([hang(after_events=2)]) as api:
        started = time.monotonic()
        result = run(api, claude, work, monkeypatch, timeout=3)
        elapsed = time.monotonic() - started
        assert processes_with_env("ANTHROPIC_BASE_URL", api.url) == {}
    assert (result.status, result.failure_kind, result.reason) == (
        "timeout",
        None,
        "timed out after 3 s",
    )
    assert elapsed < 3 + 2 + 10


def test_every_optional_flag_parses(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = OutputSpec(format="json", schema=SCHEMA)
    with FakeAnthropic([tool_use("Grep", {"pattern": "x"})], repeat_last=True) as api:
        result = run(api, claude, work, monkeypatch, output=output, max_turns=2)
    assert "unknown option" not in result.stderr_tail
    assert (result.status, result.failure_kind) == ("failed", "max_turns")
    assert result.reason == "Reached maximum number of turns (2)"
    assert api.requests[0]["model"] == MODEL


def test_api_key_not_passed_without_allow_api_key_billing(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic([text("never asked")]) as api:
        result = run(api, claude, work, monkeypatch, allow_api_key_billing=False)
    assert api.requests == []
    assert (result.status, result.failure_kind) == ("failed", "auth_misconfigured")
    assert result.reason == "the CLI is not logged in"


def test_missing_executable_is_launch_failed(tmp_path: Path, work: Path) -> None:
    runner = ClaudeCodeRunner(
        ClaudeSettings.from_table({"claude_executable": str(tmp_path / "nope")})
    )
    result = runner.run(run_request(work, timeout=10))
    assert (result.status, result.failure_kind) == ("failed", "launch_failed")
    assert result.reason == f"{tmp_path / 'nope'}: program not found"


def test_doctor_against_the_pinned_cli(claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    allowed = {"claude_executable": str(claude), "allow_api_key_billing": True}
    assert ClaudeCodeRunner.doctor(ClaudeSettings.from_table(allowed)) == [
        Check("claude executable", "ok", str(claude)),
        Check("claude version", "ok", "2.1.332 (minimum 2.1.332)"),
        Check("claude login", "ok", "API key from ANTHROPIC_API_KEY (billed to the API account)"),
    ]
    # Without allow_api_key_billing the key never reaches the CLI: logged out, as hz runs see it.
    refused = ClaudeCodeRunner.doctor(ClaudeSettings.from_table({"claude_executable": str(claude)}))
    assert refused[2] == Check(
        "claude login",
        "failed",
        "not logged in; run `claude auth login`, or set [system.runner] "
        "allow_api_key_billing = true to use ANTHROPIC_API_KEY",
    )


def test_users_api_key_helper_is_not_used(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    # Without --restricted the CLI would run the user's apiKeyHelper and bill the API account.
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text('{"apiKeyHelper": "echo k"}')
    with FakeAnthropic([text("billed")]) as api:
        result = run(api, claude, work, monkeypatch, allow_api_key_billing=False)
    assert api.requests == []
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "auth_misconfigured",
        "the CLI is not logged in",
    )


def test_a_key_that_reaches_the_cli_anyway_is_caught_after_the_run(
    claude: Path, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # E.g. a claude_executable wrapper that sets a key: the init event says where the key came
    # from, and with allow_api_key_billing off the run is refused.
    wrapper = tmp_path / "keyed-claude"
    wrapper.write_text(f'#!/bin/sh\nANTHROPIC_API_KEY=leaked exec "{claude}" "$@"\n')
    wrapper.chmod(0o755)
    with FakeAnthropic([text("billed")]) as api:
        result = run(api, wrapper, work, monkeypatch, allow_api_key_billing=False)
    assert len(api.requests) == 1
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "auth_misconfigured",
        "the CLI authenticated with ANTHROPIC_API_KEY although allow_api_key_billing is off",
    )
    assert result.draft is None
    assert result.cost_usd is not None


def test_a_result_then_a_lingering_process_is_completed(
    claude: Path, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wrapper that keeps the process group alive after the CLI printed its result.
    wrapper = tmp_path / "lingering-claude"
    wrapper.write_text(f'#!/bin/sh\n"{claude}" "$@"\nsleep 60\n')
    wrapper.chmod(0o755)
    with FakeAnthropic([text("Hello there")]) as api:
        started = time.monotonic()
        result = run(api, wrapper, work, monkeypatch, timeout=60)
        elapsed = time.monotonic() - started
    assert (result.status, result.failure_kind, result.draft) == ("completed", None, "Hello there")
    assert result.exit_code is None  # stopped by hz after the grace, not exited on its own
    assert elapsed < 30


def test_timeout_while_the_cli_waits_out_a_429(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limited = api_error(429, "rate_limit_error", "Slow down", [("retry-after", "30")])
    with FakeAnthropic([limited, limited]) as api:
        result = run(api, claude, work, monkeypatch, claude_max_retries=1, timeout=3)
        assert processes_with_env("ANTHROPIC_BASE_URL", api.url) == {}
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "rate_limited",
        "timed out after 3 s while the CLI waited to retry after HTTP 429",
    )
    assert result.retry_after_seconds is not None
    assert 30.0 <= result.retry_after_seconds <= 40.0
    assert len(api.requests) == 1


def request_tools(api: FakeAnthropic) -> set[str]:
    return {tool["name"] for tool in api.requests[0].get("tools", [])}


def test_default_session_offers_only_the_read_only_tools(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic([text("ok")]) as api:
        result = run(api, claude, work, monkeypatch, tools=())
    assert result.status == "completed"
    # DeferredToolPlaceholder is the CLI's internal stand-in, not a tool the model can call.
    assert request_tools(api) == {"Read", "Grep", "Glob", "DeferredToolPlaceholder"}
    assert result.session_widened == ()


def test_network_tools_only_through_network_tools_and_named_widened(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic([text("ok")]) as api:
        result = run(
            api, claude, work, monkeypatch, tools=("Read", "WebFetch"), network_tools=["WebFetch"]
        )
    assert result.status == "completed"
    assert request_tools(api) == {"Read", "WebFetch", "DeferredToolPlaceholder"}
    assert result.session_widened == ("WebFetch",)


#: An output schema of about 200 KiB: over Linux's 128 KiB limit for one argument.
BIG_SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        **{f"p{i:05d}": {"type": "string", "description": "x" * 48} for i in range(2500)},
    },
    "required": ["n"],
}


def test_an_output_schema_over_the_argv_limit_goes_on_stdin(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(json.dumps(BIG_SCHEMA)) > 128 * 1024
    output = OutputSpec(format="json", schema=BIG_SCHEMA)
    with FakeAnthropic([tool_use("StructuredOutput", {"n": 3})]) as api:
        result = run(api, claude, work, monkeypatch, output=output)
    assert (result.status, result.failure_kind, result.reason) == ("completed", None, None)
    assert result.structured_output == {"n": 3}
    [offered] = [t for t in api.requests[0]["tools"] if t["name"] == "StructuredOutput"]
    assert offered["input_schema"] == BIG_SCHEMA
    # The prompt still reached the model as the user's message, the contract as system text.
    assert api.requests[0]["messages"][0] == {"role": "user", "content": "Answer the question."}
    assert "Never write files." in json.dumps(api.requests[0])


def test_an_output_schema_over_the_argv_limit_invalid_answer(
    claude: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = OutputSpec(format="json", schema=BIG_SCHEMA)
    wrong = tool_use("StructuredOutput", {"n": "three"})
    with FakeAnthropic([wrong], repeat_last=True) as api:
        result = run(api, claude, work, monkeypatch, output=output)
    assert (result.status, result.failure_kind) == ("failed", "schema_invalid")

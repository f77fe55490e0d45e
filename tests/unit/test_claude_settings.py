"""The claude-code runner's settings, environment policy, argv and dry-run plan."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import ConfigError, RunnerError
from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.runners.claude_code.runner import ClaudeCodeRunner
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.registry import resolve
from tests.helpers.run_request import run_request

SOURCE = {
    "PATH": "/usr/bin",
    "HOME": "/home/op",
    "LANG": "C.UTF-8",
    "LC_ALL": "C",
    "TMPDIR": "/tmp",
    "HZ_CREDENTIAL_GITHUB": "ghp_x",
    "CLAUDECODE": "1",
    "CLAUDE_CODE_SSE_PORT": "4711",
    "CLAUDE_CODE_ENTRYPOINT": "cli",
    "CLAUDE_CODE_USE_BEDROCK": "1",
    "CLAUDE_CODE_MAX_RETRIES": "99",
    "ANTHROPIC_API_KEY": "sk-ant-x",
    "ANTHROPIC_AUTH_TOKEN": "tok",
    "ANTHROPIC_BASE_URL": "http://proxy",
    "AWS_REGION": "eu-west-1",
    "UNRELATED": "x",
}
OWN = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_MAX_RETRIES": "3",
}
BASE = {"PATH": "/usr/bin", "HOME": "/home/op", "LANG": "C.UTF-8", "LC_ALL": "C", "TMPDIR": "/tmp"}


def test_registered_as_claude_code() -> None:
    assert resolve("claude-code") is ClaudeCodeRunner


def test_default_environment_is_the_allowlist_and_the_runners_own() -> None:
    assert ClaudeSettings.from_table({}).environment(SOURCE) == dict(
        sorted({**BASE, **OWN}.items())
    )


def test_api_keys_pass_only_with_allow_api_key_billing() -> None:
    env = ClaudeSettings.from_table({"allow_api_key_billing": True}).environment(SOURCE)
    assert (env["ANTHROPIC_API_KEY"], env["ANTHROPIC_AUTH_TOKEN"]) == ("sk-ant-x", "tok")


def test_claude_env_adds_deliberate_names_only() -> None:
    settings = ClaudeSettings.from_table(
        {"claude_env": ["CLAUDE_CODE_USE_BEDROCK", "AWS_REGION"], "claude_max_retries": 0}
    )
    env = settings.environment(SOURCE)
    assert env == dict(
        sorted(
            {
                **BASE,
                **OWN,
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "CLAUDE_CODE_USE_BEDROCK": "1",
                "AWS_REGION": "eu-west-1",
            }.items()
        )
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"claude_env": ["CLAUDECODE"]},
            "[system.runner] claude_env: CLAUDECODE describes a parent Claude Code session and "
            "is never passed",
        ),
        (
            {"claude_env": ["CLAUDE_CODE_MAX_RETRIES"]},
            "[system.runner] claude_env: CLAUDE_CODE_MAX_RETRIES is set by the claude-code "
            "runner itself",
        ),
        (
            {"claude_env": ["ANTHROPIC_API_KEY"]},
            "[system.runner] claude_env: ANTHROPIC_API_KEY bills the Anthropic API account and "
            "is passed only with allow_api_key_billing = true",
        ),
        (
            {"claude_env": ["HZ_CREDENTIAL_X"]},
            "[system.runner] claude_env: HZ_CREDENTIAL_X is an hz credential and is never "
            "passed to a child process",
        ),
        (
            {"claude_env": "PATH"},
            "[system.runner] claude_env must be a list of environment variable names",
        ),
        (
            {"read_only_tools": ["Read", "Bash"]},
            "[system.runner] read_only_tools: Bash can write or execute and is never read-only",
        ),
        (
            {"read_only_tools": ["Read,Grep"]},
            "[system.runner] read_only_tools: 'Read,Grep' is not a tool name",
        ),
        (
            {"read_only_tools": ["Read", "WebFetch"]},
            "[system.runner] read_only_tools: WebFetch reaches the network and is never read-only",
        ),
        (
            {"read_only_tools": ["WebSearch"]},
            "[system.runner] read_only_tools: WebSearch reaches the network and is never read-only",
        ),
        *(
            (
                {"read_only_tools": [tool]},
                f"[system.runner] read_only_tools: {tool} delegates to sub-agents, which hz "
                "cannot hold to the read-only allow-list; never allowed",
            )
            for tool in ("Agent", "Task")
        ),
        *(
            (
                {"read_only_tools": [tool]},
                f"[system.runner] read_only_tools: {tool} can write or execute and is never "
                "read-only",
            )
            for tool in ("CronCreate", "RemoteTrigger", "Write", "ScheduleWakeup")
        ),
        *(
            (
                {"read_only_tools": [tool]},
                f"[system.runner] read_only_tools: {tool} is not a tool the claude CLI 2.1.332 "
                "is known to offer read-only (read-only: Read, Grep, Glob; network: WebFetch, "
                "WebSearch)",
            )
            for tool in ("LS", "NotebookRead", "read")
        ),
        (
            {"network_tools": ["Read"]},
            "[system.runner] network_tools: Read reads local files; list it in read_only_tools",
        ),
        (
            {"network_tools": ["Bash"]},
            "[system.runner] network_tools: Bash can write or execute and is never read-only",
        ),
        (
            {"network_tools": ["Task"]},
            "[system.runner] network_tools: Task delegates to sub-agents, which hz cannot hold "
            "to the read-only allow-list; never allowed",
        ),
        (
            {"network_tools": "WebFetch"},
            "[system.runner] network_tools must be a list of tool names",
        ),
        ({"max_turns": 0}, "[system.runner] max_turns must be a positive integer, got 0"),
        (
            {"claude_max_retries": -1},
            "[system.runner] claude_max_retries must be an integer >= 0, got -1",
        ),
        (
            {"allow_api_key_billing": "yes"},
            "[system.runner] allow_api_key_billing must be true or false",
        ),
        ({"model": ""}, "[system.runner] model must be a non-empty string, got ''"),
        ({"claude_executable": 3}, "[system.runner] claude_executable must be a non-empty string"),
    ],
)
def test_invalid_settings(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ClaudeCodeRunner(ClaudeSettings.from_table(settings))
    assert caught.value.message == message


def test_settings_keys_cover_every_key_read() -> None:
    assert ClaudeCodeRunner.settings_model.keys() == {
        "model",
        "max_turns",
        "read_only_tools",
        "claude_executable",
        "claude_env",
        "allow_api_key_billing",
        "claude_max_retries",
        "network_tools",
    }


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def plan_argv(runner: ClaudeCodeRunner, work: Path, **kwargs: Any) -> tuple[str, ...]:
    return runner.plan(
        run_request(work, prompt="prompt", contract="rules", timeout=30, max_usd=0.25, **kwargs)
    ).argv


def test_plan_default_argv(fake_claude: Path, tmp_path: Path, snapshot: Any) -> None:
    runner = ClaudeCodeRunner(ClaudeSettings.from_table({"claude_executable": str(fake_claude)}))
    plan = runner.plan(
        run_request(tmp_path, prompt="prompt", contract="rules", timeout=30, max_usd=0.25)
    )
    assert plan.argv[0] == str(fake_claude)
    assert plan.argv[1:] == snapshot
    assert (plan.cwd, plan.stdin, plan.files) == (
        str(tmp_path),
        "the prompt, then closed",
        (("contract", "<private>/contract.md"),),
    )
    assert plan.limits_unenforced == ()
    assert "ANTHROPIC_API_KEY" not in plan.env_names
    assert "CLAUDE_CODE_MAX_RETRIES" in plan.env_names


def test_plan_with_every_option(fake_claude: Path, tmp_path: Path, snapshot: Any) -> None:
    runner = ClaudeCodeRunner(
        ClaudeSettings.from_table(
            {"claude_executable": str(fake_claude), "model": "opus", "max_turns": 7}
        )
    )
    output = OutputSpec(format="json", schema={"type": "object"})
    argv = plan_argv(runner, tmp_path, tools=("Grep", "Read"), output=output)
    assert argv[1:] == snapshot


def test_json_schema_only_for_json_output_with_a_schema(fake_claude: Path, tmp_path: Path) -> None:
    runner = ClaudeCodeRunner(ClaudeSettings.from_table({"claude_executable": str(fake_claude)}))
    for output in (OutputSpec(format="json"), OutputSpec(format="markdown"), None):
        assert "--json-schema" not in plan_argv(runner, tmp_path, output=output)


def test_relative_executable_is_made_absolute_before_the_run(
    fake_claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = ClaudeCodeRunner(ClaudeSettings.from_table({"claude_executable": "bin/claude"}))
    assert plan_argv(runner, tmp_path / "bin")[0] == str(fake_claude)


def test_bare_name_is_found_on_path(
    fake_claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{fake_claude.parent}{os.pathsep}/usr/bin")
    runner = ClaudeCodeRunner(ClaudeSettings.from_table({}))
    assert plan_argv(runner, tmp_path)[0] == str(fake_claude)


def test_a_tool_outside_read_only_tools_is_refused_before_spawn(
    fake_claude: Path, tmp_path: Path
) -> None:
    runner = ClaudeCodeRunner(ClaudeSettings.from_table({"claude_executable": str(fake_claude)}))
    with pytest.raises(RunnerError) as caught:
        runner.run(run_request(tmp_path, tools=("Read", "Bash", "WebFetch"), timeout=5))
    assert caught.value.message == (
        "the claude-code runner allows only read-only tools (Read, Grep, Glob); "
        "the contract asks for Bash, WebFetch"
    )


def test_operator_narrowed_read_only_tools(fake_claude: Path, tmp_path: Path) -> None:
    runner = ClaudeCodeRunner(
        ClaudeSettings.from_table(
            {"claude_executable": str(fake_claude), "read_only_tools": ["Read"]}
        )
    )
    argv = plan_argv(runner, tmp_path)
    assert argv[argv.index("--tools") + 1] == "Read"
    with pytest.raises(RunnerError):
        plan_argv(runner, tmp_path, tools=("Grep",))


def test_network_tools_widen_the_session_only_when_the_contract_names_them(
    fake_claude: Path, tmp_path: Path
) -> None:
    runner = ClaudeCodeRunner(
        ClaudeSettings.from_table(
            {"claude_executable": str(fake_claude), "network_tools": ["WebFetch"]}
        )
    )
    quiet = runner.plan(run_request(tmp_path))
    assert (quiet.argv[quiet.argv.index("--tools") + 1], quiet.session_widened) == (
        "Read,Grep,Glob",
        (),
    )
    wide = runner.plan(run_request(tmp_path, tools=("Read", "WebFetch")))
    assert (wide.argv[wide.argv.index("--tools") + 1], wide.session_widened) == (
        "Read,WebFetch",
        ("WebFetch",),
    )
    with pytest.raises(RunnerError) as caught:
        runner.plan(run_request(tmp_path, tools=("WebSearch",)))
    assert caught.value.message == (
        "the claude-code runner allows only read-only tools (Read, Grep, Glob, WebFetch); "
        "the contract asks for WebSearch"
    )


def test_capabilities() -> None:
    caps = ClaudeCodeRunner.capabilities(ClaudeSettings())
    assert (caps.timeout, caps.budget, caps.tools, caps.turns, caps.structured_output) == (
        "hard",
        "hard",
        "hard",
        "unsupported",
        "hard",
    )
    assert ClaudeCodeRunner.capabilities(None) == caps
    limited = ClaudeCodeRunner.capabilities(ClaudeSettings.from_table({"max_turns": 3}))
    assert limited.turns == "hard"


def test_a_long_output_schema_goes_on_stdin_not_argv(fake_claude: Path, tmp_path: Path) -> None:
    from hz.runtime.runners.claude_code.argv import ARGV_SCHEMA_LIMIT, stdin_bytes

    runner = ClaudeCodeRunner(ClaudeSettings.from_table({"claude_executable": str(fake_claude)}))
    small = OutputSpec(format="json", schema={"type": "object"})
    plan = runner.plan(run_request(tmp_path, output=small))
    assert (plan.argv[-2:], plan.stdin) == (
        ("--json-schema", '{"type":"object"}'),
        "the prompt, then closed",
    )
    assert stdin_bytes("the prompt", small) == b"the prompt"
    schema = {"type": "object", "description": "x" * ARGV_SCHEMA_LIMIT}
    big = OutputSpec(format="json", schema=schema)
    plan = runner.plan(run_request(tmp_path, output=big))
    assert "--json-schema" not in plan.argv
    assert (plan.argv[-2:], plan.stdin) == (
        ("--input-format", "stream-json"),
        "stream-json: an initialize request with the output schema, the prompt; then closed",
    )
    first, second = stdin_bytes("the prompt", big).decode().splitlines()
    assert json.loads(first) == {
        "type": "control_request",
        "request_id": "hz-initialize",
        "request": {"subtype": "initialize", "jsonSchema": schema},
    }
    assert json.loads(second) == {
        "type": "user",
        "message": {"role": "user", "content": "the prompt"},
        "parent_tool_use_id": None,
        "session_id": "",
    }

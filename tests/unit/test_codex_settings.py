"""Settings, command line, dry-run plan and capabilities of the Codex runner (no process)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.process.bounded import ProcessOutcome
from hz.runtime.runners.codex.argv import build_argv
from hz.runtime.runners.codex.runner import CodexRunner, stderr_tail
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.executables import parse_version
from hz.runtime.runners.protocol import Capabilities
from tests.helpers.run_request import run_request


def test_defaults() -> None:
    assert CodexSettings.from_table({}) == CodexSettings()


def test_full_settings(tmp_path: Path) -> None:
    settings = CodexSettings.from_table(
        {
            "codex_executable": "/opt/codex/bin/codex",
            "codex_config": ['model_provider="local"', " model_reasoning_effort = 'low' "],
            "codex_env": ["OPENAI_API_KEY"],
            "codex_home": str(tmp_path),
            "model": "gpt-x",
            "max_turns": 4,
        }
    )
    assert settings == CodexSettings(
        executable="/opt/codex/bin/codex",
        config=('model_provider="local"', "model_reasoning_effort='low'"),
        env=("OPENAI_API_KEY",),
        home=tmp_path,
        model="gpt-x",
        max_turns=4,
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"codex_executable": ""},
            "[system.runner] codex_executable must be a non-empty string, got ''",
        ),
        (
            {"codex_config": "model=x"},
            "[system.runner] codex_config must be a list of key=value strings",
        ),
        ({"codex_config": [3]}, "[system.runner] codex_config entries must be strings, got 3"),
        (
            {"codex_config": ["no equals sign"]},
            "[system.runner] codex_config: 'no equals sign' is not key=value with a dotted key",
        ),
        (
            {"codex_config": ["a..b=1"]},
            "[system.runner] codex_config: 'a..b=1' is not key=value with a dotted key",
        ),
        (
            {"codex_config": ["model_provider=local"]},
            "[system.runner] codex_config: the value of model_provider is not a TOML value: "
            "Invalid value (at line 1, column 9)",
        ),
        (
            {"codex_config": ['sandbox_mode="danger-full-access"']},
            "[system.runner] codex_config: sandbox_mode cannot be overridden: "
            "hz runs codex in the read-only sandbox",
        ),
        (
            {"codex_config": ['approval_policy="on-request"']},
            "[system.runner] codex_config: approval_policy cannot be overridden: "
            'hz runs codex with approval_policy "never"',
        ),
        (
            {"codex_config": ['mcp_servers.docs.command="docs-mcp"']},
            "[system.runner] codex_config: mcp_servers.docs.command cannot be overridden: "
            "MCP servers run outside codex's read-only sandbox",
        ),
        (
            {"codex_config": ["features={unbounded_connection_retries=true}"]},
            "[system.runner] codex_config: features cannot be overridden: "
            "hz keeps connection retries bounded",
        ),
        (
            {"codex_config": ['model="gpt-x"']},
            "[system.runner] codex_config: model cannot be overridden: "
            "set the model with [system.runner] model",
        ),
        (
            {"codex_config": ['notify=["/bin/sh","-c","curl evil"]']},
            "[system.runner] codex_config: notify cannot be overridden: "
            "codex runs the notify program outside its sandbox after the turn",
        ),
        (
            {"codex_config": ['shell_environment_policy.inherit="all"']},
            "[system.runner] codex_config: shell_environment_policy.inherit cannot be "
            "overridden: hz keeps the CLI's variables from the model's commands",
        ),
        (
            {"codex_config": ['web_search="live"']},
            "[system.runner] codex_config: web_search cannot be overridden: it would offer the "
            "model more than running commands in the read-only sandbox",
        ),
        (
            {"codex_config": ["features.multi_agent=true"]},
            "[system.runner] codex_config: features.multi_agent cannot be overridden: "
            "codex_config may only turn features off (a feature can add tools)",
        ),
        (
            {"codex_config": ["features={goals=false,apps=true}"]},
            "[system.runner] codex_config: features cannot be overridden: "
            "codex_config may only turn features off (a feature can add tools)",
        ),
        (
            {"codex_config": ['profile="wide"']},
            "[system.runner] codex_config: profile cannot be overridden: "
            "a profile can change the sandbox and approvals",
        ),
        (
            {"codex_config": ['model_providers.x.auth.command="get-token"']},
            "[system.runner] codex_config: model_providers.x.auth.command cannot be "
            "overridden: a provider's auth command runs outside codex's sandbox",
        ),
        (
            {"codex_config": ['model_providers.x={name="x",auth={command="get-token"}}']},
            "[system.runner] codex_config: model_providers.x cannot be overridden: "
            "a provider's auth command runs outside codex's sandbox",
        ),
        (
            {"codex_config": ['model_providers={x={auth={command="get-token"}}}']},
            "[system.runner] codex_config: model_providers cannot be overridden: "
            "a provider's auth command runs outside codex's sandbox",
        ),
        (
            {"codex_config": ['otel.exporter="otlp-http"']},
            "[system.runner] codex_config: otel.exporter cannot be overridden: hz lets through "
            "only keys that tune the model and its provider: features, hide_agent_reasoning, "
            "model_auto_compact_token_limit, model_context_window, model_provider, "
            "model_providers, model_reasoning_effort, model_reasoning_summary, "
            "model_supports_reasoning_summaries, model_verbosity, service_tier, "
            "show_raw_agent_reasoning, tool_output_token_limit",
        ),
        (
            {"codex_env": ["HZ_CREDENTIAL_OPENAI"]},
            "[system.runner] codex_env: HZ_CREDENTIAL_OPENAI is an hz credential and is never "
            "passed to a child process",
        ),
        (
            {"codex_home": "relative/dir"},
            "[system.runner] codex_home must be an existing directory given as an absolute "
            "path, got 'relative/dir'",
        ),
    ],
)
def test_invalid_settings(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        CodexRunner(CodexSettings.from_table(settings))
    assert caught.value.message == message


def test_model_provider_keys_are_allowed() -> None:
    # "model_provider" and "model_providers" start like the refused "model" but are other keys.
    entries = ['model_provider="x"', 'model_providers.x={name="x",base_url="http://h/v1"}']
    assert CodexSettings.from_table({"codex_config": entries}).config == tuple(entries)


def test_features_may_be_turned_off() -> None:
    entries = ["features.plugins=false", "features={fast_mode=false}"]
    assert CodexSettings.from_table({"codex_config": entries}).config == tuple(entries)


def test_argv_order_and_fixed_flags() -> None:
    settings = CodexSettings(
        model="gpt-x", config=('model_provider="local"',), env=("OPENAI_API_KEY",)
    )
    argv = build_argv(
        "/bin/codex",
        settings,
        working_dir="/work",
        contract_file="/p/contract.md",
        schema_file="/p/output-schema.json",
    )
    assert argv == (
        "/bin/codex",
        "exec",
        "--json",
        "--sandbox",
        "read-only",
        "-c",
        'approval_policy="never"',
        "--skip-git-repo-check",
        "--ephemeral",
        "--ignore-user-config",
        "--ignore-rules",
        "--disable",
        "unbounded_connection_retries",
        "-c",
        'web_search="disabled"',
        "--disable",
        "multi_agent",
        "--disable",
        "goals",
        "--disable",
        "image_generation",
        "--disable",
        "view_image",
        "--disable",
        "apps",
        "--disable",
        "browser_use",
        "--disable",
        "computer_use",
        "-c",
        'shell_environment_policy.inherit="core"',
        "-c",
        "shell_environment_policy.ignore_default_excludes=false",
        "-c",
        'shell_environment_policy.exclude=["CODEX_HOME","OPENAI_API_KEY"]',
        "-c",
        "project_doc_max_bytes=0",
        "-C",
        "/work",
        "-c",
        'model_instructions_file="/p/contract.md"',
        "-m",
        "gpt-x",
        "--output-schema",
        "/p/output-schema.json",
        "-c",
        'model_provider="local"',
        "-",
    )


@pytest.mark.parametrize("path", ['/a "b"\\c', "/tmp/\u00e9t\u00e9/\U0001f600/x\ty"])
def test_contract_path_is_a_toml_string(path: str) -> None:
    argv = build_argv(
        "codex", CodexSettings(), working_dir="/w", contract_file=path, schema_file=None
    )
    (override,) = [a for a in argv if a.startswith("model_instructions_file=")]
    assert tomllib.loads(override)["model_instructions_file"] == path


def test_plan_shows_what_would_run_without_running(tmp_path: Path) -> None:
    runner = CodexRunner(
        CodexSettings.from_table(
            {"codex_executable": "/nonexistent/codex", "codex_env": ["FAKE_KEY"], "max_turns": 3}
        )
    )
    plan = runner.plan(
        run_request(
            tmp_path,
            prompt="prompt",
            contract="rules",
            tools=("Read",),
            output=OutputSpec(format="json", schema={"type": "object"}),
        )
    )
    assert plan.argv[-5:] == (
        "-c",
        'model_instructions_file="<private>/contract.md"',
        "--output-schema",
        "<private>/output-schema.json",
        "-",
    )
    assert plan.argv[0] == "/nonexistent/codex"
    assert plan.cwd == str(tmp_path)
    assert plan.files == (
        ("contract", "<private>/contract.md"),
        ("output schema", "<private>/output-schema.json"),
        ("codex home", "<private>/codex-home"),
    )
    assert "CODEX_HOME" in plan.env_names
    assert plan.limits_unenforced == ("budget", "tools", "turns")
    assert plan.stdin == "the prompt, then closed"


def test_empty_contract_keeps_the_cli_instructions(tmp_path: Path) -> None:
    plan = CodexRunner(CodexSettings.from_table({})).plan(
        run_request(tmp_path, contract="  \n", timeout=5)
    )
    assert not any(arg.startswith("model_instructions_file") for arg in plan.argv)
    assert plan.limits_unenforced == ("budget",)


def test_capabilities() -> None:
    assert CodexRunner.capabilities(CodexSettings()) == Capabilities(
        timeout="hard",
        budget="unsupported",
        tools="unsupported",
        turns="unsupported",
        structured_output="hard",
    )
    assert {
        "codex_executable",
        "codex_config",
        "codex_env",
        "codex_home",
    } <= CodexRunner.settings_model.keys()


def test_known_cli_noise_is_dropped_from_the_stderr_tail() -> None:
    stderr = (
        b"WARNING: proceeding, even though we could not create PATH aliases: Refusing to create "
        b'helper binaries under temporary dir "/tmp"\nReading prompt from stdin...\nreal problem\n'
    )
    assert stderr_tail(ProcessOutcome(exit_code=1, stderr=stderr)) == "real problem\n"


def test_version_parsing() -> None:
    assert parse_version("codex-cli 0.171.0\n") == (0, 171, 0)
    assert parse_version("codex-cli dev") is None

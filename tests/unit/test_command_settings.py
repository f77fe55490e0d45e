"""Command runner settings: every mistake refused at configuration time, with its text."""

from __future__ import annotations

from typing import Any

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.runners.command.runner import CommandRunner
from hz.runtime.runners.command.settings import CommandSettings

C = "{contract_file}"


def refused(**settings: Any) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        CommandRunner(CommandSettings.from_table(settings))
    return e.value


def test_defaults_and_keys() -> None:
    s = CommandSettings.from_table({"command": ["agent", C], "other_runner_key": 1})
    assert (s.enforces_read_only, s.read_only_tools, s.env) == (False, (), ())
    assert (s.output, s.json_draft_key, s.model, s.inactivity_timeout) == (
        "text",
        "draft",
        None,
        None,
    )
    assert CommandRunner.settings_model.keys() >= {
        "command",
        "command_env",
        "model",
        "command_enforces_read_only",
    }


def test_placeholders_render_inside_single_arguments() -> None:
    s = CommandSettings.from_table(
        {"command": ["agent", "--in={prompt_file}:{tools}", "{{x}}{{", C]}
    )
    values = {"prompt_file": "/p", "tools": "Read,Grep", "contract_file": "/c"}
    assert s.render(values) == ("agent", "--in=/p:Read,Grep", "{x}{", "/c")
    assert s.uses("tools")
    assert not s.uses("max_usd")


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "{prompt}",
            "[system.runner] command[1]: {prompt}: unknown placeholder (known: {prompt_file}, "
            "{contract_file}, {output_file}, {working_dir}, {tools}, {model}, "
            "{timeout_seconds}, {max_usd})",
        ),
        ("--x={tools!r}", "[system.runner] command[1]: {tools!r}: conversions are not supported"),
        (
            "{max_usd:.2f}",
            "[system.runner] command[1]: {max_usd:.2f}: format specs are not supported",
        ),
        (
            "{}",
            "[system.runner] command[1]: {}: positional fields are not supported; use a named "
            "placeholder",
        ),
        (
            "{0}",
            "[system.runner] command[1]: {0}: positional fields are not supported; use a named "
            "placeholder",
        ),
        (
            "{tools.upper}",
            "[system.runner] command[1]: {tools.upper}: attribute and index access are not "
            "supported",
        ),
        (
            "{tools[0]}",
            "[system.runner] command[1]: {tools[0]}: attribute and index access are not supported",
        ),
        ("{", "[system.runner] command[1] '{': Single '{' encountered in format string"),
        ("a}b", "[system.runner] command[1] 'a}b': Single '}' encountered in format string"),
        ("{tools", "[system.runner] command[1] '{tools': expected '}' before end of string"),
    ],
)
def test_bad_placeholders_are_refused_with_the_offending_text(arg: str, message: str) -> None:
    error = refused(command=["agent", arg, C])
    assert error.message == message
    assert error.hint == "write {{ and }} for literal braces"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {},
            "[system.runner] command is not set: the command runner needs the agent's command line",
        ),
        (
            {"command": "agent --x"},
            "[system.runner] command must be a list of strings (run without a shell)",
        ),
        (
            {"command": ["agent", 1]},
            "[system.runner] command must be a list of strings (run without a shell)",
        ),
        ({"command": []}, "[system.runner] command must name a program as its first item"),
        ({"command": ["", C]}, "[system.runner] command must name a program as its first item"),
        (
            {"command": ["{working_dir}/agent", C]},
            "[system.runner] command[0] is the program and cannot contain placeholders",
        ),
        (
            {"command": ["agent", "{model}", C]},
            "[system.runner] command uses {model} but [system.runner] model is not set",
        ),
        (
            {"command": ["agent", "{prompt_file}"]},
            "[system.runner] command must pass {contract_file} to the agent: the contract holds "
            "the job's binding rules and has no other way to reach it",
        ),
        (
            {"command": ["agent", C], "command_enforces_read_only": "yes"},
            "[system.runner] command_enforces_read_only must be true or false, not 'yes'",
        ),
        (
            {"command": ["agent", C], "command_read_only_tools": "Read"},
            "[system.runner] command_read_only_tools must be a list of tool names",
        ),
        (
            {"command": ["agent", C], "command_read_only_tools": ["Read,Grep"]},
            "[system.runner] command_read_only_tools must be a list of tool names",
        ),
        (
            {"command": ["agent", C], "command_env": ["HZ_CREDENTIAL_X"]},
            "[system.runner] command_env: HZ_CREDENTIAL_X is an hz credential and is never passed "
            "to a child process",
        ),
        (
            {"command": ["agent", C], "command_output": "yaml"},
            '[system.runner] command_output must be "text" or "json", not \'yaml\'',
        ),
        (
            {"command": ["agent", C], "command_json_draft_key": ""},
            "[system.runner] command_json_draft_key must be a non-empty string",
        ),
        (
            {"command": ["agent", C], "command_inactivity_timeout": 0},
            "[system.runner] command_inactivity_timeout must be a number of seconds > 0",
        ),
        (
            {"command": ["agent", C], "command_inactivity_timeout": True},
            "[system.runner] command_inactivity_timeout must be a number of seconds > 0",
        ),
        (
            {"command": ["agent", C], "model": ""},
            "[system.runner] model must be a non-empty string, got ''",
        ),
    ],
)
def test_invalid_settings(settings: dict[str, Any], message: str) -> None:
    assert refused(**settings).message == message

"""The child environment allowlist and the credential checks."""

from __future__ import annotations

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.process.environment import check_passthrough, child_environment, is_credential_name

SOURCE = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "LANG": "de_DE.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "de_DE.UTF-8",
    "TMPDIR": "/tmp/u",
    "SHELL": "/bin/bash",
    "ANTHROPIC_API_KEY": "sk-secret",
    "HZ_CREDENTIAL_GITHUB": "ghp-secret",
    "hz_credential_lower": "also-secret",
    "AGENT_TOKEN": "agent",
    "XLC_ALL": "not a locale variable",
    "LC_SECRET": "named like a locale category, but none",
    "LC_": "no category at all",
}


def test_only_the_allowlist_passes_by_default() -> None:
    assert child_environment(source=SOURCE) == {
        "HOME": "/home/u",
        "LANG": "de_DE.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LC_TIME": "de_DE.UTF-8",
        "PATH": "/usr/bin",
        "TMPDIR": "/tmp/u",
    }


def test_passthrough_adds_names_but_never_hz_credentials() -> None:
    env = child_environment(
        passthrough=["AGENT_TOKEN", "HZ_CREDENTIAL_GITHUB", "hz_credential_lower", "UNSET"],
        source=SOURCE,
    )
    assert sorted(set(env) - set(child_environment(source=SOURCE))) == ["AGENT_TOKEN"]


def test_extra_values_win_and_may_not_be_hz_credentials() -> None:
    env = child_environment(extra={"PATH": "/opt/bin", "DISABLE_AUTOUPDATER": "1"}, source=SOURCE)
    assert (env["PATH"], env["DISABLE_AUTOUPDATER"]) == ("/opt/bin", "1")
    with pytest.raises(ValueError) as e:
        child_environment(extra={"HZ_CREDENTIAL_X": "v"}, source=SOURCE)
    assert str(e.value) == "refusing to pass HZ_CREDENTIAL_X to a child process"


def test_reads_our_own_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HZ_CREDENTIAL_TEST", "secret")
    monkeypatch.setenv("LC_MESSAGES", "C")
    env = child_environment()
    assert env["LC_MESSAGES"] == "C"
    assert "HZ_CREDENTIAL_TEST" not in env


def test_check_passthrough_accepts_names() -> None:
    assert check_passthrough(["A", "_B1"], "[system.runner] command_env") == ("A", "_B1")


@pytest.mark.parametrize(
    ("names", "message"),
    [
        ("AGENT_TOKEN", "[system.runner] command_env must be a list of environment variable names"),
        (["A", 3], "[system.runner] command_env must be a list of environment variable names"),
        (["1ABC"], "[system.runner] command_env: '1ABC' is not an environment variable name"),
        (["A=B"], "[system.runner] command_env: 'A=B' is not an environment variable name"),
        (
            ["OK", "HZ_CREDENTIAL_GITHUB"],
            "[system.runner] command_env: HZ_CREDENTIAL_GITHUB is an hz credential and is never "
            "passed to a child process",
        ),
    ],
)
def test_check_passthrough_refuses(names: object, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        check_passthrough(names, "[system.runner] command_env")
    assert e.value.message == message


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GH_TOKEN",
        "GITHUB_PAT",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "DB_PASSWORD",
        "HZ_CREDENTIAL_ANY",
        "SSH_AUTH_SOCK",
        "MY_APIKEY",
    ],
)
def test_credential_names(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "KEYBOARD_LAYOUT", "TOKENIZERS_PARALLELISM", "LANG"]
)
def test_not_credential_names(name: str) -> None:
    assert not is_credential_name(name)

"""The ``[system.runner]`` keys of the ``claude-code`` runner and its environment policy.

Environment: hz's allowlist (PATH, HOME, LANG, LC_*, TMPDIR) plus the names the operator lists
in ``claude_env``, plus what the runner sets itself. Never passed: ``HZ_CREDENTIAL_*``, the
variables a parent Claude Code session sets for its children, and ``ANTHROPIC_API_KEY`` /
``ANTHROPIC_AUTH_TOKEN`` unless ``allow_api_key_billing = true`` (a key silently outranks a
subscription login and bills the API account).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Self

from pydantic import Field, field_validator, model_validator

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.process.environment import child_environment
from hz.runtime.runners.claude_code.tools import (
    DEFAULT_READ_ONLY_TOOLS,
    DELEGATION_TOOLS,
    NETWORK_TOOLS,
    READ_ONLY_TOOLS,
    TOOLS_VERSION,
    WRITING_TOOLS,
)
from hz.runtime.runners.settings import (
    Expect,
    MaxTurns,
    ModelName,
    RunnerSettings,
    key_name,
    model_key,
    passed_names,
)
from hz.runtime.settings.model import MAX_INTEGER

#: Set by a parent Claude Code session for its children: passing them on would make the CLI
#: believe it runs inside that session.
PARENT_SESSION_NAMES = frozenset({"CLAUDECODE", "CLAUDE_CODE_SSE_PORT", "CLAUDE_CODE_ENTRYPOINT"})
API_KEY_NAMES: tuple[str, ...] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
#: Set by the runner itself (``claude_max_retries`` chooses the retries).
OWN_NAMES = frozenset(
    {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "CLAUDE_CODE_MAX_RETRIES"}
)

_TOOL = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class ClaudeSettings(RunnerSettings):
    model: ModelName = model_key("passed as `--model`; unset: the CLI's default", blank=False)
    max_turns: Annotated[
        MaxTurns,
        Field(
            description="the operator's circuit breaker: passed as `--max-turns` (accepted by "
            "the CLI, not in its `--help`); a run that hits it ends `failed` / `max_turns`",
        ),
    ] = None
    read_only_tools: Annotated[
        tuple[Annotated[str, Field(strict=True)], ...],
        Field(
            description="the only tools a contract may name; also the session's tools when the "
            "contract names none (`hz.agent.tools: []`). Only tools of the pinned CLI known to "
            "read nothing but local files: "
            + ", ".join(f"`{t}`" for t in READ_ONLY_TOOLS)
            + "; any other name is refused"
        ),
        Expect("must be a list of tool names"),
    ] = DEFAULT_READ_ONLY_TOOLS
    network_tools: Annotated[
        tuple[Annotated[str, Field(strict=True)], ...],
        Field(
            description="tools that reach the network (`WebFetch`, `WebSearch`) a contract may "
            "name besides `read_only_tools`; a session given one is *widened*: named in the "
            "result (`session_widened`), the receipt and `hz run`'s output"
        ),
        Expect("must be a list of tool names"),
    ] = ()
    executable: Annotated[
        str,
        Field(
            alias="claude_executable",
            strict=True,
            pattern=r"\S",
            description="the `claude` program (on `PATH`), resolved to an absolute path before "
            "the run changes directory; a relative path is taken from hz's working directory",
        ),
        Expect("must be a non-empty string"),
    ] = "claude"
    claude_env: Annotated[
        tuple[str, ...],
        passed_names("claude_env"),
        Field(
            description="extra environment variable names passed through (e.g. "
            "`CLAUDE_CODE_USE_BEDROCK`, `AWS_REGION`, `ANTHROPIC_BASE_URL`)"
        ),
    ] = ()
    allow_api_key_billing: Annotated[
        bool,
        Field(
            strict=True,
            description="pass `ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` to the CLI",
        ),
        Expect("must be true or false"),
    ] = False
    max_retries: Annotated[
        int,
        Field(
            alias="claude_max_retries",
            strict=True,
            ge=0,
            le=MAX_INTEGER,
            description="the CLI's API retries (`CLAUDE_CODE_MAX_RETRIES`); with an unreachable "
            "API each retry waits longer, the run's timeout still bounds them",
        ),
        Expect(
            "must be an integer >= 0, got {value!r}", hint=f"a whole number from 0 to {MAX_INTEGER}"
        ),
    ] = 3

    @field_validator("read_only_tools")
    @classmethod
    def _read_only(cls, tools: tuple[str, ...]) -> tuple[str, ...]:
        return _check_tools("read_only_tools", tools)

    @field_validator("network_tools")
    @classmethod
    def _network(cls, tools: tuple[str, ...]) -> tuple[str, ...]:
        return _check_tools("network_tools", tools)

    @model_validator(mode="after")
    def _env_names(self) -> Self:
        env = key_name("claude_env")
        for name in self.claude_env:
            if name in PARENT_SESSION_NAMES:
                raise ConfigError(
                    f"{env}: {name} describes a parent Claude Code session and is never passed"
                )
            if name in OWN_NAMES:
                raise ConfigError(
                    f"{env}: {name} is set by the claude-code runner itself",
                    hint="set [system.runner] claude_max_retries to choose the retries",
                )
            if name in API_KEY_NAMES and not self.allow_api_key_billing:
                raise ConfigError(
                    f"{env}: {name} bills the Anthropic API account and is passed only with "
                    "allow_api_key_billing = true"
                )
        return self

    def environment(self, source: Mapping[str, str] | None = None) -> dict[str, str]:
        names = self.claude_env + (API_KEY_NAMES if self.allow_api_key_billing else ())
        extra = {
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(self.max_retries),
        }
        return child_environment(passthrough=names, extra=extra, source=source)


def _check_tools(setting: str, tools: tuple[str, ...]) -> tuple[str, ...]:
    """``read_only_tools`` holds only ``READ_ONLY_TOOLS``, ``network_tools`` only
    ``NETWORK_TOOLS``; ``ConfigError`` saying why for any other name."""
    key = key_name(setting)
    own, other = (
        (READ_ONLY_TOOLS, NETWORK_TOOLS)
        if setting == "read_only_tools"
        else (NETWORK_TOOLS, READ_ONLY_TOOLS)
    )
    for tool in tools:
        if tool in own:
            continue
        if not _TOOL.fullmatch(tool):
            raise ConfigError(f"{key}: {tool!r} is not a tool name")
        if tool in NETWORK_TOOLS:
            raise ConfigError(
                f"{key}: {tool} reaches the network and is never read-only",
                hint="list it in [system.runner] network_tools to widen the session on purpose",
            )
        if tool in other:
            raise ConfigError(f"{key}: {tool} reads local files; list it in read_only_tools")
        raise ConfigError(f"{key}: {tool} {_refusal(tool)}")
    return tools


def _refusal(tool: str) -> str:
    """Why a tool other than a read-only or a network one is refused."""
    if tool in WRITING_TOOLS:
        return "can write or execute and is never read-only"
    if tool in DELEGATION_TOOLS:
        return (
            "delegates to sub-agents, which hz cannot hold to the read-only allow-list; "
            "never allowed"
        )
    return (
        f"is not a tool the claude CLI {TOOLS_VERSION} is known to offer read-only "
        f"(read-only: {', '.join(READ_ONLY_TOOLS)}; network: {', '.join(NETWORK_TOOLS)})"
    )

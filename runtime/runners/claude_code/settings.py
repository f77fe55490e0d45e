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
from dataclasses import dataclass
from typing import Any

from hz.runtime.errors import ConfigError
from hz.runtime.process.environment import check_passthrough, child_environment

DEFAULT_READ_ONLY_TOOLS: tuple[str, ...] = ("Read", "Grep", "Glob")
#: Tools that write or execute: never allowed into ``read_only_tools``.
WRITING_TOOLS = frozenset(
    {"Bash", "Edit", "MultiEdit", "Write", "NotebookEdit", "PowerShell", "KillShell"}
)
#: Set by a parent Claude Code session for its children: passing them on would make the CLI
#: believe it runs inside that session.
PARENT_SESSION_NAMES = frozenset({"CLAUDECODE", "CLAUDE_CODE_SSE_PORT", "CLAUDE_CODE_ENTRYPOINT"})
API_KEY_NAMES: tuple[str, ...] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
#: Set by the runner itself (``claude_max_retries`` chooses the retries).
OWN_NAMES = frozenset(
    {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "CLAUDE_CODE_MAX_RETRIES"}
)

KEYS = frozenset(
    {
        "model",
        "max_turns",
        "read_only_tools",
        "claude_executable",
        "claude_env",
        "allow_api_key_billing",
        "claude_max_retries",
    }
)

_TOOL = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class ClaudeSettings:
    model: str | None = None
    max_turns: int | None = None
    read_only_tools: tuple[str, ...] = DEFAULT_READ_ONLY_TOOLS
    executable: str = "claude"
    claude_env: tuple[str, ...] = ()
    allow_api_key_billing: bool = False
    max_retries: int = 3

    def environment(self, source: Mapping[str, str] | None = None) -> dict[str, str]:
        names = self.claude_env + (API_KEY_NAMES if self.allow_api_key_billing else ())
        extra = {
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(self.max_retries),
        }
        return child_environment(passthrough=names, extra=extra, source=source)


def _key(name: str) -> str:
    return f"[system.runner] {name}"


def _int(settings: Mapping[str, Any], name: str, minimum: int) -> int | None:
    value = settings.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{_key(name)} must be an integer >= {minimum}, got {value!r}")
    return value


def _tools(value: object) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_READ_ONLY_TOOLS
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise ConfigError(f"{_key('read_only_tools')} must be a list of tool names")
    for tool in value:
        if not _TOOL.fullmatch(tool):
            raise ConfigError(f"{_key('read_only_tools')}: {tool!r} is not a tool name")
        if tool in WRITING_TOOLS:
            raise ConfigError(
                f"{_key('read_only_tools')}: {tool} can write or execute and is never read-only"
            )
    return tuple(value)


def _env_names(value: object, allow_api_key_billing: bool) -> tuple[str, ...]:
    names = check_passthrough([] if value is None else value, _key("claude_env"))
    for name in names:
        if name in PARENT_SESSION_NAMES:
            raise ConfigError(
                f"{_key('claude_env')}: {name} describes a parent Claude Code session and is "
                "never passed"
            )
        if name in OWN_NAMES:
            raise ConfigError(
                f"{_key('claude_env')}: {name} is set by the claude-code runner itself",
                hint="set [system.runner] claude_max_retries to choose the retries",
            )
        if name in API_KEY_NAMES and not allow_api_key_billing:
            raise ConfigError(
                f"{_key('claude_env')}: {name} bills the Anthropic API account and is passed "
                "only with allow_api_key_billing = true"
            )
    return names


def parse_settings(settings: Mapping[str, Any]) -> ClaudeSettings:
    model = settings.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigError(f"{_key('model')} must be a non-empty string, got {model!r}")
    executable = settings.get("claude_executable", "claude")
    if not isinstance(executable, str) or not executable.strip():
        raise ConfigError(f"{_key('claude_executable')} must be a non-empty string")
    allow = settings.get("allow_api_key_billing", False)
    if not isinstance(allow, bool):
        raise ConfigError(f"{_key('allow_api_key_billing')} must be true or false")
    retries = _int(settings, "claude_max_retries", 0)
    return ClaudeSettings(
        model=model,
        max_turns=_int(settings, "max_turns", 1),
        read_only_tools=_tools(settings.get("read_only_tools")),
        executable=executable,
        claude_env=_env_names(settings.get("claude_env"), allow),
        allow_api_key_billing=allow,
        max_retries=3 if retries is None else retries,
    )

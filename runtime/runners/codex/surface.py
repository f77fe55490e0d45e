"""What a Codex session may reach, shared by the ``codex`` (exec) and ``codex-app-server``
runners: the tools offered to the model, the environment of the commands it runs, and which
``codex_config`` overrides an operator may add.

Measured against the pinned CLI (0.171.0) by recording the request it sends to a fake
Responses API (tests/integration/test_codex_cli.py):

- **Tools.** By default the model is offered ``exec_command``, ``write_stdin``,
  ``request_user_input``, ``view_image``, sub-agents (``multi_agent_v1``), goals and the hosted
  ``web_search`` (a channel out of a read-only session). ``web_search="disabled"`` and the
  ``--disable`` flags below leave exactly ``exec_command``, ``write_stdin`` and
  ``request_user_input``; the read-only sandbox bounds what a command can do.
- **Environment of the model's commands.** The CLI needs its API key; the commands it runs
  for the model must not see it. ``shell_environment_policy``: inherit only codex's ``core``
  set (HOME, PATH, USER, TMPDIR, ...), keep its default excludes (names with KEY, SECRET,
  TOKEN) and exclude every name hz passed to the CLI itself.
- **Overrides.** ``codex_config`` lets through only keys that tune the model and its provider;
  anything that runs a program (``notify``, MCP servers, a provider's ``auth`` command),
  widens the session (sandbox, approvals, tools, features turned on, the shell environment,
  profiles) or is set by hz itself is refused with its reason.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable

#: Features that offer the model a tool beyond running commands, or reach the network.
DISABLED_FEATURES = (
    "multi_agent",
    "goals",
    "image_generation",
    "view_image",
    "apps",
    "browser_use",
    "computer_use",
)
#: What the model is offered once they are off (asserted against the real CLI).
OFFERED_TOOLS = ("exec_command", "write_stdin", "request_user_input")
#: Variables hz sets for the CLI itself besides the operator's ``codex_env``.
CLI_VARIABLES = ("CODEX_HOME",)


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: JSON's escapes are TOML's, as long as characters
    outside the BMP stay literal (TOML has no surrogate pairs)."""
    return json.dumps(text, ensure_ascii=False)


def closed_surface() -> tuple[str, ...]:
    """Options (``-c`` / ``--disable``, accepted by ``exec`` and ``app-server`` alike) that
    leave the model only the command tools."""
    args = ["-c", 'web_search="disabled"']
    for feature in DISABLED_FEATURES:
        args += ["--disable", feature]
    return tuple(args)


def shell_environment(cli_names: Iterable[str]) -> tuple[str, ...]:
    """``-c`` options that keep ``cli_names`` (and hz's own variables) from the commands the
    model runs."""
    excluded = sorted({*cli_names, *CLI_VARIABLES})
    return (
        "-c",
        'shell_environment_policy.inherit="core"',
        "-c",
        "shell_environment_policy.ignore_default_excludes=false",
        "-c",
        f"shell_environment_policy.exclude=[{','.join(toml_string(n) for n in excluded)}]",
    )


_TOOLS = "it would offer the model more than running commands in the read-only sandbox"
#: First key parts refused, with the reason.
_REFUSED: dict[str, str] = {
    "approval_policy": 'hz runs codex with approval_policy "never"',
    "approvals_reviewer": 'hz runs codex with approval_policy "never"',
    "sandbox_mode": "hz runs codex in the read-only sandbox",
    "sandbox_workspace_write": "hz runs codex in the read-only sandbox",
    "permissions": "hz runs codex in the read-only sandbox",
    "default_permissions": "hz runs codex in the read-only sandbox",
    "model": "set the model with [system.runner] model",
    "model_instructions_file": "hz passes the contract through this file",
    "mcp_servers": "MCP servers run outside codex's read-only sandbox",
    "notify": "codex runs the notify program outside its sandbox after the turn",
    "hooks": "codex runs hook programs outside its sandbox",
    "shell_environment_policy": "hz keeps the CLI's variables from the model's commands",
    "web_search": _TOOLS,
    "tools": _TOOLS,
    "apps": _TOOLS,
    "plugins": _TOOLS,
    "skills": _TOOLS,
    "profile": "a profile can change the sandbox and approvals",
    "profiles": "a profile can change the sandbox and approvals",
    "projects": "a trusted project loads its own configuration",
    "project_doc_max_bytes": "hz keeps AGENTS.md of the working directory out of the session",
}
#: First key parts let through: the model and its provider.
ALLOWED = frozenset(
    {
        "model_provider",
        "model_providers",
        "model_reasoning_effort",
        "model_reasoning_summary",
        "model_verbosity",
        "model_context_window",
        "model_auto_compact_token_limit",
        "model_supports_reasoning_summaries",
        "service_tier",
        "hide_agent_reasoning",
        "show_raw_agent_reasoning",
        "tool_output_token_limit",
        "features",
    }
)


def override_refusal(key: str, value: str) -> str | None:
    """Why the override ``key=value`` (a dotted key, a TOML value) is refused, or None."""
    head, *rest = key.split(".")
    if head in _REFUSED:
        return _REFUSED[head]
    if head not in ALLOWED:
        return "hz lets through only keys that tune the model and its provider: " + ", ".join(
            sorted(ALLOWED)
        )
    parsed = _value(value)
    if head == "model_providers" and _has_auth(rest, parsed):
        return "a provider's auth command runs outside codex's sandbox"
    if head == "features":
        features = {rest[0]: parsed} if rest else _dict(parsed)
        if "unbounded_connection_retries" in features:
            return "hz keeps connection retries bounded"
        if not features or any(on is not False for on in features.values()):
            return "codex_config may only turn features off (a feature can add tools)"
    return None


def _value(value: str) -> object:
    return tomllib.loads(f"value = {value}")["value"]


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _has_auth(rest: list[str], value: object) -> bool:
    """Whether a ``model_providers`` override sets a provider's ``auth`` table."""
    if len(rest) >= 2:  # model_providers.ID.KEY...
        return rest[1] == "auth"
    if len(rest) == 1:  # model_providers.ID = {...}
        return "auth" in _dict(value)
    return any("auth" in _dict(table) for table in _dict(value).values())

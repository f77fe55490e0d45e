"""The exact command line of one ``claude`` run (documented in docs/runners/claude-code.md)."""

from __future__ import annotations

import json

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.artifacts.models import Budget, OutputSpec, ToolProfile
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.claude_code.tools import NETWORK_TOOLS

#: Flags that keep the user's and the project's Claude setup out of the session.
ISOLATION_FLAGS: tuple[str, ...] = (
    "--safe-mode",
    "--restricted",
    "--disable-slash-commands",
    "--strict-mcp-config",
    "--no-session-persistence",
)


def session_tools(profile: ToolProfile, settings: ClaudeSettings) -> tuple[str, ...]:
    """The profile's tools, or ``read_only_tools`` for an empty profile; ``RunnerError``
    (before anything runs) for a tool outside ``read_only_tools`` and ``network_tools``."""
    if not profile.tools:
        return settings.read_only_tools
    allowed = settings.read_only_tools + settings.network_tools
    outside = [t for t in profile.tools if t not in allowed]
    if outside:
        raise RunnerError(
            f"the claude-code runner allows only read-only tools ({', '.join(allowed)}); "
            f"the contract asks for {', '.join(outside)}",
            hint="change hz.agent.tools, or the operator's [system.runner] read_only_tools "
            "(network tools: network_tools)",
        )
    return tuple(dict.fromkeys(profile.tools))


def widening(tools: tuple[str, ...]) -> tuple[str, ...]:
    """The session's tools that reach beyond local files (the network): a widened session."""
    return tuple(t for t in tools if t in NETWORK_TOOLS)


#: The longest ``--json-schema`` argument passed on argv, in bytes. Linux refuses one argument
#: over 128 KiB (``MAX_ARG_STRLEN``) with E2BIG, "Argument list too long"; a longer schema goes
#: on stdin instead, in the CLI's ``initialize`` control request (``--input-format stream-json``).
ARGV_SCHEMA_LIMIT = 64 * 1024


def schema_on_stdin(output: OutputSpec | None) -> bool:
    """Whether the output schema is too long for argv and goes on stdin."""
    schema = json_schema(output)
    return schema is not None and len(schema.encode("utf-8")) > ARGV_SCHEMA_LIMIT


def stdin_bytes(prompt: str, output: OutputSpec | None) -> bytes:
    """What the CLI reads on stdin: the prompt; with a schema too long for argv, stream-json
    lines: the ``initialize`` control request carrying the schema, then the prompt as the
    user's message."""
    if output is None or output.schema_ is None or not schema_on_stdin(output):
        return prompt.encode("utf-8")
    lines = (
        {
            "type": "control_request",
            "request_id": "hz-initialize",
            "request": {"subtype": "initialize", "jsonSchema": output.schema_},
        },
        {
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": None,
            "session_id": "",
        },
    )
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


def json_schema(output: OutputSpec | None) -> str | None:
    # A boolean schema is no structured-output request; hz's output check applies it.
    if output is None or output.format != "json" or not isinstance(output.schema_, dict):
        return None
    return json.dumps(output.schema_, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def build_argv(
    executable: str,
    *,
    contract_file: str,
    tools: tuple[str, ...],
    budget: Budget,
    output: OutputSpec | None,
    settings: ClaudeSettings,
) -> tuple[str, ...]:
    listed = ",".join(tools)
    argv = [
        executable,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        *ISOLATION_FLAGS,
        "--append-system-prompt-file",
        contract_file,
        "--tools",
        listed,
        "--allowed-tools",
        listed,
        "--permission-mode",
        "dontAsk",
        "--max-budget-usd",
        repr(float(budget.max_usd)),
    ]
    if settings.model is not None:
        argv += ["--model", settings.model]
    schema = json_schema(output)
    if schema is not None and schema_on_stdin(output):
        argv += ["--input-format", "stream-json"]
    elif schema is not None:
        argv += ["--json-schema", schema]
    if settings.max_turns is not None:
        argv += ["--max-turns", str(settings.max_turns)]
    return tuple(argv)

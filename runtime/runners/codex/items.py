"""Codex's thread items as hz reads them, for ``codex exec --json`` and ``codex app-server`` alike.

Both speak of the same items (a command, an MCP tool call, a web search, a file change, the
agent's message) and the same usage counts, in two spellings: ``exec`` writes snake_case
(``command_execution``, ``exit_code``), the app server camelCase (``commandExecution``,
``exitCode``). A ``Dialect`` names one spelling; the reading is written once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from hz.runtime.artifacts.result import ToolCall, Usage
from hz.runtime.runners.codex.fields import as_dict, as_int, as_str
from hz.runtime.transcript.record import Recorder

#: Statuses the CLI gives a tool item that did not do what was asked.
_ERROR_STATUSES = frozenset({"failed", "declined"})


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one codex interface spells item types and fields."""

    command: str
    mcp: str
    web_search: str
    file_change: str
    #: A client-defined tool: only the app server has them.
    dynamic: str | None
    exit_code: str
    output: str
    in_progress: str
    #: Usage counts: input (cached included), cached input, output, cache writes.
    usage: tuple[str, str, str, str]
    #: Whether an MCP call's ``error`` marks it failed whatever its status (``exec``).
    mcp_error_fails: bool

    @property
    def tool_items(self) -> frozenset[str]:
        kinds = (self.command, self.mcp, self.web_search, self.file_change, self.dynamic)
        return frozenset(kind for kind in kinds if kind is not None)

    def tool_call(self, item: dict[str, Any]) -> ToolCall:
        """One tool item as a ``ToolCall``; ``item["type"]`` is one of ``tool_items``."""
        kind = item["type"]
        status = as_str(item.get("status"))
        failed: bool | None = (
            None if status in (None, self.in_progress) else status in _ERROR_STATUSES
        )
        input_: JsonValue
        if kind == self.command:
            code = item.get(self.exit_code)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                failed = True
            input_ = {"command": as_str(item.get("command"))}
            return ToolCall(name="command_execution", input=input_, is_error=failed)
        if kind == self.mcp:
            server, tool = as_str(item.get("server")) or "?", as_str(item.get("tool")) or "?"
            if self.mcp_error_fails and item.get("error") not in (None, {}):
                failed = True
            arguments = item.get("arguments")
            input_ = arguments if isinstance(arguments, dict | list | str) else None
            return ToolCall(name=f"mcp__{server}__{tool}", input=input_, is_error=failed)
        if kind == self.web_search:
            return ToolCall(name="web_search", input={"query": as_str(item.get("query"))})
        if kind == self.dynamic:
            return ToolCall(name=as_str(item.get("tool")) or "dynamic_tool", is_error=failed)
        changes = item.get("changes")
        paths = (
            [as_str(as_dict(c).get("path")) for c in changes] if isinstance(changes, list) else []
        )
        return ToolCall(name="file_change", input={"paths": paths}, is_error=failed)

    def record_tool(
        self, transcript: Recorder, turn: int, call: ToolCall, item: dict[str, Any]
    ) -> None:
        """A completed tool item into the transcript: the call, then its output or failure."""
        transcript.add("tool_call", turn=turn, name=call.name, input=call.input)
        output = as_str(item.get(self.output))
        if output is None and item.get("result") is not None:  # an MCP tool's result
            output = json.dumps(item.get("result"), ensure_ascii=False)
        if output is not None or call.is_error is not None:
            transcript.add(
                "tool_result", turn=turn, name=call.name, text=output, is_error=call.is_error
            )

    def usage_of(self, counts: dict[str, Any]) -> Usage:
        """Usage counts as hz keeps them: the CLI counts cached input inside the input
        tokens; hz's ``Usage`` keeps them apart."""
        total_in, cached, output, written = (as_int(counts.get(name)) for name in self.usage)
        cached = min(cached, total_in)
        return Usage(
            input_tokens=total_in - cached,
            output_tokens=output,
            cache_read_input_tokens=cached,
            cache_creation_input_tokens=written,
        )


EXEC = Dialect(
    command="command_execution",
    mcp="mcp_tool_call",
    web_search="web_search",
    file_change="file_change",
    dynamic=None,
    exit_code="exit_code",
    output="aggregated_output",
    in_progress="in_progress",
    usage=("input_tokens", "cached_input_tokens", "output_tokens", "cache_write_input_tokens"),
    mcp_error_fails=True,
)
APP_SERVER = Dialect(
    command="commandExecution",
    mcp="mcpToolCall",
    web_search="webSearch",
    file_change="fileChange",
    dynamic="dynamicToolCall",
    exit_code="exitCode",
    output="aggregatedOutput",
    in_progress="inProgress",
    usage=("inputTokens", "cachedInputTokens", "outputTokens", "cacheWriteInputTokens"),
    mcp_error_fails=False,
)

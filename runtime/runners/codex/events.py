"""Reads ``codex exec --json`` output, one JSONL event at a time, defensively.

Events (CLI 0.171.0): ``thread.started``, ``turn.started``, ``item.started`` /
``item.updated`` / ``item.completed``, ``turn.completed`` (with ``usage``), ``turn.failed``
(with ``error.message``) and ``error``. Every field is optional: a missing or mistyped field
reads as absent. Unknown event and item types are counted and ignored; lines that are not JSON
objects are counted and skipped. The model's text is kept only as the draft, never used to
decide anything.

``error`` lines are not failures by themselves: the CLI prints its retry notices
("Reconnecting... 1/5 (…)") that way. The last one is kept (``retry_notice``) while nothing
came after it (``retry_pending``): a run that ends while the CLI waits to retry says why. An
``item.completed`` of type ``error`` is the CLI's warning (e.g. unknown model metadata). Only
``turn.failed``, or the lack of ``turn.completed``, makes a run fail.

Completed items (agent messages, tool calls with their output) and each turn's usage also go
to the run's transcript (``transcript``, capped as they arrive). Tool calls and the messages
kept are held to the output cap as they arrive (``kept``, ``hz.runtime.runners.output_cap``):
the CLI prints on past the 8 MiB of stdout hz keeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.result import ToolCall, Usage
from hz.runtime.runners.codex.fields import as_dict as _dict
from hz.runtime.runners.codex.fields import as_str as _str
from hz.runtime.runners.codex.items import EXEC
from hz.runtime.runners.output_cap import Kept, keep_last
from hz.runtime.transcript.record import Recorder

_KNOWN_EVENTS = frozenset(
    {
        "thread.started",
        "turn.started",
        "item.started",
        "item.updated",
        "item.completed",
        "turn.completed",
        "turn.failed",
        "error",
    }
)
#: Item types that are known but are not tool calls.
_OTHER_ITEMS = frozenset({"agent_message", "reasoning", "todo_list", "error"})
RETRY_NOTICE_PREFIX = "Reconnecting..."
#: The longest retry notice kept (the CLI's are one short line).
MAX_NOTICE = 500


@dataclass
class CodexStream:
    """Accumulates one run's events. ``feed`` returns True once ``turn.completed`` arrived
    (the "final result seen" signal for ``hz.runtime.process.bounded``)."""

    thread_id: str | None = None
    turns_started: int = 0
    turn_completed: bool = False
    turn_failed: str | None = None
    usage: Usage = field(default_factory=Usage)
    final_message: str | None = None
    #: The last ``error`` lines that were not retry notices, in order.
    errors: list[str] = field(default_factory=list)
    #: The CLI's last warnings (``item.completed`` of type ``error``).
    warnings: list[str] = field(default_factory=list)
    #: The CLI's last retry notice ("Reconnecting... 1/5 (…)"), and whether it is still the
    #: last thing the CLI did (no item nor turn event since): it is waiting to retry.
    retry_notice: str | None = None
    retry_pending: bool = False
    #: Tool item events the CLI itself declined (its typed refusal: ``status: "declined"``).
    declined: int = 0
    transcript: Recorder = field(default_factory=Recorder)
    kept: Kept = field(default_factory=Kept)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return self.kept.tool_calls

    def feed(self, line: bytes | str) -> bool:
        text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
        if not text.strip():
            return False
        try:
            event = strict_json.loads(text, lone_surrogates="replace")
        except json.JSONDecodeError:
            return False
        if not isinstance(event, dict):
            return False
        kind = _str(event.get("type")) or "(no type)"
        if kind not in _KNOWN_EVENTS:
            pass  # an event of a newer CLI: nothing hz reads
        elif kind == "thread.started":
            self.thread_id = _str(event.get("thread_id")) or self.thread_id
        elif kind == "turn.started":
            self.turns_started += 1
        elif kind.startswith("item."):
            item = _dict(event.get("item"))
            if _str(item.get("type")) != "error":  # a warning of the CLI is no answer
                self.retry_pending = False
            self._item(kind, item)
        elif kind == "turn.completed":
            self._add_usage(EXEC.usage_of(_dict(event.get("usage"))))
            self.turn_completed = True
            self.retry_pending = False
        elif kind == "turn.failed":
            self.turn_failed = _str(_dict(event.get("error")).get("message")) or "turn failed"
            self.retry_pending = False
        else:
            message = _str(event.get("message")) or ""
            if message.startswith(RETRY_NOTICE_PREFIX):
                self.retry_notice = message[:MAX_NOTICE]
                self.retry_pending = True
            else:
                keep_last(self.errors, message)
        return self.turn_completed

    def _item(self, event: str, item: dict[str, Any]) -> None:
        kind = _str(item.get("type")) or "(no type)"
        if kind in EXEC.tool_items:
            if item.get("status") == "declined":
                self.declined += 1
            call = EXEC.tool_call({**item, "type": kind})
            self.kept.put_call(_str(item.get("id")), call)
            if event == "item.completed":
                EXEC.record_tool(self.transcript, self.turns_started, call, item)
        elif kind not in _OTHER_ITEMS or event != "item.completed":
            return
        elif kind == "agent_message":
            self.final_message = _str(item.get("text"))
            self.transcript.add("message", turn=self.turns_started, text=self.final_message)
        elif kind == "error":
            keep_last(self.warnings, _str(item.get("message")) or "")

    def _add_usage(self, turn: Usage) -> None:
        self.transcript.add("usage", turn=self.turns_started, usage=turn.to_json_data())
        u = self.usage
        self.usage = Usage(
            input_tokens=u.input_tokens + turn.input_tokens,
            output_tokens=u.output_tokens + turn.output_tokens,
            cache_read_input_tokens=u.cache_read_input_tokens + turn.cache_read_input_tokens,
            cache_creation_input_tokens=u.cache_creation_input_tokens
            + turn.cache_creation_input_tokens,
        )

"""What the server said about hz's one thread and turn, notification by notification.

Read (pinned 0.171.0, camelCase): ``turn/started`` and ``turn/completed`` (``turn.id``,
``turn.status``: completed / interrupted / failed, ``turn.error``: ``message`` and the typed
``codexErrorInfo``), ``item/started`` / ``item/completed`` (``agentMessage``,
``commandExecution``, ``fileChange``, ``mcpToolCall``, ``webSearch``, ...),
``thread/tokenUsage/updated`` (the thread's running ``total``), ``error`` (``willRetry``: the
last retry notice is kept while no item came after it) and ``warning``. Every field is
optional: a missing or mistyped one reads as absent. Other notifications of the pinned protocol
are ignored; notifications it does not know are counted as unknown and ignored. The model's
text is kept as the draft, never used to decide anything. Completed items (agent messages, tool
calls with their output) and the turn's usage also go to the run's transcript (``transcript``,
capped as they arrive). Tool calls, the names counted and the messages kept are held to the
output cap as they arrive (``kept``, ``hz.runtime.runners.output_cap``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hz.runtime.artifacts.result import ToolCall, Usage
from hz.runtime.runners.codex.events import MAX_NOTICE
from hz.runtime.runners.codex.fields import as_dict as _dict
from hz.runtime.runners.codex.fields import as_str as _str
from hz.runtime.runners.codex.items import APP_SERVER
from hz.runtime.runners.codex_app_server.protocol import notification_methods
from hz.runtime.runners.codex_app_server.rpc import Notification
from hz.runtime.runners.output_cap import Kept, keep_last
from hz.runtime.transcript.record import Recorder


@dataclass
class Turn:
    """One thread's one turn, as far as the notifications told."""

    thread_id: str | None = None
    turn_id: str | None = None
    #: ``turn.status`` of ``turn/completed`` (completed, interrupted, failed); None until then.
    status: str | None = None
    error: dict[str, Any] = field(default_factory=dict)
    final_message: str | None = None
    usage: Usage = field(default_factory=Usage)
    #: The last ``error`` notifications the server will not retry, verbatim, in order.
    errors: list[str] = field(default_factory=list)
    retries: int = 0
    #: The server's last retry notice (an ``error`` it will retry: its message and details)
    #: and its typed ``codexErrorInfo``, and whether it is still the last thing the turn did
    #: (no item since): the server is waiting to retry.
    retry_notice: str | None = None
    retry_info: Any = None
    retry_pending: bool = False
    warnings: list[str] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)
    transcript: Recorder = field(default_factory=Recorder)
    kept: Kept = field(default_factory=Kept)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return self.kept.tool_calls

    @property
    def completed(self) -> bool:
        return self.status is not None

    def feed(self, note: Notification) -> None:
        params = note.params
        thread = _str(params.get("threadId"))
        if thread is not None and self.thread_id is not None and thread != self.thread_id:
            return  # another thread's (hz starts one): not this session's
        method = note.method
        if method == "turn/started":
            self.turn_id = self.turn_id or _str(_dict(params.get("turn")).get("id"))
        elif method == "turn/completed":
            turn = _dict(params.get("turn"))
            self.turn_id = self.turn_id or _str(turn.get("id"))
            self.status = _str(turn.get("status")) or "(no status)"
            self.error = _dict(turn.get("error"))
            self.transcript.add("usage", turn=1, usage=self.usage.to_json_data())
        elif method in ("item/started", "item/completed"):
            self.retry_pending = False
            self._item(method, _dict(params.get("item")))
        elif method == "thread/tokenUsage/updated":
            self._usage(_dict(_dict(params.get("tokenUsage")).get("total")))
        elif method == "error":
            error = _dict(params.get("error"))
            message = _str(error.get("message")) or ""
            if params.get("willRetry") is True:
                self.retries += 1
                details = _str(error.get("additionalDetails"))
                notice = f"{message} ({details})" if details else message
                self.retry_notice = notice[:MAX_NOTICE]
                self.retry_info = error.get("codexErrorInfo")
                self.retry_pending = True
            else:
                keep_last(self.errors, message)
        elif method == "warning":
            keep_last(self.warnings, _str(params.get("message")) or "")
        elif method not in notification_methods():
            self.kept.count(self.unknown, method)

    def _item(self, method: str, item: dict[str, Any]) -> None:
        kind = _str(item.get("type"))
        if kind in APP_SERVER.tool_items:
            call = APP_SERVER.tool_call(item)
            self.kept.put_call(_str(item.get("id")), call)
            if method == "item/completed":
                APP_SERVER.record_tool(self.transcript, 1, call, item)
        elif kind == "agentMessage" and method == "item/completed":
            self.final_message = _str(item.get("text"))
            self.transcript.add("message", turn=1, text=self.final_message)

    def _usage(self, total: dict[str, Any]) -> None:
        self.usage = APP_SERVER.usage_of(total)

    def error_info(self) -> str | None:
        """``turn.error.codexErrorInfo`` when it is one of the plain names (``sandboxError``)."""
        return _str(self.error.get("codexErrorInfo"))

    def error_message(self) -> str | None:
        return _str(self.error.get("message"))

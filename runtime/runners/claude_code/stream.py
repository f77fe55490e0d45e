"""Reads ``claude -p --output-format stream-json`` output, one line at a time, defensively.

Every field is optional: a missing or mistyped field reads as absent, never as an error.
Unknown event types and subtypes are counted and ignored (the CLI adds new ones, e.g.
``rate_limit_event``, ``ui_invalidate``); lines that are not JSON objects are counted and
skipped. Everything typed the classifier needs is kept; the model's text is kept only as the
draft, never used to decide anything. Messages, tool calls, tool results and usage per model
turn also go to the run's transcript (``transcript``, capped as they arrive). Tool calls, the
names counted and the error codes are held to the output cap as they arrive (``kept``,
``hz.runtime.runners.output_cap``): the CLI prints on past the 8 MiB of stdout hz keeps, and nothing
kept per line grows with the length of the stream.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.result import ToolCall, Usage
from hz.runtime.runners.output_cap import MAX_NOTES, Kept, id_key, name
from hz.runtime.transcript.record import Recorder

#: Event types this parser reads; anything else is counted as unknown.
_KNOWN = {"system", "assistant", "user", "result"}
_KNOWN_SYSTEM = {"init", "permission_denied", "api_retry"}


@dataclass(frozen=True, slots=True)
class ResultEvent:
    """The typed fields of the final ``result`` line."""

    subtype: str | None
    is_error: bool
    api_error_status: int | None
    terminal_reason: str | None
    num_turns: int | None
    total_cost_usd: float | None
    usage: Usage
    text: str | None
    has_structured_output: bool
    structured_output: JsonValue
    errors: tuple[str, ...]
    permission_denials: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StreamSummary:
    model: str | None
    api_key_source: str | None
    tool_calls: tuple[ToolCall, ...]
    assistant_errors: tuple[str, ...]
    result: ResultEvent | None
    rate_limit_resets_at: float | None
    rate_limit_retry_delay: float | None
    #: The last thing the CLI did was to start waiting out a 429.
    rate_limit_retry_pending: bool
    unknown_events: tuple[tuple[str, int], ...]
    skipped_lines: int
    #: Tokens summed over the streamed assistant messages: all that is known of a session
    #: that ends without a result event (killed at the timeout); a lower bound.
    streamed_usage: Usage = field(default_factory=Usage)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _usage(raw: object) -> Usage:
    fields = _dict(raw)
    counts = {
        name: max(0, _int(fields.get(name)) or 0)
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    }
    return Usage(**counts)


_MODEL_USAGE_FIELDS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_read_input_tokens": "cacheReadInputTokens",
    "cache_creation_input_tokens": "cacheCreationInputTokens",
}


def _total_usage(event: dict[str, Any]) -> Usage:
    """``modelUsage`` summed over models when present: on error results (budget, max turns)
    the pinned CLI reports ``usage`` as zeros while ``modelUsage`` holds the session's totals."""
    per_model = [m for m in _dict(event.get("modelUsage")).values() if isinstance(m, dict)]
    if not per_model:
        return _usage(event.get("usage"))
    totals = {
        ours: sum(max(0, _int(m.get(theirs)) or 0) for m in per_model)
        for ours, theirs in _MODEL_USAGE_FIELDS.items()
    }
    return Usage(**totals)


def _result_event(event: dict[str, Any]) -> ResultEvent:
    denials = tuple(
        _str(d.get("tool_name")) or "?"
        for d in _list(event.get("permission_denials"))
        if isinstance(d, dict)
    )
    return ResultEvent(
        subtype=_str(event.get("subtype")),
        is_error=event.get("is_error") is True,
        api_error_status=_int(event.get("api_error_status")),
        terminal_reason=_str(event.get("terminal_reason")),
        num_turns=_int(event.get("num_turns")),
        total_cost_usd=_number(event.get("total_cost_usd")),
        usage=_total_usage(event),
        text=_str(event.get("result")),
        has_structured_output="structured_output" in event,
        structured_output=event.get("structured_output"),
        errors=tuple(e for e in _list(event.get("errors")) if isinstance(e, str)),
        permission_denials=denials,
    )


def _sum(a: Usage, b: Usage) -> Usage:
    return Usage(**{field: getattr(a, field) + getattr(b, field) for field in Usage.model_fields})


def _content_text(content: object) -> str | None:
    """A tool result's content: a string, or the text of its text blocks."""
    if isinstance(content, str):
        return content
    parts = [_str(b.get("text")) for b in _list(content) if isinstance(b, dict)]
    texts = [p for p in parts if p]
    return "\n".join(texts) if texts else None


class StreamParser:
    """Feed stdout lines in order; ``feed`` returns True once the final result was seen."""

    def __init__(self, max_line_chars: int = 8 * 1024 * 1024) -> None:
        self._max_line_chars = max_line_chars
        self.model: str | None = None
        self.api_key_source: str | None = None
        self.kept = Kept()
        #: Kept calls waiting for their result, by the block id of their ``tool_use``.
        self._pending: dict[str, list[str]] = {}
        self._assistant_errors: list[str] = []
        self._result: ResultEvent | None = None
        self._resets_at: float | None = None
        self._retry_delay: float | None = None
        self._retry_pending = False
        self._unknown: Counter[str] = Counter()
        self._skipped = 0
        self.turns = 0
        self._last_message_id: str | None = None
        #: The usage of the message being read (its lines repeat it), and of those before.
        self._message_usage: Usage | None = None
        self._streamed_usage = Usage()
        self.transcript = Recorder()
        self._usage_recorded = False
        self._tool_names: dict[str, str] = {}

    @property
    def tool_call_count(self) -> int:
        return len(self.kept)

    @property
    def last_tool(self) -> str | None:
        return self.kept.last.name if self.kept.last else None

    def feed(self, line: str) -> bool:
        if len(line) > self._max_line_chars:
            self._skipped += 1  # never parse what is past the output cap anyway
            return self._result is not None
        stripped = line.strip()
        if not stripped:
            return self._result is not None
        try:
            event = strict_json.loads(stripped, lone_surrogates="replace")
        except strict_json.JsonError:
            event = None
        if not isinstance(event, dict):
            self._skipped += 1
            return self._result is not None
        kind = _str(event.get("type")) or "?"
        if kind == "system":
            self._system(event)
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "user":
            self._user(event)
        elif kind == "result" and self._result is None:
            self._result = _result_event(event)
        elif kind == "rate_limit_event":
            self._rate_limit(event)
        elif kind not in _KNOWN:
            self.kept.count(self._unknown, kind)
        return self._result is not None

    def _system(self, event: dict[str, Any]) -> None:
        subtype = _str(event.get("subtype")) or "?"
        if subtype == "init":
            self.model = _str(event.get("model")) or self.model
            self.api_key_source = _str(event.get("apiKeySource")) or self.api_key_source
        elif subtype == "api_retry":
            # The CLI's wait before retrying; for a 429 it honours the API's retry-after.
            delay = _number(event.get("retry_delay_ms"))
            if _int(event.get("error_status")) == 429 and delay is not None:
                self._retry_delay = max(0.0, delay / 1000)
                self._retry_pending = True
        elif subtype not in _KNOWN_SYSTEM:
            self.kept.count(self._unknown, f"system/{subtype}")

    def _assistant(self, event: dict[str, Any]) -> None:
        error = _str(event.get("error"))
        if error:
            code = name(error)
            if code not in self._assistant_errors and len(self._assistant_errors) < MAX_NOTES:
                self._assistant_errors.append(code)
            return  # a synthetic message from the CLI, not a model turn
        self._retry_pending = False  # the model answered after any retry wait
        message = _dict(event.get("message"))
        message_id = _str(message.get("id"))
        # The CLI prints one line per content block; lines of one model turn share its id.
        if message_id is None or message_id != self._last_message_id:
            self._record_usage()
            self.turns += 1
            self._last_message_id = message_id
        if "usage" in message:
            # Every line of one message repeats its usage: the last one stands for it.
            self._message_usage = _usage(message.get("usage"))
        for block in _list(message.get("content")):
            if isinstance(block, dict) and block.get("type") == "text":
                self.transcript.add("message", turn=self.turns, text=_str(block.get("text")))
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            tool = _str(block.get("name")) or "?"
            key = self.kept.put_call(None, ToolCall(name=tool, input=block.get("input")))
            self.transcript.add("tool_call", turn=self.turns, name=tool, input=block.get("input"))
            block_id = _str(block.get("id"))
            if block_id and key is not None:  # a call left out waits for nothing
                self._pending.setdefault(id_key(block_id), []).append(key)
                self._tool_names[id_key(block_id)] = tool

    def _record_usage(self) -> None:
        """The usage of the turn that just ended, once."""
        usage, self._message_usage = self._message_usage, None
        if usage is None:
            return
        self._streamed_usage = _sum(self._streamed_usage, usage)
        if self.turns:
            self.transcript.add("usage", turn=self.turns, usage=usage.to_json_data())

    def _user(self, event: dict[str, Any]) -> None:
        for block in _list(_dict(event.get("message")).get("content")):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            use_id = id_key(_str(block.get("tool_use_id")) or "")
            waiting = self._pending.get(use_id)
            if waiting:
                key = waiting.pop(0)
                if not waiting:
                    del self._pending[use_id]
                call = self.kept.call(key)
                if call is not None:
                    failed = block.get("is_error") is True
                    self.kept.put_call(key, call.model_copy(update={"is_error": failed}))
            self.transcript.add(
                "tool_result",
                turn=self.turns,
                name=self._tool_names.get(use_id),
                text=_content_text(block.get("content")),
                is_error=block.get("is_error") is True,
            )

    def _rate_limit(self, event: dict[str, Any]) -> None:
        # SDK shape (not producible against a fake API in API-key mode): rate_limit_info.
        info = _dict(event.get("rate_limit_info"))
        resets_at = _number(info.get("resetsAt"))
        if info.get("status") == "rejected" and resets_at is not None:
            self._resets_at = resets_at

    def summary(self) -> StreamSummary:
        if not self._usage_recorded:
            self._usage_recorded = True
            self._record_usage()
        calls = self.kept.tool_calls
        return StreamSummary(
            model=self.model,
            api_key_source=self.api_key_source,
            tool_calls=calls,
            assistant_errors=tuple(self._assistant_errors),
            result=self._result,
            rate_limit_resets_at=self._resets_at,
            rate_limit_retry_delay=self._retry_delay,
            rate_limit_retry_pending=self._retry_pending,
            unknown_events=tuple(sorted(self._unknown.items())),
            skipped_lines=self._skipped,
            streamed_usage=self._streamed_usage,
        )

"""What one session's output may add to its result: at most ``MAX_OUTPUT`` (8 MiB) in all.

The process chokepoints keep at most ``MAX_OUTPUT`` bytes of each stream, but a runner that
reads its agent's stream line by line reads on past that: a long session says far more than
its answer (tool calls, tool output, notices). What a runner keeps of it, and what a result
may hold, is capped here, by one set of limits:

- everything the agent said besides its answer — tool calls with their inputs, the names it
  chose (tools, methods, notices, the model), counts by name, the reason, the stderr tail —
  takes at most ``MAX_RECORDS`` bytes:

  - a name longer than ``MAX_NAME_CHARS`` is kept as a placeholder that gives its length
    (never cut in the middle, so no part of a secret in it is left at a cut);
  - a tool call whose input does not fit keeps its name with the input left out; once even
    that does not fit, further calls are only counted (``protocol_notes``);
  - counts by name keep ``MAX_NOTES`` names, the others are counted together;
  - the reason is cut at ``MAX_REASON_CHARS``, the stderr tail at ``MAX_STDERR_CHARS``;

- the draft gets the rest, ``MAX_OUTPUT - MAX_RECORDS`` bytes of UTF-8 (``structured_output``
  is the draft parsed: it is held to the same): a longer one is cut, and a run that completed
  with it is ``failed`` / ``output_limit``.

``Kept`` is what a stream reader keeps as it reads, so that hz's memory stays bounded whatever
the agent floods; ``bounded`` holds a finished result — any runner's, a plugin's included — to
the same caps. It is the one place a result is cut, after its secrets are redacted
(``hz.runtime.execution.execute.finished``). Whatever was cut or left out sets ``output_truncated``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from hz.runtime.artifacts.result import AgentResult, ToolCall
from hz.runtime.process.limits import MAX_OUTPUT

__all__ = [
    "MAX_MESSAGES",
    "MAX_NAME_CHARS",
    "MAX_NOTES",
    "MAX_OUTPUT",
    "MAX_REASON_CHARS",
    "MAX_RECORDS",
    "MAX_STDERR_CHARS",
    "Kept",
    "bounded",
    "id_key",
    "keep_last",
    "name",
]

#: What everything but the draft may take of ``MAX_OUTPUT``.
MAX_RECORDS = 1024 * 1024
#: A name the agent chose (a tool, a method, an error code, the model).
MAX_NAME_CHARS = 200
#: Names counted one by one in ``protocol_notes`` (or an error-code set).
MAX_NOTES = 64
#: The reason a result gives; the stderr tail.
MAX_REASON_CHARS = 4000
MAX_STDERR_CHARS = 4096
#: Messages a reader keeps to take a reason from (the last ones: errors, warnings).
MAX_MESSAGES = 4
#: The note that counts the names past ``MAX_NOTES``, and the tool calls left out.
OTHER_NOTES = "other (names past the output cap)"
CALLS_LEFT_OUT = "tool calls left out (output cap)"
INPUTS_LEFT_OUT = "tool inputs left out (output cap)"


def name(value: str) -> str:
    """``value``, or a placeholder giving its length when it is longer than a name can be."""
    if len(value) <= MAX_NAME_CHARS:
        return value
    return f"(a name of {len(value):,} characters, over the output cap)"


def keep_last(messages: list[str], message: str) -> None:
    """Append ``message``, keeping only the last ``MAX_MESSAGES``."""
    messages.append(message)
    del messages[:-MAX_MESSAGES]


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def id_key(key: str) -> str:
    # An id is the agent's: a long one is kept as its digest (still one key per id).
    if len(key) <= MAX_NAME_CHARS:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class Kept:
    """What one session keeps of its agent's tool calls and names while its stream is read."""

    def __init__(self, records: int = MAX_RECORDS) -> None:
        self.left = records
        self.truncated = False
        self.calls_left_out = 0
        self.inputs_left_out = 0
        self._calls: dict[str, ToolCall] = {}
        self._sizes: dict[str, int] = {}
        self._anonymous = 0
        self._last: ToolCall | None = None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(self._calls.values())

    @property
    def last(self) -> ToolCall | None:
        """The call kept (or replaced) last."""
        return self._last

    def __len__(self) -> int:
        return len(self._calls)

    def call(self, key: str) -> ToolCall | None:
        return self._calls.get(id_key(key))

    def put_call(self, key: str | None, call: ToolCall) -> str | None:
        """Keep ``call`` under ``key`` (a new key when None; the same key replaces the call it
        held). The key it is kept under, or None when it was left out (counted)."""
        if key is None:
            self._anonymous += 1
            key = f"(call {self._anonymous})"
        key = id_key(key)
        call = (
            call
            if len(call.name) <= MAX_NAME_CHARS
            else call.model_copy(update={"name": name(call.name)})
        )
        room = self.left + self._sizes.get(key, 0)
        size = _size(call.model_dump(mode="json"))
        if size > room and call.input is not None:
            marker = f"(an input of {_size(call.input):,} bytes, over the output cap)"
            slim = call.model_copy(update={"input": marker})
            size = _size(slim.model_dump(mode="json"))
            if size <= room:
                self.inputs_left_out += 1
                self.truncated = True
                call = slim
        if size > room:
            self.calls_left_out += 1
            self.truncated = True
            return None
        self.left = room - size
        self._sizes[key] = size
        self._calls[key] = self._last = call
        return key

    def count(self, counts: Counter[str], value: str, n: int = 1) -> None:
        """Count ``value`` in ``counts``, which keeps at most ``MAX_NOTES`` names."""
        key = name(value)
        if key != value:
            self.truncated = True
        if key in counts or len(counts) < MAX_NOTES:
            counts[key] += n
        else:
            self.truncated = True
            counts[OTHER_NOTES] += n

    def notes(self) -> dict[str, int]:
        """What was left out, for ``protocol_notes``."""
        notes = {CALLS_LEFT_OUT: self.calls_left_out, INPUTS_LEFT_OUT: self.inputs_left_out}
        return {note: n for note, n in notes.items() if n}


def _cut(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def _cut_bytes(text: str, limit: int) -> str:
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


def bounded(result: AgentResult) -> AgentResult:
    """``result`` held to the caps of the module docstring (itself when it is within them)."""
    notes: Counter[str] = Counter()
    counter = Kept()
    for note, n in result.protocol_notes.items():
        counter.count(notes, note, n)
    update: dict[str, Any] = {
        "model": None if result.model is None else name(result.model),
        "reason": _cut(result.reason, MAX_REASON_CHARS),
        "stderr_tail": result.stderr_tail[-MAX_STDERR_CHARS:],
    }
    others = sum(_size(v) for v in update.values()) + _size(notes) + 2 * MAX_NAME_CHARS
    kept = Kept(max(MAX_RECORDS - others, 0))
    for call in result.tool_calls:
        kept.put_call(None, call)
    for note, n in kept.notes().items():
        notes[note] += n
    update |= {"tool_calls": kept.tool_calls, "protocol_notes": dict(sorted(notes.items()))}
    changed = {k: v for k, v in update.items() if v != getattr(result, k)}
    room = MAX_OUTPUT - MAX_RECORDS
    draft = result.draft or ""
    structured = result.structured_output
    if len(draft.encode("utf-8", "surrogatepass")) > room or (
        structured is not None and _size(structured) > room
    ):
        changed |= _draft_cut(result, _cut_bytes(draft, room))
    if not changed:
        return result
    return result.model_copy(update={**changed, "output_truncated": True})


def _draft_cut(result: AgentResult, draft: str) -> dict[str, Any]:
    update: dict[str, Any] = {"draft": draft if result.draft is not None else None}
    update["structured_output"] = None
    if result.status == "completed":
        update |= {
            "status": "failed",
            "failure_kind": "output_limit",
            "reason": (
                f"the answer is larger than the output cap ({MAX_OUTPUT // (1024 * 1024)} MiB "
                f"for a session's output in all): its first {len(draft.encode('utf-8')):,} "
                "bytes are kept"
            ),
        }
    return update

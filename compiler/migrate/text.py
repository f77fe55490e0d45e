"""Where each node of a frontmatter stands, and edits of its text by character range.

The loader keeps where each key and value *starts*; an edit that replaces a value in place
(a ``read`` inside a flow mapping, a key written in quotes) must know where it *ends* too.
``extents`` reads the frontmatter's YAML events once more for that: the loader has accepted
the text already (its size, depth, node count; no anchors or tags), so this pass is bounded
by the same limits.

``Edits`` replaces character ranges of the frontmatter (whole lines are a range too) and
applies them bottom up onto the file's own text, whose line ends the loader had made ``\\n``:
every byte outside an edit stays as written, a CRLF, a lone CR and all (decision 0026).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from hz.compiler.load.loader import events
from hz.compiler.source import JsonPath


@dataclass(frozen=True, slots=True)
class Extent:
    """A node of the frontmatter as character offsets: ``key`` is the range of its key
    (``None`` for a sequence item), ``value`` the range of its value. ``flow`` is true for a
    flow collection (``{…}``, ``[…]``); ``style`` is a scalar's (``""`` plain, ``'``, ``"``,
    ``|``, ``>``) or ``None`` for a collection. Every end is where the node's text ends: a
    block collection's is its last child's (the parser would end it at the next token), a
    block scalar's the start of the line after its last (blank lines it keeps included)."""

    key: tuple[int, int] | None
    value: tuple[int, int]
    flow: bool
    style: str | None

    @property
    def block_scalar(self) -> bool:
        return self.style in ("|", ">")


class _Frame:
    __slots__ = ("end", "flow", "index", "key", "path", "start")

    def __init__(self, path: JsonPath, start: int, flow: bool, key: tuple[int, int] | None):
        self.path = path
        self.start = start
        self.end = start
        self.flow = flow
        self.key = key
        self.index = 0


def extents(text: str) -> dict[JsonPath, Extent]:
    """The extent of every node of ``text``, a YAML document the loader accepted."""
    starts = line_starts(text)

    def offset(mark: Any) -> int:
        return starts[int(mark.line)] + int(mark.column)

    parser: Any = events(text)
    out: dict[JsonPath, Extent] = {}
    stack: list[_Frame] = []
    # For a mapping: its pending key (name and range) once the key's event was read.
    pending: list[tuple[str, tuple[int, int]] | None] = []
    while True:
        event = parser.get_event()
        kind = type(event)
        if kind is StreamEndEvent:
            return out
        if kind in (ScalarEvent, MappingStartEvent, SequenceStartEvent):
            span = (offset(event.start_mark), offset(event.end_mark))
            if stack and pending[-1] is None and stack[-1].index < 0:
                # A mapping waiting for a key: this is the key.
                pending[-1] = (str(event.value), span) if kind is ScalarEvent else ("", span)
                stack[-1].index = 0
                continue
            path, key = _child(stack, pending)
            if kind is ScalarEvent:
                out[path] = Extent(key, span, False, event.style or "")
                _ended(stack, span[1])
                _advance(stack, pending)
            else:
                flow = bool(event.flow_style)
                frame = _Frame(path, span[0], flow, key)
                frame.index = -1 if kind is MappingStartEvent else 0
                stack.append(frame)
                pending.append(None)
        elif kind in (MappingEndEvent, SequenceEndEvent):
            frame = stack.pop()
            pending.pop()
            end = offset(event.end_mark) if frame.flow else frame.end
            out[frame.path] = Extent(frame.key, (frame.start, end), frame.flow, None)
            _ended(stack, end)
            _advance(stack, pending)


def _child(
    stack: list[_Frame], pending: list[tuple[str, tuple[int, int]] | None]
) -> tuple[JsonPath, tuple[int, int] | None]:
    if not stack:
        return (), None
    parent = stack[-1]
    waiting = pending[-1]
    if waiting is not None:  # the value of a mapping entry
        return (*parent.path, waiting[0]), waiting[1]
    return (*parent.path, parent.index), None


def _ended(stack: list[_Frame], end: int) -> None:
    """A child of the innermost collection ended at ``end``: so does that collection, so far."""
    if stack:
        stack[-1].end = max(stack[-1].end, end)


def _advance(stack: list[_Frame], pending: list[tuple[str, tuple[int, int]] | None]) -> None:
    if not stack:
        return
    parent = stack[-1]
    if pending[-1] is not None:  # a mapping's value was read: the next event is a key
        pending[-1] = None
        parent.index = -1
    else:
        parent.index += 1


def line_starts(text: str) -> list[int]:
    """The offset each line of ``text`` starts at, and one past the end."""
    out = [0]
    at = text.find("\n")
    while at >= 0:
        out.append(at + 1)
        at = text.find("\n", at + 1)
    out.append(len(text) + 1)
    return out


class Unedited(Exception):
    """Text written in a way the edits do not handle (a complex key, two edits of one
    range, a value whose lines do not say where it ends): the file is refused (HZ178) rather
    than guessed at. ``why`` and ``decide`` say what and what to do, ``at`` where (an offset
    of the frontmatter), when known."""

    def __init__(
        self, why: str | None = None, at: int | None = None, decide: str | None = None
    ) -> None:
        super().__init__(why)
        self.why = why
        self.at = at
        self.decide = decide


class Overlap(Unedited):
    """Two edits of one range: the migration would not be what either meant."""


@dataclass
class Edits:
    """Edits of ``text`` (the frontmatter with ``\\n`` line ends), each replacing a character
    range; two at the same place apply in the order they were made."""

    text: str
    lines: list[str] = field(init=False)
    starts: list[int] = field(init=False)
    edits: list[tuple[int, int, int, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = self.text.split("\n")
        self.starts = line_starts(self.text)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def column_of(self, offset: int) -> int:
        return offset - self.starts[self.line_of(offset)]

    def splice(self, start: int, end: int, new: str) -> None:
        self.edits.append((start, end, len(self.edits), new))

    def replace_lines(self, start: int, end: int, new: list[str]) -> None:
        """Lines [start, end) (0-based) replaced by ``new``."""
        self.splice(self.starts[start], self.starts[end], "".join(f"{n}\n" for n in new))

    def kept_lines(self) -> dict[int, int]:
        """The lines of the edited text that no edit touched, each (0-based) with the line of
        ``text`` it is: where a problem found in the migrated file stands in the original."""
        out: dict[int, int] = {}
        line = 0  # the edited text's line at offset ``at`` of ``text``
        at = 0
        at_line_start = True  # whether the edited text has a line start at ``at``
        ordered = sorted(self.edits)
        for start, end, _, new in [*ordered, (len(self.text), len(self.text), -1, "")]:
            if start >= at:
                first = self.line_of(at)
                if self.starts[first] < at or not at_line_start:
                    first += 1  # the line ``at`` is in starts with what an edit wrote
                    line_there = line + self.text.count("\n", at, self.starts[first])
                else:
                    line_there = line
                kept = first
                while kept + 1 < len(self.starts) and self.starts[kept + 1] <= start:
                    out[line_there + kept - first] = kept
                    kept += 1
                line += self.text.count("\n", at, start)
                if start > at:
                    at_line_start = self.text[start - 1] == "\n"
            line += new.count("\n")
            if new:
                at_line_start = new.endswith("\n")
            at = max(at, end)
        return out

    def apply(self, raw: str, newline: str) -> str:
        """The edits applied to ``raw``: ``text`` as the file has it, each line ending as
        written (a line of ``text`` is the same line of ``raw``); new line ends are
        ``newline``. ``Overlap`` when two edits overlap."""
        raw_starts = _raw_line_starts(raw)

        def at(offset: int) -> int:
            line = self.line_of(offset)
            return raw_starts[line] + offset - self.starts[line]

        out = raw
        last = len(self.text) + 1
        for start, end, _, new in sorted(self.edits, reverse=True):
            if end > last:  # pragma: no cover - each key is edited once, where it stands
                raise Overlap
            last = start
            out = out[: at(start)] + new.replace("\n", newline) + out[at(end) :]
        return out


def _raw_line_starts(raw: str) -> list[int]:
    """Where each line of ``raw`` starts, its lines ended by CRLF, LF or a lone CR (the
    loader's reading), and one past the end."""
    out = [0]
    at = 0
    while True:
        cr = raw.find("\r", at)
        lf = raw.find("\n", at)
        if cr < 0 and lf < 0:
            break
        if lf < 0 or (0 <= cr < lf):
            at = cr + 2 if raw.startswith("\r\n", cr) else cr + 1
        else:
            at = lf + 1
        out.append(at)
    out.append(len(raw) + 1)
    return out

"""Compose a YAML event stream into JSON data plus node positions, enforcing hz's limits.

The tree is built here, iteratively, instead of by PyYAML's composer: libyaml's composer
recurses in C and crashes the interpreter on deep nesting, and PyYAML's builds the whole tree
(aliases expanded) before anyone could check its size. Every limit is checked on the event
that crosses it, so a hostile file stops at the first offending node.
"""

from __future__ import annotations

from typing import Any, Protocol

from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from hz.compiler.load.problems import Kind, LoadProblem
from hz.compiler.load.scalars import kind_of, resolve_plain
from hz.compiler.source import JsonPath, Pos, ScalarInfo

MAX_DEPTH = 32
MAX_NODES = 10_000

_BLOCK_STYLES = ("|", ">")


class EventSource(Protocol):
    def get_event(self) -> Any: ...


class Stop(Exception):
    """A problem after which the rest of the stream is not read."""


class _NoKey:
    """Marks a mapping frame that waits for its next key."""


class _BadKey:
    """Marks an entry whose key was refused: its value is read but not kept."""


_NO_KEY = _NoKey()
_BAD_KEY = _BadKey()


class _Frame:
    __slots__ = ("container", "first_keys", "key", "path", "pos", "record")

    def __init__(self, container: Any, path: JsonPath, pos: Pos, record: bool) -> None:
        self.container = container
        self.path = path
        self.pos = pos
        # False inside a refused key or a refused entry: nothing there gets a position.
        self.record = record
        self.key: str | _NoKey | _BadKey = _NO_KEY
        self.first_keys: dict[str, Pos] = {}


def _pos(mark: Any) -> Pos:
    # libyaml's and PyYAML's marks are different classes with the same 0-based fields.
    return Pos(mark.line + 1, mark.column + 1)


class Composer:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[LoadProblem] = []
        self.values: dict[JsonPath, Pos] = {}
        self.keys: dict[JsonPath, Pos] = {}
        self.scalars: dict[JsonPath, ScalarInfo] = {}
        self.data: dict[str, Any] | None = None
        self._stack: list[_Frame] = []
        self._nodes = 0
        self._documents = 0
        #: True when a problem stopped the reading (the rest of the stream was not seen).
        self.stopped = False

    def error(self, kind: Kind, pos: Pos, **data: object) -> None:
        self.problems.append(LoadProblem(kind, self.file, pos.line, pos.column, data))

    def fatal(self, kind: Kind, pos: Pos, **data: object) -> Stop:
        self.error(kind, pos, **data)
        self.stopped = True
        return Stop()

    def run(self, source: EventSource) -> None:
        """Consume events up to the end of the stream; raises Stop (or a YAMLError) early."""
        while True:
            event = source.get_event()
            kind = type(event)
            if kind is ScalarEvent or kind is MappingStartEvent or kind is SequenceStartEvent:
                self._node(event)
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                self._end()
            elif kind is AliasEvent:
                raise self.fatal("alias", _pos(event.start_mark), anchor=event.anchor)
            elif kind is DocumentStartEvent:
                if self._documents:
                    raise self.fatal("documents", _pos(event.start_mark))
                self._documents += 1
            elif kind is StreamEndEvent:
                if not self._documents:
                    raise self.fatal("empty", Pos(0, 0))
                return

    def _node(self, event: ScalarEvent | MappingStartEvent | SequenceStartEvent) -> None:
        # The hot path: one call per node, so the common checks are inline.
        mark: Any = event.start_mark
        pos = Pos(mark.line + 1, mark.column + 1)
        if event.anchor is not None or event.tag is not None:
            self._anchor_or_tag(event, pos)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise self.fatal("too_many_nodes", pos, limit=MAX_NODES)
        stack = self._stack
        if not stack:
            self._top(event, pos)
            return
        parent = stack[-1]
        as_key = type(parent.container) is dict and parent.key is _NO_KEY
        if as_key:
            path: JsonPath = ()
            record = False
        elif type(parent.container) is list:
            path = (*parent.path, len(parent.container))
            record = parent.record
        else:
            record = parent.record and isinstance(parent.key, str)
            path = (*parent.path, parent.key) if record else ()  # type: ignore[arg-type]
        if type(event) is ScalarEvent:
            style = event.style or None  # libyaml says "" for plain, PyYAML None
            value: Any = event.value if style or event.tag else resolve_plain(event.value)
            if as_key:
                self._key(parent, value, event.value, pos)
                return
            if record:
                self.values[path] = pos
                if type(value) is str:
                    line = pos.line + 1 if style in _BLOCK_STYLES else pos.line
                    self.scalars[path] = ScalarInfo(style, line)
            self._attach(parent, value)
            return
        if len(stack) >= MAX_DEPTH:
            raise self.fatal("too_deep", pos, limit=MAX_DEPTH)
        if record:
            self.values[path] = pos
        container: Any = {} if type(event) is MappingStartEvent else []
        # A mapping or sequence used as a key is read (record=False) and refused at its end.
        stack.append(_Frame(container, path, pos, record))

    def _anchor_or_tag(self, event: NodeEvent, pos: Pos) -> None:
        if event.anchor is not None:
            raise self.fatal("anchor", pos, anchor=event.anchor)
        self.error("tag", pos, tag=event.tag)  # type: ignore[attr-defined]

    def _top(self, event: ScalarEvent | MappingStartEvent | SequenceStartEvent, pos: Pos) -> None:
        if type(event) is MappingStartEvent:
            self.values[()] = pos
            self._stack.append(_Frame({}, (), pos, True))
            return
        if type(event) is ScalarEvent and not event.style and event.value == "" and not event.tag:
            raise self.fatal("empty", Pos(0, 0))
        if type(event) is ScalarEvent:
            found = kind_of(event.value if event.style else resolve_plain(event.value))
        else:
            found = "a sequence"
        raise self.fatal("not_a_mapping", pos, found=found)

    def _key(self, frame: _Frame, value: Any, raw: str, pos: Pos) -> None:
        if type(value) is not str:
            self.error("key_not_string", pos, raw=raw, found=kind_of(value))
            frame.key = _BAD_KEY
            return
        first = frame.first_keys.get(value)
        if first is not None:
            self.error(
                "duplicate_key", pos, key=value, first_line=first.line, first_column=first.column
            )
            frame.key = _BAD_KEY
            return
        frame.first_keys[value] = pos
        if frame.record:
            self.keys[(*frame.path, value)] = pos
        frame.key = value

    def _end(self) -> None:
        frame = self._stack.pop()
        if not self._stack:
            self.data = frame.container
            return
        parent = self._stack[-1]
        if type(parent.container) is dict and parent.key is _NO_KEY:
            self.error("key_not_string", frame.pos, raw=None, found=kind_of(frame.container))
            parent.key = _BAD_KEY
            return
        self._attach(parent, frame.container)

    @staticmethod
    def _attach(parent: _Frame, value: Any) -> None:
        container = parent.container
        if type(container) is list:
            container.append(value)
            return
        if type(parent.key) is str:
            container[parent.key] = value
        parent.key = _NO_KEY

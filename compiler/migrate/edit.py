"""The edits of one key of the ``hz:`` block, by where it stands (``text.Extent``): replace a
value or a key in place, delete an entry that was carried over, comment out one that was not.

An entry stands in one of three ways, and each edit works in all three: on lines of its own
(block style), as the first key of a block sequence item (``- action: …``: the dash stays),
or inside a flow collection (``{read: …, stage: draft}``: the text is cut with its comma, and
what was commented out goes on a comment line above the collection)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hz.compiler.migrate.notes import Kind, Note
from hz.compiler.migrate.text import Edits, Extent, Unedited
from hz.compiler.source import JsonPath, SourceDoc
from hz.runtime.artifacts.printable import printable

_DASHES = re.compile(r"[ \t]*(?:-[ \t]+)+\Z")
#: A line that holds only a sequence item's dash (and maybe a comment).
_DASH_LINE = re.compile(r"[ \t]*(?:-[ \t]+)*(?P<dash>-)(?:[ \t]+#.*)?[ \t]*\Z")
#: The most of a value a note shows.
_SHOWN = 60


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def commented(lines: Sequence[str], why: str) -> list[str]:
    """``lines`` commented out under ``# hz migrate: why``, at the first one's column; a line
    standing left of it is a comment already (``Editor.entry`` refuses any other) and stays."""
    column = indent(lines[0])
    pad = " " * column
    out = [f"{pad}# hz migrate: {why}"]
    for line in lines:
        out.append(line if not line.strip() or indent(line) < column else f"{pad}# {line[column:]}")
    return out


def dotted(path: Sequence[str | int], root: str = "hz") -> str:
    """``hz.inputs.up.window``, ``hz.publishes[0].when``: a path as a note names it."""
    parts = "".join(f"[{p}]" if isinstance(p, int) else f".{printable(p)}" for p in path)
    return (root + parts).removeprefix(".")


def shown(value: Any) -> str:
    """A value as a note shows it: JSON, escaped, and cut at ``_SHOWN`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = printable(text)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


class Editor:
    """Edits of the ``hz:`` block of ``doc``; every path is below ``hz``."""

    def __init__(self, doc: SourceDoc, edits: Edits, extents: dict[JsonPath, Extent]) -> None:
        self.doc = doc
        self.hz: dict[str, Any] = doc.data["hz"]
        self.edits = edits
        self.lines = edits.lines
        self.extents = extents
        self.notes: list[Note] = []
        self._cuts: dict[tuple[str | int, ...], set[str | int]] = {}
        # What the edits mean (``intended``): keys renamed, values written, entries gone,
        # keys added, each by its path in the source's hz: block.
        self._renamed: dict[tuple[str | int, ...], str] = {}
        self._values: dict[tuple[str | int, ...], Any] = {}
        self._gone: set[tuple[str | int, ...]] = set()
        self._added: dict[tuple[str | int, ...], dict[str, Any]] = {}
        self._scalar_lines: set[int] | None = None
        #: The keys beside ``hz:`` commented out (``drop_top``).
        self.gone_top: set[str] = set()

    # -- positions -----------------------------------------------------------------------
    def key_line(self, *path: str | int) -> int:
        """The 0-based line of the key at ``path``."""
        return self.doc.pos(("hz", *path), key=True).line - 1

    def column(self, *path: str | int) -> int:
        return self.doc.pos(("hz", *path), key=True).column

    def extent(self, *path: str | int) -> Extent:
        return self.extents[("hz", *path)]

    def note(
        self,
        code: str,
        kind: Kind,
        path: Sequence[str | int],
        message: str,
        decide: str | None = None,
    ) -> None:
        pos = self.doc.pos(("hz", *path), key=True)
        self.notes.append(Note(code, kind, pos.line, pos.column, message, decide))

    def start(self, *path: str | int) -> int:
        """Where the entry at ``path`` starts: its key, or a block sequence item's dash."""
        extent = self.extent(*path)
        if extent.key is not None:
            return extent.key[0]
        text = self.edits.text
        at = extent.value[0] - 1
        while at >= 0 and text[at] in " \t":
            at -= 1
        if at >= 0 and text[at] == "-" and (at == 0 or text[at - 1] in " \t\n"):
            return at
        line = self.edits.line_of(extent.value[0])
        if at < 0 or text[at] != "\n" or self._in_flow(path[:-1]):
            return extent.value[0]
        # The item's value starts a line: its dash is on the last line before it that is no
        # blank or comment line (`-  # a comment`).
        for before in range(line - 1, -1, -1):
            found = _DASH_LINE.match(self.lines[before])
            if found:
                return self.edits.starts[before] + found.end("dash") - 1
            if self.lines[before].strip() and not self.lines[before].lstrip().startswith("#"):
                break
        return extent.value[0]

    def _last_line(self, value: tuple[int, int]) -> int:
        """The 0-based line of the last character of ``value`` (a range; a block scalar
        ends with its last line's break: that line)."""
        start, end = value
        line = self.edits.line_of(end)
        if not self.edits.text[self.edits.starts[line] : end].strip():
            line -= 1
        return max(line, self.edits.line_of(start))

    def entry(self, path: tuple[str | int, ...]) -> tuple[int, int, int, str]:
        """The lines of the block entry at ``path``: the first (its key's, or a sequence
        item's dash's), the end (exclusive: after its value's last line), its column and what
        stands before it on its first line. ``Unedited`` (HZ178) when its key is no simple key,
        or a line of it other than a comment stands no deeper than the entry: there its
        indentation and where YAML ends it would disagree, and the lines are not guessed at."""
        self.simple_key(path)
        line, column, lead = self._where(path)
        return line, self.lines_deeper(path, line, column), column, lead

    def lines_deeper(
        self, path: tuple[str | int, ...], line: int, column: int, root: JsonPath = ("hz",)
    ) -> int:
        """The end (exclusive) of the lines from ``line`` to the value at ``path``'s last
        (below ``root``), each of which (but comments) stands deeper than ``column``; else
        ``Unedited``."""
        end = self._last_line(self.extents[(*root, *path)].value) + 1
        inside = self._inside_scalars()
        for number in range(line + 1, end):
            text = self.lines[number]
            if not text.strip() or indent(text) > column:
                continue
            if text.lstrip().startswith("#") and number not in inside:
                continue  # a comment, at whatever column, is no part of the structure
            where = dotted(path, ".".join(map(str, root)))
            raise Unedited(
                f"{where} runs onto line {number + 1}, which stands no deeper than its "
                "key: its lines would not say where it ends, and hz migrate does not edit it",
                self.edits.starts[number] + indent(text),
                "indent every line of the value deeper than its key (or write it on one "
                "line), then migrate again",
            )
        return end

    def _inside_scalars(self) -> set[int]:
        """The lines after the first of each scalar of several lines (a ``#`` there is text)."""
        if self._scalar_lines is None:
            self._scalar_lines = set()
            for extent in self.extents.values():
                for span in (extent.key, extent.value if extent.style is not None else None):
                    if span is not None:
                        first = self.edits.line_of(span[0])
                        self._scalar_lines.update(range(first + 1, self._last_line(span) + 1))
        return self._scalar_lines

    def simple_key(self, path: tuple[str | int, ...]) -> None:
        """``Unedited`` unless the key at ``path`` (if any) is a scalar on one line followed by
        its ``:`` (in a flow mapping, ``{own}`` has none): a key after ``?``, or over lines,
        is not edited."""
        extent = self.extent(*path)
        if extent.key is None:
            return
        start, end = extent.key
        text = self.edits.text
        line = self.edits.line_of(start)
        line_end = self.edits.starts[line + 1] - 1
        before = text[self.edits.starts[line] : start].rstrip(" \t-")
        if (
            self.edits.line_of(end) != line
            or not (self._in_flow(path) or text[end:line_end].lstrip(" \t").startswith(":"))
            or before.endswith("?")
        ):
            raise Unedited(
                f"{dotted(path)} is a complex key (after ?, or over several lines): hz "
                "migrate edits a key written on one line before its colon",
                start,
                "write the key on one line, followed by its colon, then migrate again",
            )

    def _where(self, path: tuple[str | int, ...]) -> tuple[int, int, str]:
        """The entry's line, column and what stands before it on its line."""
        start = self.start(*path)
        line = self.edits.line_of(start)
        column = self.edits.column_of(start)
        return line, column, self.lines[line][:column]

    # -- edits -----------------------------------------------------------------------------
    def rename(self, path: tuple[str | int, ...], key: str) -> None:
        self.simple_key(path)
        extent = self.extent(*path)
        assert extent.key is not None
        self.edits.splice(*extent.key, key)
        self._renamed[path] = key

    def replace_value(self, path: tuple[str | int, ...], new: str, value: Any) -> None:
        """The value at ``path`` written as ``new`` (one line of YAML, read as ``value``),
        where it stands."""
        extent = self.extent(*path)
        start, end = extent.value
        if extent.block_scalar or (extent.style is None and not extent.flow):
            # A block scalar's or block collection's text runs to the end of its last line.
            _, last, _, _ = self.entry(path)
            end = self.edits.starts[last]
            new += "\n"
        self.edits.splice(start, end, new)
        self._values[path] = value

    def add(self, path: tuple[str | int, ...], key: str, value: Any) -> None:
        """``key: value`` is written into the mapping at ``path`` (the edit is the caller's)."""
        self._added.setdefault(path, {})[key] = value

    def remove(self, path: tuple[str | int, ...]) -> None:
        """Delete the entry at ``path``, carried over elsewhere; a comment on its line stays."""
        self._gone.add(path)
        if self._in_flow(path):
            self._cut_from_flow(path)
            return
        line, end, column, lead = self.entry(path)
        extent = self.extent(*path)
        after = self.lines[line][self.edits.column_of(extent.value[1]) :].strip()
        single = end == line + 1 and not extent.block_scalar
        keep = [" " * column + after] if single and after.startswith("#") else []
        if not single:
            keep = commented(
                [" " * column + self.lines[line][column:], *self.lines[line + 1 : end]],
                "carried over",
            )
        self.edits.replace_lines(line, end, ([lead.rstrip()] if lead.strip() else []) + keep)

    def drop(self, path: tuple[str | int, ...], why: str) -> None:
        """Comment out the entry at ``path`` where it stands, under ``# hz migrate: why``:
        every line of it, to the end of its value."""
        self._gone.add(path)
        if self._in_flow(path):
            written = self._cut_from_flow(path)
            above = self._flow_line(path)
            pad = " " * indent(self.lines[above])
            comment = [f"{pad}# hz migrate: {why}"]
            comment += [f"{pad}# {part.strip()}" for part in written.split("\n")]
            self.edits.replace_lines(above, above, comment)
            return
        line, end, column, lead = self.entry(path)
        if not lead.strip():
            self.edits.replace_lines(line, end, commented(self.lines[line:end], why))
        elif _DASHES.match(lead):
            # The first key of a sequence item: the dash stays, the entry goes beneath it.
            moved = [" " * column + self.lines[line][column:], *self.lines[line + 1 : end]]
            self.edits.replace_lines(line, end, [lead.rstrip(), *commented(moved, why)])
        else:  # pragma: no cover - simple_key refused what else stands before a key
            raise Unedited

    def drop_top(self, key: str, why: str) -> None:
        """Comment out the entry ``key`` beside ``hz:`` where it stands, under
        ``# hz migrate: why``: a key at column 1, on one line before its colon; ``Unedited``
        (HZ178) otherwise."""
        extent = self.extents[(key,)]
        text = self.edits.text
        if extent.key is None:  # pragma: no cover - a mapping's entry has a key
            raise Unedited
        start, end = extent.key
        line = self.edits.line_of(start)
        line_end = self.edits.starts[line + 1] - 1
        if (
            self.edits.column_of(start) != 0
            or self.edits.line_of(end) != line
            or not text[end:line_end].lstrip(" \t").startswith(":")
        ):
            raise Unedited(
                f"the key {printable(key)} beside hz: is not written at the start of a line, "
                "on one line before its colon: hz migrate does not edit it",
                start,
                "write the frontmatter one key per line, each at the start of its line, then "
                "migrate again",
            )
        last = self.lines_deeper((key,), line, 0, root=())
        self.edits.replace_lines(line, last, commented(self.lines[line:last], why))
        self.gone_top.add(key)

    def _cut_from_flow(self, path: tuple[str | int, ...]) -> str:
        """Cut the entry at ``path`` out of its flow collection (with a comma, ``finish``);
        its text."""
        self.simple_key(path)
        self._cuts.setdefault(path[:-1], set()).add(path[-1])
        return self.edits.text[self.start(*path) : self.extent(*path).value[1]]

    def finish(self) -> None:
        """Make the cuts: each run of entries cut from a flow collection goes up to the next
        entry kept (``a: 1, ``), or after the last one kept (``, c: 3``), so that the commas
        left are the ones between entries kept."""
        for parent, cut in self._cuts.items():
            value: Any = self.hz
            for part in parent:
                value = value[part]
            entries = list(value) if isinstance(value, dict) else list(range(len(value)))
            index = 0
            while index < len(entries):
                if entries[index] not in cut:
                    index += 1
                    continue
                run = index
                while index < len(entries) and entries[index] in cut:
                    index += 1
                first = self.start(*parent, entries[run])
                last = self.extent(*parent, entries[index - 1]).value[1]
                if index < len(entries):
                    cut_range = (first, self.start(*parent, entries[index]))
                elif run > 0:
                    cut_range = (self.extent(*parent, entries[run - 1]).value[1], last)
                else:
                    cut_range = (first, last)
                written = [
                    (self.start(*parent, e), self.extent(*parent, e).value[1])
                    for e in entries[run:index]
                ]
                self.edits.splice(*cut_range, self._comments_between(cut_range, written))
        self._cuts = {}

    def _comments_between(self, cut: tuple[int, int], entries: list[tuple[int, int]]) -> str:
        """What of the text ``cut`` stays: the comments between the ``entries`` cut (a
        multi-line flow collection may hold them), with their line breaks; no comma."""
        text = self.edits.text
        gaps = []
        at = cut[0]
        for start, end in entries:
            gaps.append(text[at:start] if start > at else "")
            at = max(at, end)
        gaps.append(text[at : cut[1]])
        kept = []
        for gap in gaps:
            if "#" not in gap:
                continue
            lines = []
            for line in gap.split("\n"):
                code, hash_, comment = line.partition("#")
                lines.append(code.replace(",", "") + hash_ + comment)
            kept.append("\n".join(lines))
        return "".join(kept)

    def _in_flow(self, path: tuple[str | int, ...]) -> bool:
        """Whether the entry at ``path`` stands inside a flow collection (``hz`` included)."""
        return any(self.extents[("hz", *path[:depth])].flow for depth in range(len(path)))

    def _flow_line(self, path: tuple[str | int, ...]) -> int:
        """The line of the entry that holds the outermost flow collection around ``path``."""
        for depth in range(1, len(path)):
            if self.extent(*path[:depth]).flow:
                return self.edits.line_of(self.start(*path[:depth]))
        return self.edits.line_of(self.start(*path))  # pragma: no cover - called in a flow

    def intended(self) -> tuple[dict[str, Any], dict[tuple[str | int, ...], JsonPath]]:
        """The hz: block the edits mean to write (the source's, as each edit changes it), and
        for each of its paths the path in the source it comes from (an added key: its
        mapping's)."""
        origin: dict[tuple[str | int, ...], JsonPath] = {}

        def build(value: Any, path: tuple[str | int, ...], at: tuple[str | int, ...]) -> Any:
            origin[at] = path
            if path in self._values:
                value = self._values[path]
            elif isinstance(value, dict):
                mapping: dict[str, Any] = {}
                for k, v in value.items():
                    if (*path, k) not in self._gone:
                        renamed = self._renamed.get((*path, k))
                        key = k if renamed is None else renamed
                        mapping[key] = build(v, (*path, k), (*at, key))
                value = mapping
            elif isinstance(value, list):
                kept = [i for i in range(len(value)) if (*path, i) not in self._gone]
                value = [build(value[i], (*path, i), (*at, n)) for n, i in enumerate(kept)]
            added = self._added.get(path)
            if added:
                value = {**(value if isinstance(value, dict) else {}), **added}
                for key in added:
                    origin[(*at, key)] = path
            return value

        return build(self.hz, (), ()), origin

    def first_key_column(self, *path: str | int) -> int | None:
        """The column (0-based) of the first key of the block mapping at ``path``."""
        mapping: Any = self.hz
        for part in path:
            mapping = mapping[part]
        if not isinstance(mapping, dict) or not mapping:
            return None
        first = next(iter(mapping))
        key = self.extent(*path, first).key
        return None if key is None else self.edits.column_of(key[0])

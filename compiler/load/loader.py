"""Load one contract file: bytes → checked text → YAML events → ``SourceDoc``.

Only ``yaml`` is imported here: ``hz validate`` on one file must start fast. ``read_bytes``
finds every problem as a ``LoadProblem`` (data, worded by its caller) and returns the document
only when there is none; ``load_path``, ``load_stream`` and ``load_bytes`` load a contract,
with the problems worded for contracts (codes HZ001–HZ013).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load.compose import Composer, EventSource, Stop
from hz.compiler.load.problems import LoadProblem
from hz.compiler.load.wording import for_contract
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.packet_limits import MAX_CONTRACT_BYTES
from hz.runtime.artifacts.regular_file import read_regular

MAX_BYTES = MAX_CONTRACT_BYTES
#: A file named so is a Markdown contract: a YAML frontmatter and a body (``NAME.prose.md`` too).
MARKDOWN_SUFFIX = ".md"

_CParser: Any
try:  # libyaml's parser: fast, and safe because we compose the tree ourselves.
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None

# Characters YAML 1.2 forbids in a stream (§5.1), checked up front to locate them by
# character: libyaml reports them at a byte offset. The pattern is the one PyYAML's reader
# compiles, so `re`'s cache hands back that object instead of compiling it again (~5 ms).
_NOT_YAML_TEXT = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


Loaded = tuple[SourceDoc | None, list[Diagnostic]]


def load_path(path: Path, display: str | None = None) -> Loaded:
    """Load the contract at ``path`` (a Markdown contract when it is named ``*.md``);
    ``display`` is the path as the user wrote it."""
    name = str(path) if display is None else display
    try:
        data = read_regular(path, limit=MAX_BYTES)
    except OSError as e:
        problem = LoadProblem("unreadable", name, data={"reason": e.strerror or e})
        return None, [for_contract(problem)]
    if path.name.lower().endswith(MARKDOWN_SUFFIX):
        from hz.compiler.load.markdown import load_markdown

        return load_markdown(data, name)
    return load_bytes(data, name)


def load_stream(stream: BinaryIO, display: str) -> Loaded:
    """Load a contract from an open binary stream (a file or stdin), reading at most the limit
    + 1 byte."""
    return load_bytes(stream.read(MAX_BYTES + 1), display)


def load_bytes(data: bytes, path: str) -> Loaded:
    """Load a contract from its bytes; ``path`` names it in diagnostics."""
    doc, problems = read_bytes(data, path)
    return doc, [for_contract(p) for p in problems]


def read_bytes(data: bytes, path: str) -> tuple[SourceDoc | None, list[LoadProblem]]:
    """The document in ``data``, or None and every problem found; ``path`` names the file."""
    if len(data) > MAX_BYTES:
        return None, [LoadProblem("too_large", path, data={"limit": MAX_BYTES})]
    text, problem = decode(data, path)
    if problem is not None:
        return None, [problem]
    composer = compose(text, path)
    if composer.problems or composer.data is None:
        return None, composer.problems
    return (
        SourceDoc(path, text, composer.data, composer.values, composer.keys, composer.scalars),
        [],
    )


def compose(text: str, path: str) -> Composer:
    """The YAML ``text`` composed: its data and node positions, or its problems."""
    return _compose(text, path, fast=_CParser is not None)


def events(text: str) -> EventSource:
    """A parser of ``text``'s YAML events: libyaml's when PyYAML was built with it (its marks
    count characters, as PyYAML's do), else PyYAML's own."""
    return _CParser(text) if _CParser is not None else yaml.SafeLoader(text)


def _compose(text: str, path: str, *, fast: bool, retry: bool = True) -> Composer:
    composer = Composer(path)
    parser: EventSource = events(text) if fast else yaml.SafeLoader(text)
    try:
        composer.run(parser)
    except Stop:
        pass
    except yaml.MarkedYAMLError as e:
        if fast and retry and e.problem == "exceeded maximum nesting depth":
            return _too_deep(text, path, e.problem_mark)
        composer.problems.append(_syntax_error(e, text, path))
    except yaml.YAMLError as e:  # pragma: no cover - every parser error we know is marked
        composer.problems.append(
            LoadProblem("syntax", path, data=_syntax(str(e), None, None, tab=False))
        )
    return composer


def _too_deep(text: str, path: str, mark: Any) -> Composer:
    """Locate the 33rd level in a file deeper than libyaml's own limit (1000 levels).

    libyaml's scanner runs ahead inside flow collections and stops at its limit before the
    composer has seen the 33rd level. Those levels all lie before the point where it stopped,
    so parsing only that prefix reaches them (and stops there) without the run-ahead.
    """
    cut = _offset(text, mark) if mark is not None else -1
    if 0 < cut < len(text):
        composer = _compose(text[:cut], path, fast=True, retry=False)
        if composer.stopped:  # by the depth limit or an earlier problem, never by the cut
            return composer
    # Not expected; PyYAML's pure parser has no depth limit and gives the same answer slowly.
    return _compose(text, path, fast=False)


def _offset(text: str, mark: Any) -> int:
    """Character offset of a mark (libyaml counts ``index`` in bytes, lines and columns not)."""
    start = 0
    for _ in range(mark.line):
        start = text.find("\n", start) + 1
        if start == 0:
            return -1
    return int(start + mark.column)


def decode(data: bytes, path: str) -> tuple[str, LoadProblem | None]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column = _line_col(data[: e.start].decode("utf-8"))
        utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        facts = {"byte": data[e.start], "utf16": utf16}
        return "", LoadProblem("not_utf8", path, line, column, facts)
    if text.startswith("\ufeff"):  # a UTF-8 byte order mark is harmless; editors hide it
        text = text[1:]
    bad = _NOT_YAML_TEXT.search(text)
    if bad is None:
        return text, None
    line, column = _line_col(text[: bad.start()])
    char = bad.group()
    if char == "\x00":
        return "", LoadProblem("binary", path, line, column)
    return "", LoadProblem("control_character", path, line, column, {"char": char})


def _line_col(before: str) -> tuple[int, int]:
    """1-based line and column of the character that follows ``before``."""
    line_start = before.rfind("\n") + 1
    return before.count("\n") + 1, len(before) - line_start + 1


def _syntax_error(e: yaml.MarkedYAMLError, text: str, path: str) -> LoadProblem:
    mark = e.problem_mark or e.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
    tab = mark is not None and mark.index < len(text) and _char_at(text, mark) == "\t"
    facts = _syntax(e.problem, e.context, e.context_mark, tab=tab)
    if mark is not None and not tab:
        facts.update(_layout(text, mark.line, mark.column))
    return LoadProblem("syntax", path, line, column, facts)


def _syntax(problem: str | None, context: str | None, at: Any, *, tab: bool) -> dict[str, Any]:
    return {
        "problem": problem,
        "context": context,
        "context_line": at.line + 1 if at is not None else 0,
        "context_column": at.column + 1 if at is not None else 0,
        "tab": tab,
        "indent": None,
        "colon_in_value": None,
    }


def _layout(text: str, line: int, column: int) -> dict[str, Any]:
    """How the line the parser stopped at (0-based ``line``, ``column``) sits under the line
    above it, for an indentation hint: its column and the last line above that holds content
    (not blank, not a comment), with its column; and, when a ``: `` stands before ``column`` on
    that line, the key and the value that holds another ``: ``."""
    lines = text.split("\n", line + 1)[: line + 1]
    if line >= len(lines):
        return {}
    here = lines[line]
    above = next(
        (i for i in range(line - 1, -1, -1) if lines[i].strip() and lines[i].lstrip()[0] != "#"),
        None,
    )
    indent = {
        "line": line + 1,
        "column": _column(here),
        "above": 0 if above is None else above + 1,
        "above_column": 0 if above is None else _column(lines[above]),
    }
    key, colon, value = here[:column].partition(": ")
    colon_in_value = (key.strip(), (value + here[column:]).strip()) if colon else None
    return {"indent": indent, "colon_in_value": colon_in_value}


def _column(line: str) -> int:
    return len(line) - len(line.lstrip(" ")) + 1


def _char_at(text: str, mark: yaml.Mark) -> str:
    lines = text.split("\n", mark.line + 1)
    if mark.line >= len(lines) or mark.column >= len(lines[mark.line]):
        return ""
    return lines[mark.line][mark.column]

"""JSON inputs files: parsed by the C decoder, located only when a diagnostic needs a place.

Inputs files can be large (up to 8 MiB of exported issues, say), so parsing must stay fast:
``json.loads`` builds the value, and ``JsonDoc.pos`` walks the text to one path on demand,
skipping sibling values with the same C scanner.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.source import JsonPath, Pos
from hz.runtime.artifacts import strict_json

_WS = " \t\n\r"
_NEWLINE = re.compile("\n")
_DECODER = json.JSONDecoder()
#: The C string scanner behind json.loads (not in the typeshed stubs).
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


@dataclass(frozen=True)
class JsonDoc:
    """A parsed JSON document with positions computed on demand."""

    path: str
    text: str
    data: Any
    _lines: list[int] = field(default_factory=list, repr=False, compare=False)

    def _pos_at(self, index: int) -> Pos:
        if not self._lines:
            self._lines.extend(m.start() for m in _NEWLINE.finditer(self.text))
        line = bisect_right(self._lines, index - 1)
        start = self._lines[line - 1] + 1 if line else 0
        return Pos(line + 1, index - start + 1)

    def _skip_ws(self, index: int) -> int:
        while index < len(self.text) and self.text[index] in _WS:
            index += 1
        return index

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos:
        """Where the value at ``path`` starts (its key with ``key=True``), or the nearest
        ancestor that exists."""
        text = self.text
        index = self._skip_ws(0)
        key_index = index
        for step in path:
            found = None
            container = index
            if text.startswith("{", index) and isinstance(step, str):
                index = self._skip_ws(index + 1)
                while text.startswith('"', index):
                    name, after = scanstring(text, index + 1)
                    value_at = self._skip_ws(self._skip_ws(after) + 1)
                    if name == step:
                        found = (index, value_at)
                        break
                    index = self._skip_ws(_DECODER.raw_decode(text, value_at)[1])
                    index = self._skip_ws(index + 1) if text.startswith(",", index) else index
            elif text.startswith("[", index) and isinstance(step, int):
                index = self._skip_ws(index + 1)
                for _ in range(step):
                    if text.startswith("]", index):
                        break
                    index = self._skip_ws(_DECODER.raw_decode(text, index)[1])
                    index = self._skip_ws(index + 1) if text.startswith(",", index) else index
                else:
                    if not text.startswith("]", index):
                        found = (index, index)
            if found is None:
                return self._pos_at(key_index if key else container)
            key_index, index = found
        return self._pos_at(key_index if key else index)


def load_json(data: bytes, path: str, *, code: str) -> tuple[JsonDoc | None, list[Diagnostic]]:
    """Parse JSON text strictly (UTF-8, no duplicate keys, no NaN); problems carry ``code``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        message = f"file is not valid UTF-8: byte 0x{data[e.start]:02x} cannot be decoded"
        return None, [Diagnostic(code, message, path)]
    try:
        value = strict_json.loads(text)
    except strict_json.JsonError as e:
        if e.duplicate_key is not None:
            line, column = _first_duplicate(JsonDoc(path, text, None), e.duplicate_key)
            return None, [Diagnostic(code, e.msg, path, line, column)]
        if e.located:
            return None, [Diagnostic(code, f"not valid JSON: {e.msg}", path, e.lineno, e.colno)]
        return None, [Diagnostic(code, f"not valid JSON: {e.msg}", path)]
    return JsonDoc(path, text, value), []


def _first_duplicate(doc: JsonDoc, key: str) -> tuple[int, int]:
    # The decoder's hook does not know where the object is: walk the text to the first object
    # that repeats a key (only on this error path, so a Python walk is fine).
    try:
        found, _ = _walk(doc, doc._skip_ws(0))
    except (ValueError, IndexError, RecursionError):
        found = None
    if found is None:
        return 0, 0
    pos = doc._pos_at(found)
    return pos.line, pos.column


def _walk(doc: JsonDoc, index: int) -> tuple[int | None, int]:
    """(index of the first repeated key in the value at ``index`` or None, end of value)."""
    text, ws = doc.text, doc._skip_ws
    opener = text[index]
    if opener not in "{[":
        return None, _DECODER.raw_decode(text, index)[1]
    closer = "}" if opener == "{" else "]"
    seen: set[str] = set()
    index = ws(index + 1)
    while text[index] != closer:
        if opener == "{":
            key_at = index
            key, index = scanstring(text, index + 1)
            if key in seen:
                return key_at, index
            seen.add(key)
            index = ws(ws(index) + 1)
        found, index = _walk(doc, index)
        if found is not None:
            return found, index
        index = ws(index)
        if text[index] == ",":
            index = ws(index + 1)
    return None, index + 1

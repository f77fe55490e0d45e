"""The one reader for JSON that comes from outside hz: strict, bounded, always an error value.

Everything hz reads as JSON — a model's answer, a runner's JSON output and event streams,
inputs files, receipts, jobs and packets — goes through ``loads``. Python's ``json`` accepts
more than JSON and fails in ways that are no ``ValueError``; here every problem is one
``JsonError``:

- ``NaN``, ``Infinity`` and numbers too large for a float (``1e999``) are refused: they are
  not JSON, and they slip past ``minimum``/``maximum`` and budget checks.
- Integers are limited to Python's int-to-string digit limit (4300 digits by default).
- Nesting is limited to ``MAX_DEPTH`` levels (the validators and printers recurse).
- Duplicate keys in one object are refused (the last one would silently win).
- A lone surrogate (``"\\ud800"``) is no Unicode text and could not be written back as UTF-8:
  refused, or with ``lone_surrogates="replace"`` replaced by U+FFFD (for a runner's own
  output, where the rest of the event — its cost, its usage — must not be lost).
- Bytes must be UTF-8.

``JsonError`` is a ``json.JSONDecodeError``, so code that already catches that keeps working;
``located`` tells whether ``lineno``/``colno`` point somewhere.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Literal

__all__ = ["MAX_DEPTH", "JsonError", "loads"]

#: Deepest nesting accepted (arrays and objects), as the YAML loader caps at 32.
MAX_DEPTH = 64

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonError(json.JSONDecodeError):
    """Not acceptable JSON; ``msg`` says why, ``lineno``/``colno`` where when ``located``."""

    def __init__(
        self, msg: str, doc: str = "", pos: int | None = None, *, duplicate_key: str | None = None
    ) -> None:
        self.duplicate_key = duplicate_key
        if pos is None:
            ValueError.__init__(self, msg)
            self.msg, self.doc, self.pos, self.lineno, self.colno = msg, doc, 0, 0, 0
            self.located = False
        else:
            super().__init__(msg, doc, pos)
            self.located = True

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.msg, self.doc, self.pos if self.located else None)


class _Refused(ValueError):
    def __init__(self, message: str, duplicate_key: str | None = None) -> None:
        super().__init__(message)
        self.duplicate_key = duplicate_key


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON value")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {_short(text)} is too large")
    return value


def _int(text: str) -> int:
    limit = sys.get_int_max_str_digits()
    digits = len(text.lstrip("-"))
    if limit and digits > limit:
        raise _Refused(f"an integer of {digits} digits (at most {limit} are read)")
    return int(text)


def _short(text: str) -> str:
    return text if len(text) <= 20 else f"{text[:17]}..."


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r} in a JSON object", key)
            seen.add(key)
    return result


def loads(
    data: str | bytes,
    *,
    lone_surrogates: Literal["refuse", "replace"] = "refuse",
) -> Any:
    """Parse one JSON document strictly; see the module docstring. Raises ``JsonError``."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise JsonError(f"not UTF-8: byte 0x{data[e.start]:02x} cannot be decoded") from e
    else:
        text = data
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_no_constant,
            parse_float=_float,
            parse_int=_int,
        )
    except JsonError:
        raise
    except json.JSONDecodeError as e:
        raise JsonError(e.msg, e.doc, e.pos) from e
    except _Refused as e:
        raise JsonError(str(e), duplicate_key=e.duplicate_key) from e
    except RecursionError as e:
        raise JsonError(f"nested more than {MAX_DEPTH} levels deep") from e
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth_over(value, MAX_DEPTH):
        raise JsonError(f"nested more than {MAX_DEPTH} levels deep")
    if _SURROGATE_ESCAPE.search(text) or _LONE_SURROGATE.search(text):
        value = _surrogates(value, lone_surrogates)
    return value


def _depth_over(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if not isinstance(item, dict | list):
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _surrogates(value: Any, mode: str) -> Any:
    """``value`` with lone surrogates replaced (mode ``replace``), else JsonError on the first."""
    if isinstance(value, str):
        found = _LONE_SURROGATE.search(value)
        if found is None:
            return value
        if mode == "replace":
            return _LONE_SURROGATE.sub("\ufffd", value)
        raise JsonError(
            f"a string holds a lone surrogate (\\u{ord(found.group()):04x}), which is not text"
        )
    if isinstance(value, list):
        return [_surrogates(item, mode) for item in value]
    if isinstance(value, dict):
        return {_surrogates(k, mode): _surrogates(v, mode) for k, v in value.items()}
    return value

"""YAML 1.2 core-schema resolution of plain scalars, into the JSON data model.

PyYAML implements YAML 1.1, where ``no`` is false, ``1:30`` is 90 and ``2026-01-02`` is a
date. Contracts are read with the 1.2 core schema instead: only the spellings below are
special, everything else is a string.
"""

from __future__ import annotations

import re
from typing import Any

_CONSTANTS: dict[str, Any] = {
    "": None,
    "~": None,
    "null": None,
    "Null": None,
    "NULL": None,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
    ".inf": float("inf"),
    ".Inf": float("inf"),
    ".INF": float("inf"),
    "+.inf": float("inf"),
    "+.Inf": float("inf"),
    "+.INF": float("inf"),
    "-.inf": float("-inf"),
    "-.Inf": float("-inf"),
    "-.INF": float("-inf"),
    ".nan": float("nan"),
    ".NaN": float("nan"),
    ".NAN": float("nan"),
}

# ASCII digits only (\d would accept other scripts' digits); no underscores, no sexagesimal.
_INT_DEC = re.compile(r"[-+]?[0-9]+")
_INT_OCT = re.compile(r"0o[0-7]+")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
# Only scalars starting with one of these can be anything but a string (fast path).
_SPECIAL_START = frozenset("0123456789+-.~nNtTfF")


def resolve_plain(value: str) -> Any:
    """The JSON value of an unquoted scalar under the YAML 1.2 core schema."""
    if value == "" or value[0] not in _SPECIAL_START:
        return None if value == "" else value
    if value in _CONSTANTS:
        return _CONSTANTS[value]
    try:
        if _INT_DEC.fullmatch(value):
            return int(value)
        if _INT_OCT.fullmatch(value):
            return int(value[2:], 8)
        if _INT_HEX.fullmatch(value):
            return int(value[2:], 16)
    except ValueError:
        # More digits than Python converts (sys.int_info.str_digits_check_threshold):
        # keep the text rather than fail; the schema then reports a wrong type.
        return value
    if _FLOAT.fullmatch(value):
        return float(value)
    return value


def kind_of(value: Any, *, sequence: str = "a sequence") -> str:
    """How a value is named in messages ("an integer", "null", …). The loader speaks YAML
    ("a sequence"); validation speaks of the JSON data (``sequence="a list"``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return sequence
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__

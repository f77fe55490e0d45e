"""A loader problem in the words of a contract: its rule code, message and hint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load.problems import Kind, LoadProblem
from hz.compiler.rules.registry import (
    HZ001,
    HZ002,
    HZ003,
    HZ004,
    HZ005,
    HZ006,
    HZ007,
    HZ008,
    HZ009,
    HZ010,
    HZ011,
    HZ012,
    HZ013,
)

Words = tuple[str, str, str | None]  # code, message, hint

_UTF8_HINT = "hz reads contracts as UTF-8; save the file with that encoding"
_NO_ALIASES = "write the value out in full; hz refuses anchors and aliases"


def _not_utf8(d: Any) -> Words:
    hint = ("the file looks like UTF-16; " if d["utf16"] else "") + _UTF8_HINT
    return HZ002, f"file is not valid UTF-8: byte 0x{d['byte']:02x} cannot be decoded", hint


def _syntax(d: Any) -> Words:
    problem, context = d["problem"], d["context"]
    message = f"YAML syntax error: {problem or context or 'invalid YAML'}"
    if context and problem and d["context_line"]:
        message += f" ({context} at line {d['context_line']}, column {d['context_column']})"
    hint = "indent with spaces: YAML does not allow tabs for indentation" if d["tab"] else None
    return HZ004, message, hint or _layout_hint(d)


#: The rule a misplaced line breaks, by what the parser was reading (libyaml's and PyYAML's
#: own parser word the problem differently, and agree on the context).
_KEYS_RULE = "the keys of one mapping start in the same column"
_ITEMS_RULE = (
    'the items of one list start with "- " in the same column, and no key of a mapping '
    "stands in that column"
)


def _layout_hint(d: Any) -> str | None:
    """A hint for a syntax error that bad indentation (or a ``: `` in a plain value) causes."""
    problem, context, indent = d["problem"] or "", d["context"] or "", d["indent"]
    if indent is None:
        return None
    if problem.startswith("mapping values are not allowed"):
        if d["colon_in_value"] is not None:
            return _quote_hint(*d["colon_in_value"])
        rule = _KEYS_RULE
    elif context == "while parsing a block mapping":
        rule = _KEYS_RULE
    elif context == "while parsing a block collection":
        rule = _ITEMS_RULE
    else:
        return None
    where = (
        f"check the indentation of line {indent['line']}: it starts in column {indent['column']}"
    )
    if indent["above"]:
        where += f", line {indent['above']} above it in column {indent['above_column']}"
    return f"{where}; {rule}"


def _quote_hint(key: str, value: str) -> str:
    """``title: Note: x`` is read as a key ``Note`` inside a value: the value needs quotes."""
    hint = 'a value that holds ": " must be quoted'
    if not value or len(key) + len(value) > 60 or '"' in value or "\\" in value:
        return hint
    return f'{hint}, as in {key}: "{value}"'


def _key_not_string(d: Any) -> Words:
    raw = d["raw"]
    if raw is None:  # a mapping or a sequence as a key
        return (
            HZ008,
            f"key is {d['found']}, not a string",
            "mapping keys in a contract are plain strings",
        )
    what = "an empty key" if raw == "" else f"key '{raw}'"
    hint = f'quote the key ("{raw}") if you mean it as text'
    return HZ008, f"{what} is {d['found']}, not a string", hint


_CONTRACT: dict[Kind, Callable[[Any], Words]] = {
    "unreadable": lambda d: (HZ001, f"cannot read file: {d['reason']}", None),
    "too_large": lambda d: (
        HZ003,
        f"file is larger than 256 KiB ({d['limit']:,} bytes), the limit for a contract",
        "keep bulk data out of the contract: declare an input and pass it at render time",
    ),
    "not_utf8": _not_utf8,
    "binary": lambda d: (
        HZ002,
        "file is binary, not UTF-8 text: it contains a NUL byte",
        _UTF8_HINT,
    ),
    "control_character": lambda d: (
        HZ002,
        f"file is not UTF-8 text: control character U+{ord(d['char']):04X} is not allowed",
        _UTF8_HINT,
    ),
    "syntax": _syntax,
    "anchor": lambda d: (
        HZ005,
        f"anchor '&{d['anchor']}' is not allowed in a contract",
        _NO_ALIASES,
    ),
    "alias": lambda d: (HZ005, f"alias '*{d['anchor']}' is not allowed in a contract", _NO_ALIASES),
    "tag": lambda d: (
        HZ006,
        f"tag '{d['tag']}' is not allowed in a contract",
        "remove the tag; quote the value if you mean a string",
    ),
    "duplicate_key": lambda d: (
        HZ007,
        f"duplicate key '{d['key']}' (first defined at line {d['first_line']}, "
        f"column {d['first_column']})",
        "YAML would silently keep only one of them; remove or rename one",
    ),
    "key_not_string": _key_not_string,
    "not_a_mapping": lambda d: (
        HZ009,
        f"the top level of a contract must be a mapping, not {d['found']}",
        "a contract starts with the keys 'hz:', 'contract:' and 'prompt:'",
    ),
    "empty": lambda d: (
        HZ010,
        "the file is empty; a contract is a mapping with 'hz:', 'contract:' and 'prompt:'",
        None,
    ),
    "documents": lambda d: (
        HZ011,
        "more than one YAML document in the file; a contract is exactly one",
        "remove this '---' and what follows, or put it in its own file",
    ),
    "too_deep": lambda d: (
        HZ012,
        f"nesting is deeper than {d['limit']} levels",
        "a contract is a shallow document; flatten this structure",
    ),
    "too_many_nodes": lambda d: (
        HZ013,
        f"more than {d['limit']:,} YAML nodes in the file",
        "a contract is small; move bulk data into an input fetched at render time",
    ),
}


def for_contract(problem: LoadProblem) -> Diagnostic:
    code, message, hint = _CONTRACT[problem.kind](problem.data)
    return Diagnostic(code, message, problem.file, problem.line, problem.column, hint=hint)

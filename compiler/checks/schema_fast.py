"""A fast yes for contracts that are certainly valid against the contract schema.

Most files a project validates are valid, and jsonschema walks every node of every one of
them (about 40% of ``hz validate``'s time per file). ``certainly_valid`` interprets the small
set of keywords the hand-written contract schema uses and answers True only when the document
satisfies all of them; anything it does not know — another keyword, an odd value — answers
False, and the caller asks jsonschema, which also produces the located errors. So it can make
validation faster, never more lenient: a test holds it to jsonschema's verdict on the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: Keywords that describe a node for people and do not constrain it.
_ANNOTATIONS = frozenset(
    {"title", "description", "examples", "default", "$comment", "$schema", "$id", "$defs"}
)


def certainly_valid(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """True only when ``value`` satisfies ``schema``; False also means "not sure"."""
    for keyword, argument in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        check = _KEYWORDS.get(keyword)
        if check is None or not check(value, argument, schema, root):
            return False
    return True


def _type(value: Any, name: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if isinstance(value, bool):
        return bool(name == "boolean")
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    expected = _PYTHON_TYPES.get(name) if isinstance(name, str) else None
    return expected is not None and isinstance(value, expected)


_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "number": (int, float),
    "null": type(None),
}


def _properties(value: Any, props: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    return all(certainly_valid(value[k], sub, root) for k, sub in props.items() if k in value)


def _additional(value: Any, extra: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    known = schema.get("properties", {})
    others = [v for k, v in value.items() if k not in known]
    if extra is False:
        return not others
    return isinstance(extra, dict) and all(certainly_valid(v, extra, root) for v in others)


def _required(value: Any, names: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return not isinstance(value, dict) or all(name in value for name in names)


def _property_names(value: Any, sub: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return not isinstance(value, dict) or all(certainly_valid(k, sub, root) for k in value)


def _items(value: Any, sub: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return not isinstance(value, list) or all(certainly_valid(v, sub, root) for v in value)


def _unique(value: Any, flag: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if not isinstance(value, list) or flag is False:
        return True
    # Only strings are compared here; JSON equality of other values is jsonschema's job.
    return all(isinstance(v, str) for v in value) and len(set(value)) == len(value)


def _ref(value: Any, ref: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix):
        return False
    target = root.get("$defs", {}).get(ref[len(prefix) :])
    return isinstance(target, dict) and certainly_valid(value, target, root)


def _one_of(value: Any, subs: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    # "Certainly exactly one": one branch certainly valid and every other certainly invalid,
    # which for the contract schema's branches means a type mismatch.
    matches = [s for s in subs if certainly_valid(value, s, root)]
    others = [s for s in subs if s not in matches]
    return len(matches) == 1 and all(
        "type" in s and not _type(value, s["type"], s, root) for s in others
    )


def _text_length(check: Callable[[int, int], bool]) -> Callable[..., bool]:
    def keyword(value: Any, bound: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
        return not isinstance(value, str) or check(len(value), bound)

    return keyword


def _number(check: Callable[[float, float], bool]) -> Callable[..., bool]:
    def keyword(value: Any, bound: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        return check(value, bound)

    return keyword


def _pattern(value: Any, pattern: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return not isinstance(value, str) or re.search(pattern, value) is not None


def _enum(value: Any, options: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    # Strings only: JSON equality across types (1 vs 1.0 vs true) is left to jsonschema.
    return isinstance(value, str) and value in options


_KEYWORDS: dict[str, Callable[..., bool]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "propertyNames": _property_names,
    "items": _items,
    "uniqueItems": _unique,
    "$ref": _ref,
    "oneOf": _one_of,
    "minLength": _text_length(lambda n, b: n >= b),
    "maxLength": _text_length(lambda n, b: n <= b),
    "minimum": _number(lambda v, b: v >= b),
    "maximum": _number(lambda v, b: v <= b),
    "exclusiveMinimum": _number(lambda v, b: v > b),
    "pattern": _pattern,
    "enum": _enum,
    # "not" is deliberately absent: the schema uses it only to forbid refused keys, and a
    # document holding one is not certainly valid.
}

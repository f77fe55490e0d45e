"""A quick "certainly valid" for the small schemas contracts declare, without jsonschema.

``hz validate`` checks every input and output schema against the 2020-12 metaschema and every
default against its schema; jsonschema and referencing take about 45 ms to import, more than
the rest of a one-file check. The common schemas use a handful of keywords (``type``,
``properties``, ``items``, ``enum``, ``pattern``, bounds), whose meaning is simple enough to
evaluate here exactly as jsonschema does. Both functions answer True only when sure; a
False means "not decided here": the caller asks the validator (``check``), which decides and
explains. A keyword outside the subset, a reference, a ``format``, a float where an integer
is asked for: all go to the validator. tests/unit/jsonschema/test_fast.py holds the verdicts
to the validator's over the JSON-Schema-Test-Suite, the corpus and generated contracts.

Patterns are ECMA-262 through the one bounded engine (``ecma``), as the validator reads them.
"""

from __future__ import annotations

from typing import Any

#: The one ``$schema`` decided here (at the root only): the dialect hz reads every schema in.
DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: Deeper schemas or values go to the validator (which bounds its own recursion).
MAX_DEPTH = 32
#: The metaschema's simple types.
TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
#: Keywords that assert nothing about a value, with the type the metaschema gives them.
_ANNOTATIONS: dict[str, type | tuple[type, ...] | None] = {
    "title": str,
    "description": str,
    "$comment": str,
    "deprecated": bool,
    "readOnly": bool,
    "writeOnly": bool,
    "examples": list,
    "default": None,  # any value
}
_SCHEMA_VALUED = ("additionalProperties", "items")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    # The metaschema's nonNegativeInteger; a float such as 2.0 is one too, but left to the
    # validator.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def certainly_valid_schema(schema: Any) -> bool:
    """True when ``schema`` is certainly valid against the 2020-12 metaschema (with hz's
    formats: a ``pattern`` is an ECMA-262 regular expression) and holds no reference."""
    from hz.runtime.jsonschema.ecma import RegexError, RegexTimeout, deadline

    try:
        with deadline():
            return _schema(schema, 0)
    except (RegexError, RegexTimeout, RecursionError):
        return False


def _schema(schema: Any, depth: int) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return False
    return all(_keyword(key, value, depth) for key, value in schema.items())


def _keyword(key: str, value: Any, depth: int) -> bool:
    if key == "$schema":
        return depth == 0 and value == DIALECT
    if key in _ANNOTATIONS:
        expected = _ANNOTATIONS[key]
        return expected is None or isinstance(value, expected)
    if key == "type":
        if isinstance(value, str):
            return value in TYPES
        return (
            isinstance(value, list)
            and bool(value)
            and all(isinstance(t, str) and t in TYPES for t in value)
            and len(set(value)) == len(value)
        )
    if key == "properties":
        return isinstance(value, dict) and all(_schema(s, depth + 1) for s in value.values())
    if key in _SCHEMA_VALUED:
        return _schema(value, depth + 1)
    if key == "required":
        return (
            isinstance(value, list)
            and all(isinstance(name, str) for name in value)
            and len(set(value)) == len(value)
        )
    if key == "enum":
        return isinstance(value, list)
    if key == "const":
        return True
    if key in _COUNTS:
        return _count(value)
    if key in _BOUNDS:
        return _number(value)
    if key == "uniqueItems":
        return isinstance(value, bool)
    if key == "pattern":
        return isinstance(value, str) and _regex(value)
    return False  # any other keyword, a reference, a format: the validator decides


def _regex(pattern: str) -> bool:
    from hz.runtime.jsonschema.ecma import compile_ecma, remaining

    remaining(pattern)  # as the validator's format check: compiling takes regex time too
    compile_ecma(pattern)
    return True


def certainly_conforms(schema: Any, instance: Any) -> bool:
    """True when ``instance`` is certainly valid against ``schema``, a schema
    ``certainly_valid_schema`` accepted (call it first: this one trusts the shapes)."""
    from hz.runtime.jsonschema.ecma import RegexError, RegexTimeout, deadline

    try:
        with deadline():
            return _conforms(schema, instance, 0)
    except (RegexError, RegexTimeout, RecursionError):
        return False


def _is_type(instance: Any, name: str) -> bool:
    # jsonschema's 2020-12 type checker: a bool is no number, a float without a fraction is
    # an integer.
    if name == "string":
        return isinstance(instance, str)
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "null":
        return instance is None
    if name == "number":
        return _number(instance)
    return _number(instance) and (isinstance(instance, int) or float(instance).is_integer())


def _scalar_in(instance: Any, values: list[Any]) -> bool | None:
    """Whether ``instance`` equals one of ``values`` as jsonschema compares them, or None
    when that needs its rules for booleans and containers."""
    if isinstance(instance, str):
        return any(isinstance(v, str) and v == instance for v in values)
    if instance is None or _number(instance):
        if any(isinstance(v, (bool, list, dict)) for v in values):
            return None
        return any(not isinstance(v, str) and v == instance for v in values)
    return None


def _conforms(schema: Any, instance: Any, depth: int) -> bool:
    if schema is True:
        return True
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return False
    for key, value in schema.items():
        if key in _ANNOTATIONS or key == "$schema":
            continue
        if key == "type":
            names = [value] if isinstance(value, str) else value
            if not any(_is_type(instance, name) for name in names):
                return False
        elif key in ("enum", "const"):
            found = _scalar_in(instance, value if key == "enum" else [value])
            if not found:
                return False
        elif key == "properties":
            if isinstance(instance, dict):
                for name, sub in value.items():
                    if name in instance and not _conforms(sub, instance[name], depth + 1):
                        return False
        elif key == "additionalProperties":
            if isinstance(instance, dict):
                declared = schema.get("properties", {})
                for name, item in instance.items():
                    if name not in declared and not _conforms(value, item, depth + 1):
                        return False
        elif key == "items":
            if isinstance(instance, list) and not all(
                _conforms(value, item, depth + 1) for item in instance
            ):
                return False
        elif key == "required":
            if isinstance(instance, dict) and not all(name in instance for name in value):
                return False
        elif key in _COUNTS:
            if not _count_holds(key, value, instance):
                return False
        elif key in _BOUNDS:
            if _number(instance) and not _bound_holds(key, value, instance):
                return False
        elif key == "pattern":
            if isinstance(instance, str):
                from hz.runtime.jsonschema.ecma import search

                if not search(value, instance):
                    return False
        else:
            return False  # uniqueItems and anything else: the validator decides
    return True


def _count_holds(key: str, limit: int, instance: Any) -> bool:
    kind = {"Length": str, "Items": list, "Properties": dict}[key[3:]]
    if not isinstance(instance, kind):
        return True
    return len(instance) >= limit if key.startswith("min") else len(instance) <= limit


def _bound_holds(key: str, bound: float, instance: float) -> bool:
    if key == "minimum":
        return instance >= bound
    if key == "maximum":
        return instance <= bound
    if key == "exclusiveMinimum":
        return instance > bound
    return instance < bound

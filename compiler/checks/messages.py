"""Plain-language messages for jsonschema errors (jsonschema's own read like Python reprs)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hz.compiler.checks.common import extend, json_short, short, type_name
from hz.compiler.rules.registry import HZ103, HZ104
from hz.runtime.artifacts.suggest import did_you_mean

if TYPE_CHECKING:
    from collections.abc import Callable

    from jsonschema.exceptions import ValidationError

    from hz.compiler.source import JsonPath

    Show = Callable[[Any], str]
    #: The value at a path (of the document validated) written as a string: ``title: "2024"``.
    Quote = Callable[[JsonPath, Any], str]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


def expected_types(value: Any) -> str:
    names = [value] if isinstance(value, str) else list(value)
    return " or ".join(_TYPE_NAMES.get(n, n) for n in names)


def got(instance: Any, show: Show = short) -> str:
    """ "a string ('x')" for scalars, "a mapping" for containers."""
    kind = type_name(instance)
    if isinstance(instance, (dict, list)) or instance is None:
        return kind
    return f"{kind} ({show(instance)})"


def describe(
    e: ValidationError, where: str, show: Show = short, quote: Quote | None = None
) -> tuple[str, str, str | None]:
    """(code, message, hint) for one error located at ``where`` (a dotted path). ``show``
    writes a value: as YAML would quote it (contracts) or as JSON (input values); ``quote``
    writes a number or boolean found where a string belongs as that string (by default
    ``"2024"``)."""
    kind = str(e.validator)
    value: Any = e.validator_value
    inst: Any = e.instance
    if kind == "type":
        message = f"{where}: expected {expected_types(value)}, got {got(inst, show)}"
        return HZ103, message, _quote_it(e, value, quote)
    if kind in ("oneOf", "anyOf") and e.context:
        from jsonschema.exceptions import best_match

        # Given the parent, best_match descends into the alternative whose type fits; when
        # none fits better it returns the parent, and the best of the alternatives is taken.
        best = best_match([e])
        if best is e or best is None:
            best = best_match(e.context)
        assert best is not None
        assert best is not e
        extra = tuple(best.absolute_path)[len(e.absolute_path) :]
        code, message, hint = describe(best, extend(where, extra), show, quote)
        others = max(len(value) - 1, 1)
        plural = "s" if others != 1 else ""
        return code, f"{message} (and {others} other alternative{plural} did not match)", hint
    if kind == "enum":
        choices = ", ".join(show(v) for v in value)
        hint = (
            did_you_mean(inst, [v for v in value if isinstance(v, str)])
            if isinstance(inst, str)
            else None
        )
        return HZ104, f"{where}: expected one of {choices}, got {show(inst)}", hint
    if kind == "const":
        return HZ104, f"{where}: expected {show(value)}, got {show(inst)}", None
    if kind == "pattern":
        about = e.schema.get("description") if isinstance(e.schema, dict) else None
        if about:  # hz's own schema explains its patterns in words
            slug = _slug(inst) if where == "hz.name" else None
            hint = f"did you mean {show(slug)}? {about}" if slug else about
            return HZ104, f"{where}: {show(inst)} is not in the expected form", hint
        pattern = repr(value) if show is short else json_short(value, 200)
        return HZ104, f"{where}: {show(inst)} does not match the pattern {pattern}", None
    if kind == "required":
        from hz.compiler.checks.validator import MissingKey

        if isinstance(e, MissingKey):
            return HZ104, f"{where}: missing required key {show(e.key)}", None
    schema: Any = e.schema
    if (
        kind == "additionalProperties"
        and value is False
        and isinstance(inst, dict)
        and isinstance(schema, dict)
        and "patternProperties" not in schema
    ):
        allowed = schema.get("properties", {})
        unexpected = ", ".join(show(name) for name in inst if name not in allowed)
        return HZ104, f"{where}: unexpected key {unexpected}", None
    if kind == "format":
        # A pattern says why it is no regular expression (hz.runtime.jsonschema.ecma).
        why = f": {e.cause}" if value == "regex" and e.cause is not None else ""
        return HZ104, f"{where}: {show(inst)} is not a valid {value}{why}", None
    if e.validator is None:  # the boolean schema false
        return HZ104, f"{where}: the schema is false, which allows no value", None
    return HZ104, f"{where}: {_bound(kind, value, inst, show) or e.message}", None


def _quote_it(e: ValidationError, expected: Any, quote: Quote | None) -> str | None:
    """A number or boolean where a string belongs is usually text YAML read as a number
    (``title: 2024``, ``version: 1.10``): quoted, it stays the text written."""
    names = [expected] if isinstance(expected, str) else list(expected)
    inst = e.instance
    if "string" not in names or not isinstance(inst, (bool, int, float)):
        return None
    example = quote(tuple(e.absolute_path), inst) if quote else f'"{json_short(inst)}"'
    return f"quote it, as in {example}"


def _slug(name: Any) -> str | None:
    """``Todo Summary`` and ``Todo_Summary`` -> ``todo-summary``, when that is a job name."""
    if not isinstance(name, str):
        return None
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug if slug != name and _SLUG.fullmatch(slug) and len(slug) <= 64 else None


#: hz.name's pattern in the contract schema.
_SLUG = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def _bound(kind: str, value: Any, inst: Any, show: Show) -> str | None:
    """Messages for the numeric, length and count keywords."""
    if kind == "minLength":
        return "must not be empty" if value == 1 else f"must be at least {value} characters"
    if kind == "maxLength":
        return f"is longer than {value} characters"
    if kind == "minimum":
        return f"must be at least {value}, got {show(inst)}"
    if kind == "maximum":
        return f"must be at most {value}, got {show(inst)}"
    if kind == "exclusiveMinimum":
        return f"must be greater than {value}, got {show(inst)}"
    if kind == "exclusiveMaximum":
        return f"must be less than {value}, got {show(inst)}"
    if kind == "uniqueItems":
        return "lists the same item more than once"
    if kind == "minItems":
        return "must not be empty" if value == 1 else f"must have at least {value} items"
    if kind == "maxItems":
        return f"must have at most {value} items"
    return None

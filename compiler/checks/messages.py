"""Plain-language messages for jsonschema errors (jsonschema's own read like Python reprs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compiler.checks.common import extend, short, type_name
from compiler.suggest import did_you_mean

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

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


def got(instance: Any) -> str:
    """ "a string ('x')" for scalars, "a mapping" for containers."""
    kind = type_name(instance)
    if isinstance(instance, (dict, list)) or instance is None:
        return kind
    return f"{kind} ({short(instance)})"


def describe(e: ValidationError, where: str) -> tuple[str, str, str | None]:
    """(code, message, hint) for one error located at ``where`` (a dotted path)."""
    kind = str(e.validator)
    value: Any = e.validator_value
    inst: Any = e.instance
    if kind == "type":
        return "HZ103", f"{where}: expected {expected_types(value)}, got {got(inst)}", None
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
        code, message, hint = describe(best, extend(where, extra))
        others = max(len(value) - 1, 1)
        plural = "s" if others != 1 else ""
        return code, f"{message} (and {others} other alternative{plural} did not match)", hint
    if kind == "enum":
        choices = ", ".join(short(v) for v in value)
        hint = (
            did_you_mean(inst, [v for v in value if isinstance(v, str)])
            if isinstance(inst, str)
            else None
        )
        return "HZ104", f"{where}: expected one of {choices}, got {short(inst)}", hint
    if kind == "const":
        return "HZ104", f"{where}: expected {short(value)}, got {short(inst)}", None
    if kind == "pattern":
        about = e.schema.get("description") if isinstance(e.schema, dict) else None
        if about:  # hz's own schema explains its patterns in words
            return "HZ104", f"{where}: {short(inst)} is not in the expected form", about
        return "HZ104", f"{where}: {short(inst)} does not match the pattern {value!r}", None
    if kind == "format":
        return "HZ104", f"{where}: {short(inst)} is not a valid {value}", None
    return "HZ104", f"{where}: {_bound(kind, value, inst) or e.message}", None


def _bound(kind: str, value: Any, inst: Any) -> str | None:
    """Messages for the numeric, length and count keywords."""
    if kind == "minLength":
        return "must not be empty" if value == 1 else f"must be at least {value} characters"
    if kind == "maxLength":
        return f"is longer than {value} characters"
    if kind == "minimum":
        return f"must be at least {value}, got {short(inst)}"
    if kind == "maximum":
        return f"must be at most {value}, got {short(inst)}"
    if kind == "exclusiveMinimum":
        return f"must be greater than {value}, got {short(inst)}"
    if kind == "exclusiveMaximum":
        return f"must be less than {value}, got {short(inst)}"
    if kind == "uniqueItems":
        return "lists the same item more than once"
    if kind == "minItems":
        return "must not be empty" if value == 1 else f"must have at least {value} items"
    if kind == "maxItems":
        return f"must have at most {value} items"
    return None

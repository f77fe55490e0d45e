"""The keywords hz evaluates its own way: ``required`` (the missing key as data, so messages
word it) and those whose meaning involves a regular expression, over the ECMA-262 engine.

jsonschema implements ``pattern``, ``patternProperties``, and the property bookkeeping of
``additionalProperties`` and ``unevaluatedProperties``, with Python's ``re``; these are the
same keywords with ``hz.runtime.jsonschema.ecma.search`` in its place. The rest of each
function follows jsonschema's own (``jsonschema._keywords``, ``jsonschema._utils``): a
reference is followed as jsonschema does, through ``hz.runtime.jsonschema.compat``, and
tests/unit/jsonschema/test_compat.py checks the copies against the originals.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from hz.runtime.jsonschema.compat import follow
from hz.runtime.jsonschema.ecma import search

Schema = dict[str, Any]


class MissingKey(ValidationError):
    """A ``required`` error for the one missing ``key`` (jsonschema names it only in English)."""

    key: str


def required(
    validator: Any, names: Any, instance: Any, schema: Schema
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for key in names:
        if key not in instance:
            error = MissingKey(f"{key!r} is a required property")
            error.key = key
            yield error


def pattern(validator: Any, patrn: str, instance: Any, schema: Schema) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Schema
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in patterns.items():
        for key, value in instance.items():
            if search(patrn, key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def _additional(instance: dict[str, Any], schema: Schema) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(search(p, key) for p in patterns)
    ]


def additional_properties(
    validator: Any, ap: Any, instance: Any, schema: Schema
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif not ap and extras:
        listed = ", ".join(repr(each) for each in sorted(extras))
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{listed} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )


def unevaluated_properties(
    validator: Any, uep: Any, instance: Any, schema: Schema
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    bad = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], uep, path=key, schema_path=key), None) is not None
    ]
    if not bad:
        return
    listed = ", ".join(repr(each) for each in sorted(bad, key=str))
    verb = "was" if len(bad) == 1 else "were"
    if uep is False:
        yield ValidationError(
            f"Unevaluated properties are not allowed ({listed} {verb} unexpected)"
        )
    else:
        yield ValidationError(
            "Unevaluated properties are not valid under the given schema "
            f"({listed} {verb} unevaluated and invalid)"
        )


def _valid(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
    """The keys of ``instance`` some keyword of ``schema`` evaluated (successfully, where the
    keyword is an applicator that must succeed for its annotations to count)."""
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            contents, target = follow(validator, ref)
            keys |= _evaluated_keys(target, instance, contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            keys |= {
                key
                for key, value in instance.items()
                if _valid(validator.descend(value, subschema))
            }
    for patrn in schema.get("patternProperties", {}):
        keys |= {key for key in instance if search(patrn, key)}
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator.descend(instance, subschema)):
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


#: Draft 2020-12 with the keywords above: the one validator class of hz's schema checks (the
#: contract's, the inputs' and the outputs').
HzValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "required": required,
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "unevaluatedProperties": unevaluated_properties,
    },
)

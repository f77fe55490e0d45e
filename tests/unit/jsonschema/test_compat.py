"""``hz.runtime.jsonschema.compat`` against the installed jsonschema: every private name it
uses is still there with the signature it was written against, ``follow`` still carries the
scope of the ``$id``s, and hz's keyword copies still agree with the originals they follow."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from jsonschema import Draft202012Validator
from jsonschema._utils import find_evaluated_property_keys_by_schema
from referencing._core import Resolved

from hz.runtime.jsonschema.check import errors, validator
from hz.runtime.jsonschema.compat import (
    EVALUATED_KEYS_SOURCE,
    RESOLVED_FIELDS,
    RESOLVER_FIELD,
    UPSTREAM,
    follow,
)
from hz.runtime.jsonschema.keywords import _evaluated_keys
from tests.helpers.upstream import signature, source_digest

SCOPED = {
    "$id": "https://x.example/root",
    "$defs": {
        "b": {"$id": "b", "$defs": {"c": {"properties": {"y": {}}}}, "$ref": "#/$defs/c"},
    },
    "$ref": "b",
    "unevaluatedProperties": False,
}


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_what_compat_uses_has_the_signature_it_was_written_against(name: str) -> None:
    assert signature(name) == UPSTREAM[name], (
        f"jsonschema changed {name}: re-read it, adjust hz.runtime.jsonschema.compat (and the "
        "keyword copies), then update the pin"
    )


def test_a_validator_carries_its_resolver_where_compat_reads_it() -> None:
    fields = {f.name: (f.name, f.alias, f.kw_only) for f in attrs.fields(Draft202012Validator)}
    assert fields.get(RESOLVER_FIELD[0]) == RESOLVER_FIELD
    assert tuple(f.name for f in attrs.fields(Resolved)) == RESOLVED_FIELDS


def test_the_bookkeeping_hz_copies_is_unchanged() -> None:
    assert (
        source_digest("jsonschema._utils.find_evaluated_property_keys_by_schema")
        == EVALUATED_KEYS_SOURCE
    ), (
        "jsonschema changed find_evaluated_property_keys_by_schema: port the change to "
        "hz.runtime.jsonschema.keywords._evaluated_keys, then update the digest"
    )


def test_follow_resolves_from_where_the_validator_stands() -> None:
    contents, inner = follow(validator(SCOPED), "b")
    assert contents == SCOPED["$defs"]["b"]
    # "#/$defs/c" is b's own: it resolves only in the scope follow carried into b.
    assert follow(inner, "#/$defs/c")[0] == {"properties": {"y": {}}}
    assert [e.message for e in errors(SCOPED, {"y": 1, "z": 2})] == [
        "Unevaluated properties are not allowed ('z' was unexpected)"
    ]


#: Schemas whose patterns mean the same in ECMA-262 and Python's re, with an instance each.
CASES: list[tuple[dict[str, Any], Any]] = [
    ({"properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "b": 2}),
    ({"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False}, {"a": 1, "b": 2}),
    (
        {
            "anyOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {}}},
            ],
            "unevaluatedProperties": False,
        },
        {"a": 1, "b": 2, "c": 3},
    ),
    (
        {
            "oneOf": [{"properties": {"a": {}}, "required": ["a"]}, {"required": ["z"]}],
            "unevaluatedProperties": False,
        },
        {"a": 1, "b": 2},
    ),
    (
        {
            "if": {"properties": {"k": {"const": 1}}},
            "then": {"properties": {"t": {}}},
            "else": {"properties": {"e": {}}},
            "unevaluatedProperties": False,
        },
        {"k": 1, "t": 1, "e": 1},
    ),
    (
        {
            "if": {"properties": {"k": {"const": 1}}},
            "then": {"properties": {"t": {}}},
            "else": {"properties": {"e": {}}},
            "unevaluatedProperties": False,
        },
        {"k": 2, "t": 1, "e": 1},
    ),
    (
        {"dependentSchemas": {"d": {"properties": {"x": {}}}}, "unevaluatedProperties": False},
        {"d": 1, "x": 1, "y": 1},
    ),
    (
        {
            "$defs": {"a": {"properties": {"a": {}}}},
            "$ref": "#/$defs/a",
            "unevaluatedProperties": False,
        },
        {"a": 1, "b": 2},
    ),
    (
        {
            "$defs": {"x": {"$dynamicAnchor": "x", "properties": {"q": {}}}},
            "$dynamicRef": "#x",
            "unevaluatedProperties": False,
        },
        {"q": 1, "r": 2},
    ),
    (SCOPED, {"y": 1, "z": 2}),
    (
        {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
        {"a": 1, "b": 2, "c": "s"},
    ),
    ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2, "c": 3}),
    ({"patternProperties": {"^p": {}}, "unevaluatedProperties": False}, {"pa": 1, "q": 2}),
    ({"patternProperties": {"^p": {}}, "additionalProperties": False}, {"pa": 1, "q": 2}),
    ({"patternProperties": {"^p": {}}, "additionalProperties": False}, {"q": 1, "r": 2}),
    ({"patternProperties": {"^p": {"type": "string"}}}, {"pa": 1}),
    ({"unevaluatedProperties": {"type": "string"}}, {"a": 1, "b": "x", "c": 2}),
    ({"required": ["a", "b"]}, {}),
    ({"pattern": "^a"}, "b"),
]


@pytest.mark.parametrize(("schema", "instance"), CASES)
def test_the_keyword_copies_agree_with_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    upstream = Draft202012Validator(schema)
    if isinstance(instance, dict):
        ours = _evaluated_keys(validator(schema), instance, schema)
        theirs = find_evaluated_property_keys_by_schema(upstream, instance, schema)
        assert sorted(ours) == sorted(set(theirs))

    def seen(found: list[Any]) -> list[tuple[list[Any], str, str]]:
        return sorted((list(e.path), str(e.validator), e.message) for e in found)

    expected = seen(list(upstream.iter_errors(instance)))
    assert expected != []  # each case fails somewhere: the messages are compared
    assert seen(errors(schema, instance)) == expected

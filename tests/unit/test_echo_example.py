"""The echo runner's ``echo_draft = "example"``: a document made from the output schema."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.runners.echo import EchoSettings, example_of

TRIAGE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "labels", "priority", "summary"],
    "properties": {
        "kind": {"enum": ["bug", "feature"]},
        "labels": {"type": "array", "items": {"type": "string"}},
        "priority": {"enum": ["p0", "p1"]},
        "duplicate_of": {"type": "integer", "minimum": 1},
        "summary": {"type": "string", "maxLength": 280},
    },
}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (TRIAGE, {"kind": "bug", "labels": [], "priority": "p0", "summary": ""}),
        ({"type": "object", "examples": [{"a": 1}], "required": ["b"]}, {"a": 1}),
        ({"const": "fixed"}, "fixed"),
        ({"type": "integer", "default": 7}, 7),
        ({"type": "integer", "minimum": 2.5}, 3),
        ({"type": "integer", "exclusiveMinimum": 2}, 3),
        ({"type": "number", "maximum": -1.5}, -1.5),
        ({"type": "string", "minLength": 3}, "xxx"),
        ({"type": ["null", "boolean"]}, False),
        ({"type": "array", "minItems": 2, "items": {"type": "integer"}}, [0, 0]),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, ""),
        (
            {"allOf": [{"required": ["a"]}, {"properties": {"a": {"type": "integer"}}}]},
            {"a": 0},
        ),
        (True, {}),
        (None, {}),
    ],
)
def test_example_of(schema: Any, expected: Any) -> None:
    assert example_of(schema) == expected


def test_the_triage_example_fits_its_schema() -> None:
    assert list(Draft202012Validator(TRIAGE).iter_errors(example_of(TRIAGE))) == []


def test_echo_draft_is_checked() -> None:
    with pytest.raises(ConfigError) as e:
        EchoSettings.from_table({"echo_draft": "schema"})
    assert e.value.message == (
        "[system.runner] echo_draft must be one of prompt, example, got 'schema'"
    )

"""The fast path for input and output schemas (``hz.runtime.jsonschema.fast``) may only say
"valid" where the validator says so too, and says it for the schemas contracts commonly hold."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.compiler.load.loader import load_path
from hz.runtime.jsonschema import SchemaProblem, errors, metaschema_errors, unresolvable
from hz.runtime.jsonschema.fast import certainly_conforms, certainly_valid_schema

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "benchmarks"))
from gen_contracts import generate  # noqa: E402

#: Captured at import, before the autouse fixture gives each test a private HOME.
SUITE = Path(os.environ.get("HZ_JSON_SCHEMA_SUITE", Path.home() / ".cache/hz/json-schema-suite"))


def _suite_dir() -> Path:
    import importlib.metadata

    version = importlib.metadata.version("jsonschema")
    found = SUITE / f"jsonschema-{version}" / "json" / "tests" / "draft2020-12"
    if not found.is_dir():
        pytest.fail(f"the JSON-Schema-Test-Suite is not at {found}: run `make json-schema-suite`")
    return found


def _schema_valid(schema: Any) -> bool:
    try:
        return not metaschema_errors(schema) and not unresolvable(schema)
    except SchemaProblem:
        return False


def _value_valid(schema: Any, value: Any) -> bool:
    try:
        return not errors(schema, value)
    except SchemaProblem:
        return False


def test_never_more_lenient_than_the_validator_over_the_test_suite() -> None:
    schemas = decided = values = 0
    for path in sorted(_suite_dir().rglob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = group["schema"]
            schemas += 1
            if not certainly_valid_schema(schema):
                continue
            decided += 1
            assert _schema_valid(schema), (path.name, group["description"])
            for case in group["tests"]:
                if certainly_conforms(schema, case["data"]):
                    values += 1
                    assert case["valid"], (path.name, group["description"], case["description"])
                    assert _value_valid(schema, case["data"]), (path.name, case["description"])
    # The subset is a real part of the suite, not an empty check.
    assert schemas > 400
    assert decided > 90  # of which 184 cases were decided valid (jsonschema 4.26's suite)
    assert values > 150


def _corpus_schemas() -> Iterator[tuple[str, Any, list[Any]]]:
    files = [*(REPO / "tests" / "cases").rglob("*.yaml"), *(REPO / "contracts").glob("*.yaml")]
    for path in sorted(files):
        doc, _ = load_path(path)
        hz = doc.data.get("hz") if doc is not None and isinstance(doc.data, dict) else None
        if not isinstance(hz, dict):
            continue
        inputs = hz.get("inputs")
        for name, spec in (inputs if isinstance(inputs, dict) else {}).items():
            if isinstance(spec, dict) and "schema" in spec:
                values = [spec["default"]] if "default" in spec else []
                yield f"{path.name}:{name}", spec["schema"], values
        output = hz.get("output")
        if isinstance(output, dict) and "schema" in output:
            yield f"{path.name}:output", output["schema"], []


@pytest.mark.parametrize(("where", "schema", "values"), list(_corpus_schemas()))
def test_agrees_with_the_validator_on_the_corpus(where: str, schema: Any, values: Any) -> None:
    if certainly_valid_schema(schema):
        assert _schema_valid(schema)
    for value in values:
        if certainly_valid_schema(schema) and certainly_conforms(schema, value):
            assert _value_valid(schema, value)


def test_the_generated_contracts_schemas_all_take_the_fast_path(tmp_path: Path) -> None:
    taken = 0
    for path in generate(tmp_path, 200):
        doc, _ = load_path(path)
        assert doc is not None
        hz = doc.data["hz"]
        for spec in hz.get("inputs", {}).values():
            assert certainly_valid_schema(spec["schema"])
            assert _schema_valid(spec["schema"])
            if "default" in spec:
                assert certainly_conforms(spec["schema"], spec["default"])
                assert _value_valid(spec["schema"], spec["default"])
            taken += 1
        if "schema" in hz.get("output", {}):
            assert certainly_valid_schema(hz["output"]["schema"])
    assert taken > 100


PATTERN = {"type": "string", "pattern": "^[0-9]{4}-W[0-9]{2}$"}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strin"},
        {"type": []},
        {"type": ["string", "string"]},
        {"minLength": -1},
        {"minLength": True},
        {"required": ["a", "a"]},
        {"required": "a"},
        {"pattern": "("},
        {"pattern": "\\p{Nope}"},
        {"properties": {"a": {"type": 1}}},
        {"items": {"minimum": "1"}},
        {"enum": "a"},
        {"description": 1},
        {"uniqueItems": 1},
        {"examples": "x"},
        [],
        "string",
    ],
)
def test_an_invalid_schema_never_takes_the_fast_path(schema: Any) -> None:
    assert not _schema_valid(schema)
    assert not certainly_valid_schema(schema)


@pytest.mark.parametrize(
    "schema",
    [
        # Valid, but for the validator to decide: references, formats, other keywords,
        # and an integer written as a float.
        {"$ref": "#/$defs/a", "$defs": {"a": {}}},
        {"format": "date"},
        {"oneOf": [{"type": "string"}]},
        {"minLength": 2.0},
    ],
)
def test_what_the_fast_path_does_not_know_goes_to_the_validator(schema: Any) -> None:
    assert _schema_valid(schema)
    assert not certainly_valid_schema(schema)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (PATTERN, "2026-W4"),
        (PATTERN, "2026-W48\n"),  # ECMA-262's $ is the end of the text
        (PATTERN, "٢٠٢٦-W48"),  # and [0-9] no other script's digits
        ({"type": "integer"}, True),
        ({"type": "integer"}, 1.5),
        ({"type": "number"}, "1"),
        ({"enum": ["team"]}, "Team"),
        ({"enum": [1]}, True),
        ({"const": 1}, "1"),
        ({"minimum": 1}, 0),
        ({"exclusiveMaximum": 1}, 1),
        ({"maxLength": 2}, "abc"),
        ({"minItems": 1}, []),
        ({"required": ["a"]}, {}),
        ({"additionalProperties": False, "properties": {"a": {}}}, {"b": 1}),
        ({"items": {"type": "string"}}, ["a", 1]),
        ({"properties": {"n": {"type": "integer", "minimum": 1}}}, {"n": 0}),
        (False, 1),
    ],
)
def test_an_invalid_value_never_takes_the_fast_path(schema: Any, value: Any) -> None:
    assert not _value_valid(schema, value)
    assert not (certainly_valid_schema(schema) and certainly_conforms(schema, value))


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (PATTERN, "2026-W48"),
        ({"type": "integer"}, 2.0),  # JSON has one number type: 2.0 is an integer
        ({"type": ["string", "null"]}, None),
        ({"enum": [1, "a"]}, 1.0),
        ({"minLength": 2}, "é!"),
        ({"maxProperties": 1, "additionalProperties": {"type": "string"}}, {"a": "b"}),
        (True, {"anything": [1]}),
    ],
)
def test_a_valid_value_takes_the_fast_path(schema: Any, value: Any) -> None:
    assert _value_valid(schema, value)
    assert certainly_valid_schema(schema)
    assert certainly_conforms(schema, value)

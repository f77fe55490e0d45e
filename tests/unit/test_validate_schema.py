"""The published contract schema: a valid 2020-12 schema, written for people, one copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema.validators import Draft202012Validator

from hz.compiler.checks.structure import REFUSED, contract_schema, schema_text

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases"


def test_editor_copy_is_identical_to_the_packaged_schema() -> None:
    assert (REPO / "schemas" / "workflow-contract.schema.json").read_text() == schema_text()


def test_read_and_window_patterns_are_the_catalogs() -> None:
    from hz.runtime.artifacts.models import READ_PATTERN
    from hz.runtime.artifacts.operations import OPERATION_PATTERN, WINDOW_PATTERN

    props = contract_schema()["$defs"]["input"]["properties"]
    assert props["read"]["pattern"] == READ_PATTERN
    assert READ_PATTERN.startswith("^(?:" + OPERATION_PATTERN[1:].removesuffix("$(?!\\n)") + "|")
    assert props["window"]["pattern"] == WINDOW_PATTERN


def test_schema_is_valid_2020_12() -> None:
    schema = contract_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def subschemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in the contract schema (not the example values)."""
    if not isinstance(node, dict):
        return
    yield where, node
    for name, sub in node.get("properties", {}).items():
        yield from subschemas(sub, f"{where}/properties/{name}")
    for name, sub in node.get("$defs", {}).items():
        yield from subschemas(sub, f"{where}/$defs/{name}")
    for key in ("items", "additionalProperties", "propertyNames"):
        yield from subschemas(node.get(key), f"{where}/{key}")
    for i, sub in enumerate(node.get("oneOf", [])):
        yield from subschemas(sub, f"{where}/oneOf/{i}")


def test_every_schema_node_has_title_description_and_examples() -> None:
    missing = [
        (where, key)
        for where, node in subschemas(contract_schema())
        if "$ref" not in node
        for key in ("title", "description", "examples")
        if key not in node
    ]
    assert missing == []


def test_every_object_with_properties_forbids_other_keys() -> None:
    loose = [
        where
        for where, node in subschemas(contract_schema())
        if "properties" in node and node.get("additionalProperties") is not False
    ]
    assert loose == []


def test_refused_hints_are_declared_and_forbidden() -> None:
    agent = contract_schema()["properties"]["hz"]["properties"]["agent"]["properties"]
    for name in REFUSED:
        assert agent[name]["not"] == {}
        # Declared so that an editor explains the refusal on hover, never offered as a
        # completion (the YAML language server reads doNotSuggest).
        assert agent[name]["doNotSuggest"] is True
        assert agent[name]["description"].startswith("Refused.")
        where = "[capabilities]" if name == "runner" else "[system.runner]"
        assert where in agent[name]["description"]
        # In the author's terms, as the rule's message: nothing of hz's internals.
        assert "protocol" not in agent[name]["description"]
        assert "hint nobody reads" not in agent[name]["description"]


def plain(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize(
    "path",
    sorted((CASES / "valid").glob("*.yaml")) + sorted((REPO / "contracts").glob("*.yaml")),
    ids=lambda p: p.name,
)
def test_an_editor_with_only_the_schema_accepts_valid_contracts(path: Path) -> None:
    errors = list(Draft202012Validator(contract_schema()).iter_errors(plain(path)))
    assert [e.message for e in errors] == []


@pytest.mark.parametrize(
    "name",
    [
        "HZ101-unknown-key",
        "HZ102-missing-keys",
        "HZ103-wrong-type",
        "HZ201-runner",
        "HZ202-model",
        "HZ203-effort",
        "HZ204-max-turns",
        "HZ301-timeout-syntax",
        "HZ302-timeout-too-long",
        "HZ303-budget-zero",
    ],
)
def test_an_editor_with_only_the_schema_flags_structural_mistakes(name: str) -> None:
    data = plain(CASES / "invalid" / f"{name}.yaml")
    assert list(Draft202012Validator(contract_schema()).iter_errors(data)) != []


def test_schema_text_is_json_with_trailing_newline() -> None:
    text = schema_text()
    assert text.endswith("}\n")
    assert json.loads(text) == contract_schema()

"""The fast path (the contract schema compiled by fastjsonschema) may only ever say "valid"
where jsonschema says so too."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from hz.compiler.checks.structure import (
    certainly_valid,
    contract_schema,
    contract_validator,
    schema_text,
)
from hz.compiler.load.loader import load_path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from gen_contracts import generate  # noqa: E402

SCHEMA = contract_schema()
#: The locating validator: the published schema, its patterns as ECMA-262 means them.
VALIDATOR = contract_validator()
FILES = sorted([*(REPO / "tests" / "cases").rglob("*.yaml"), *(REPO / "contracts").glob("*.yaml")])


def _data(path: Path) -> Any:
    doc, _ = load_path(path)
    return None if doc is None else doc.data


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REPO)) for p in FILES])
def test_agrees_with_jsonschema_on_the_corpus(path: Path) -> None:
    data = _data(path)
    if data is None:
        return  # a loader case: never reaches the schema
    fast = certainly_valid(data)
    assert fast <= VALIDATOR.is_valid(data)  # never more lenient
    if path.parent.name == "valid" or path.parent.name == "contracts":
        assert fast, "a valid contract should take the fast path"


def test_the_shipped_validator_is_what_the_generator_makes() -> None:
    # Fails after a change of the schema (or of fastjsonschema) until the module is regenerated.
    from hz.compiler.checks import structure_codegen

    assert structure_codegen.TARGET.read_text(encoding="utf-8") == structure_codegen.generate(), (
        "stale: run python -m hz.compiler.checks.structure_codegen --write"
    )


def test_codegen_check_and_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hz.compiler.checks import structure_codegen

    target = tmp_path / "structure_code.py"
    target.write_text("stale\n")
    monkeypatch.setattr(structure_codegen, "TARGET", target)
    assert structure_codegen.main(["--check"]) == 1
    assert structure_codegen.main(["--write"]) == 0
    assert structure_codegen.main(["--check"]) == 0
    assert target.read_text() == structure_codegen.generate()


def test_every_generated_contract_takes_the_fast_path(tmp_path: Path) -> None:
    paths = generate(tmp_path, 200)
    verdicts = {certainly_valid(_data(p)) for p in paths}
    assert verdicts == {True}


@pytest.mark.parametrize(
    "mutation",
    [
        lambda d: d["hz"].update(name="Not A Slug"),
        lambda d: d["hz"].update(timeout="10 min"),
        lambda d: d["hz"].update(timeout=True),
        lambda d: d["hz"].update(timeout=0),
        lambda d: d["hz"]["agent"].update(max_usd=0),
        lambda d: d["hz"]["agent"].update(tools=["Read", "Read"]),
        lambda d: d["hz"]["agent"].update(runner="codex"),
        lambda d: d["hz"].update(extra=1),
        lambda d: d.update(prompt=""),
        lambda d: d["hz"].update(contract=2),
        lambda d: d["hz"].update(output={"format": "yaml"}),
        lambda d: d["hz"].update(inputs={"1bad": {"schema": {}}}),
        lambda d: d["hz"].update(inputs={"ok": {"schema": {}, "descr": "x"}}),
        lambda d: d["hz"].update(inputs={"ok": {"default": 1}}),
        lambda d: d.pop("contract"),
        # JSON's types, not Python's: true is not 1, 1.5 is not an integer.
        lambda d: d["hz"].update(contract=True),
        lambda d: d["hz"].update(contract=1.5),
        lambda d: d["hz"].update(timeout=[60]),
        lambda d: d["hz"]["agent"].update(max_usd=True),
        lambda d: d["hz"]["agent"].update(tools=[True]),
        lambda d: d["hz"]["agent"].update(tools="Read"),
        lambda d: d["hz"].update(title=""),
        lambda d: d["hz"].update(output={"format": "json", "schema": 1}),
        lambda d: d.update(contract=None),
        # ECMA-262's \d is [0-9]; Python's takes an Arabic-Indic three.
        lambda d: d["hz"].update(timeout="٣m"),
        lambda d: d["hz"]["agent"].update(tools=["Read\n"]),
    ],
)
def test_an_invalid_contract_never_takes_the_fast_path(mutation: Any) -> None:
    data = _data(REPO / "contracts" / "weekly-digest.yaml")
    assert certainly_valid(data)
    mutation(data)
    assert not VALIDATOR.is_valid(data)
    assert not certainly_valid(data)


def test_the_fast_path_does_not_write_defaults_into_the_document() -> None:
    data = _data(REPO / "contracts" / "weekly-digest.yaml")
    before = repr(data)
    assert certainly_valid(data)
    assert repr(data) == before


def test_a_name_with_a_final_newline_is_invalid_on_both_paths() -> None:
    # Python's re lets "$" match before a final newline; the schema's name patterns say
    # "$(?!\n)", so jsonschema refuses "weekly-digest\n" as the fast path does.
    data = _data(REPO / "contracts" / "weekly-digest.yaml")
    data["hz"]["name"] = "weekly-digest\n"
    assert not certainly_valid(data)
    assert not VALIDATOR.is_valid(data)


def test_compiling_the_fast_path_leaves_the_contract_schema_alone() -> None:
    assert certainly_valid(_data(REPO / "contracts" / "weekly-digest.yaml"))
    assert contract_schema() == json.loads(schema_text())


def _patterns(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
        found += list(schema.get("patternProperties", {}))
        return found + [p for value in schema.values() for p in _patterns(value)]
    if isinstance(schema, list):
        return [p for value in schema for p in _patterns(value)]
    return []


def test_the_schemas_patterns_mean_the_same_to_python_and_to_ecma_262() -> None:
    # The fast path is Python's re: a class escape (\d \w \s \b) takes other scripts'
    # characters there and not in ECMA-262, and "$" must refuse a final newline explicitly.
    patterns = _patterns(SCHEMA)
    # names, durations, tools, inputs, reads, windows, schedules, publish targets
    assert len(patterns) == 10
    for pattern in patterns:
        assert not re.search(r"\\[dDwWsSbB]", pattern), pattern
        assert pattern.endswith("$(?!\\n)"), pattern


#: Keywords that mean the same to fastjsonschema (which compiles a 2020-12 schema with its
#: 2019-09 generator: it has none for 2020-12) and to jsonschema's Draft202012Validator. A
#: keyword outside this set (``prefixItems``, ``unevaluatedProperties``, ``dependentRequired``,
#: ``$dynamicRef``, ``format`` ...) would be skipped by the fast path, which would then say
#: "valid" where jsonschema does not: docs/decisions/0010-fast-schema-path.md.
SAME_IN_BOTH = frozenset(
    {
        "type", "enum", "const", "properties", "patternProperties", "additionalProperties",
        "required", "propertyNames", "minProperties", "maxProperties", "items", "minItems",
        "maxItems", "uniqueItems", "contains", "minLength", "maxLength", "pattern", "minimum",
        "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "allOf", "anyOf",
        "oneOf", "not", "if", "then", "else", "$ref",
    }
)  # fmt: skip
#: Keywords that assert nothing (``doNotSuggest``: an editor's completion hint, which the YAML
#: language server reads; both validators ignore it).
ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "$defs", "$comment", "title", "description", "examples", "default",
        "doNotSuggest",
    }
)  # fmt: skip
_SCHEMA_VALUED = ("items", "additionalProperties", "propertyNames", "contains", "not", "if",
                  "then", "else")  # fmt: skip


def _keywords(schema: Any) -> set[str]:
    """Every keyword of a schema and of its subschemas."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key in ("properties", "patternProperties", "$defs"):
        for sub in schema.get(key, {}).values():
            found |= _keywords(sub)
    for key in _SCHEMA_VALUED:
        found |= _keywords(schema.get(key))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            found |= _keywords(sub)
    return found


def test_the_contract_schema_uses_only_keywords_the_fast_path_compiles() -> None:
    assert _keywords(SCHEMA) - SAME_IN_BOTH - ANNOTATIONS == set()
    # 2019-09 reads an array of ``items`` as a tuple; 2020-12 calls that prefixItems.
    assert "items" in _keywords(SCHEMA)
    assert not any(
        isinstance(node.get("items"), list) for node in _nodes(SCHEMA) if isinstance(node, dict)
    )


def test_a_keyword_the_fast_path_does_not_compile_is_caught() -> None:
    schema = json.loads(schema_text())
    schema["properties"]["hz"]["unevaluatedProperties"] = False
    assert _keywords(schema) - SAME_IN_BOTH - ANNOTATIONS == {"unevaluatedProperties"}


def _nodes(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(n for v in value.values() for n in _nodes(v))]
    if isinstance(value, list):
        return [n for v in value for n in _nodes(v)]
    return []

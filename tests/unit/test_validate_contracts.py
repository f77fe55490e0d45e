"""The example contracts in contracts/ validate, and their example inputs fit their schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema.validators import Draft202012Validator

from hz.compiler.validate import validate_paths

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts"
NAMES = sorted(p.stem for p in CONTRACTS.glob("*.yaml"))
#: The Markdown examples, by contract name: file name.
MARKDOWN = {p.name.split(".")[0]: p.name for p in CONTRACTS.glob("*.md")}
HEADER = "# yaml-language-server: $schema=../schemas/workflow-contract.schema.json\n"


def test_there_are_at_least_three_and_all_validate() -> None:
    run = validate_paths([str(CONTRACTS)])
    assert run.diagnostics == ()
    assert len(run.contracts) == len(NAMES) + len(MARKDOWN)
    assert len(NAMES) >= 3
    assert len(MARKDOWN) >= 2
    assert {c.output_format for c in run.contracts} >= {"markdown", "json"}


@pytest.mark.parametrize("name", NAMES)
def test_contract_names_its_schema_for_editors(name: str) -> None:
    assert (CONTRACTS / f"{name}.yaml").read_text().startswith(HEADER)


@pytest.mark.parametrize("name", NAMES + sorted(MARKDOWN))
def test_example_inputs_fit_the_declared_inputs(name: str) -> None:
    (contract,) = validate_paths([str(CONTRACTS / MARKDOWN.get(name, f"{name}.yaml"))]).contracts
    assert contract.name == name
    values = json.loads((CONTRACTS / "inputs" / f"{name}.json").read_text())
    declared = {i.name: i for i in contract.inputs}
    assert sorted(set(values) - set(declared)) == []
    assert sorted(n for n, i in declared.items() if not i.has_default and n not in values) == []
    for key, value in values.items():
        errors = list(Draft202012Validator(declared[key].schema).iter_errors(value))
        assert [e.message for e in errors] == [], key

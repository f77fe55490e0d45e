"""The fast path may only ever say "valid" where jsonschema says so too."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from hz.compiler.checks.schema_fast import certainly_valid
from hz.compiler.checks.structure import contract_schema
from hz.compiler.load.loader import load_path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from gen_contracts import generate  # noqa: E402

SCHEMA = contract_schema()
VALIDATOR = Draft202012Validator(SCHEMA)
FILES = sorted([*(REPO / "tests" / "cases").rglob("*.yaml"), *(REPO / "contracts").glob("*.yaml")])


def _data(path: Path) -> Any:
    doc, _ = load_path(path)
    return None if doc is None else doc.data


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REPO)) for p in FILES])
def test_agrees_with_jsonschema_on_the_corpus(path: Path) -> None:
    data = _data(path)
    if data is None:
        return  # a loader case: never reaches the schema
    fast = certainly_valid(data, SCHEMA, SCHEMA)
    assert fast <= VALIDATOR.is_valid(data)  # never more lenient
    if path.parent.name == "valid" or path.parent.name == "contracts":
        assert fast, "a valid contract should take the fast path"


def test_every_generated_contract_takes_the_fast_path(tmp_path: Path) -> None:
    paths = generate(tmp_path, 200)
    verdicts = {certainly_valid(_data(p), SCHEMA, SCHEMA) for p in paths}
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
    ],
)
def test_an_invalid_contract_never_takes_the_fast_path(mutation: Any) -> None:
    data = _data(REPO / "contracts" / "weekly-digest.yaml")
    assert certainly_valid(data, SCHEMA, SCHEMA)
    mutation(data)
    assert not VALIDATOR.is_valid(data)
    assert not certainly_valid(data, SCHEMA, SCHEMA)

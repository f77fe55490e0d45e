"""No shape of data makes validation raise: every value of every valid contract replaced by
odd values still yields diagnostics, never an exception (a user error is never a traceback)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.compiler.load.loader import load_path
from hz.compiler.source import JsonPath, SourceDoc
from hz.compiler.validate import validate_source

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "contracts").glob("*.yaml")) + sorted(
    (REPO / "tests" / "cases" / "valid").glob("*.yaml")
)
ODD: list[Any] = [
    None,
    True,
    0,
    -1,
    1e308,
    "",
    "x" * 300,
    "{{",
    [],
    [None, {}],
    {},
    {"$ref": 1},
    {"type": "nope"},
]


def paths(node: Any, path: JsonPath = ()) -> Iterator[JsonPath]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from paths(value, (*path, i))


def replaced(data: dict[str, Any], path: JsonPath, value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(data)
    node: Any = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_odd_values_everywhere_never_raise(path: Path) -> None:
    doc, _ = load_path(path)
    assert doc is not None
    checked = 0
    for where in list(paths(doc.data))[1:]:
        for value in ODD:
            data = replaced(doc.data, where, value)
            mutated: SourceDoc = dataclasses.replace(doc, data=data)
            contract, diags = validate_source(mutated)
            assert contract is None or all(d.severity == "warning" for d in diags)
            checked += 1
    assert checked > 100

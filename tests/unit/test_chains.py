"""chain_problems over many contracts: suggestions, and the names sorted once, not per contract."""

from __future__ import annotations

from typing import Any

import pytest

import hz.compiler.chains
from hz.compiler.chains import Link, chain_problems


def test_an_unknown_name_is_matched_against_the_other_contracts_not_its_own() -> None:
    found = chain_problems(
        [
            Link("deploy", after=(("deplo", ("a.yaml", 3, 4)),)),
            Link("deploy-docs", after=(("deply", ("b.yaml", 5, 6)),)),
        ]
    )
    assert [(d.file, d.message) for d in found] == [
        (
            "a.yaml",
            "hz.after: no contract compiled with this one is named 'deplo' "
            "(did you mean 'deploy-docs'?)",
        ),
        (
            "b.yaml",
            "hz.after: no contract compiled with this one is named 'deply' "
            "(did you mean 'deploy'?)",
        ),
    ]


def test_the_names_are_not_sorted_once_per_contract(monkeypatch: pytest.MonkeyPatch) -> None:
    # Sorting every name for every contract made a compile of 10,000 contracts take ≈ 20 s.
    calls: list[int] = []

    def counted(items: Any, **kw: Any) -> list[Any]:
        done = sorted(items, **kw)
        calls.append(len(done))
        return done

    monkeypatch.setattr(hz.compiler.chains, "sorted", counted, raising=False)
    links = [Link(f"job-{n}", after=((f"job-{n - 1}", ("c.yaml", 1, 1)),)) for n in range(1, 500)]
    assert chain_problems([Link("job-0"), *links]) == []
    # Linear in the contracts (the graph's edges, the cycle search), and no list of every
    # name per contract (that alone is 500 x 499 items).
    assert sum(calls) <= 10 * 500

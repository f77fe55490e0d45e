"""chain_problems over many contracts: suggestions, and the names sorted once, not per contract."""

from __future__ import annotations

from typing import Any

import pytest

import hz.compiler.chains
from hz.compiler.chains import Link, chain_problems, cycles


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


def _after(job: str, *upstreams: str) -> Link:
    return Link(job, after=tuple((u, (f"{job}.yaml", 7, 11)) for u in upstreams))


def test_a_cycle_is_found_however_many_paths_come_before_it() -> None:
    """Attack on issue 26, hit 14: a step budget spent on 2^20 paths of a layered DAG named
    before the cycle let z-x <-> z-y compile (an endless after: loop on the worker)."""
    links = [
        _after(f"a-l{n:02}-{i}", *((f"a-l{n + 1:02}-0", f"a-l{n + 1:02}-1") if n < 19 else ()))
        for n in range(20)
        for i in (0, 1)
    ]
    links += [_after("z-x", "z-y"), _after("z-y", "z-x")]
    found = chain_problems(links)
    assert [(d.file, d.message) for d in found] == [
        ("z-x.yaml", "z-x depends on itself: z-x <- z-y <- z-x"),
        ("z-y.yaml", "z-y depends on itself: z-x <- z-y <- z-x"),
    ]


def test_each_group_of_jobs_that_depend_on_each_other_is_named_with_a_path() -> None:
    links = [
        _after("a", "c"),
        _after("b", "a"),
        _after("c", "b", "a"),  # a <- c <- a is the shortest through a
        _after("self", "self"),
        _after("x", "y"),
        _after("y", "x"),
        _after("free", "a"),  # depends on a cycle, is on none
    ]
    assert cycles({link.job: sorted(u for u, _ in link.after) for link in links}) == [
        ["a", "c"],
        ["self"],
        ["x", "y"],
    ]


def test_a_long_chain_and_a_long_cycle_are_linear() -> None:
    size = 20_000
    chain = {f"j{n}": [f"j{n + 1}"] for n in range(size)}
    assert cycles(chain) == []
    ring = {f"j{n:05}": [f"j{(n + 1) % size:05}"] for n in range(size)}
    (found,) = cycles(ring)
    assert (len(found), found[0], found[-1]) == (size, "j00000", "j19999")

"""Checks over the set of contracts compiled together: every job named in ``hz.after`` is one
of them (HZ610), and no job follows itself through others (HZ611, each cycle named with its
path, at each contract on it)."""

from __future__ import annotations

from dataclasses import dataclass

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ610, HZ611
from hz.runtime.artifacts.suggest import did_you_mean_suffix


@dataclass(frozen=True, slots=True)
class Link:
    """One contract's upstream jobs, with where each is named: (file, line, column)."""

    job: str
    after: tuple[tuple[str, tuple[str, int, int]], ...]


def chain_problems(links: list[Link]) -> list[Diagnostic]:
    names = {link.job for link in links}
    found: list[Diagnostic] = []
    for link in links:
        for upstream, (path, line, column) in link.after:
            if upstream not in names:
                found.append(
                    Diagnostic(
                        HZ610,
                        f"hz.after: no contract compiled with this one is named {upstream!r}"
                        + did_you_mean_suffix(upstream, sorted(names - {link.job})),
                        path,
                        line,
                        column,
                        hint="name the hz.name of a contract in the directories compiled",
                    )
                )
    graph = {link.job: [u for u, _ in link.after if u in names] for link in links}
    where = {link.job: dict(link.after) for link in links}
    for cycle in cycles(graph):
        shown = " after ".join([*cycle, cycle[0]])
        for index, job in enumerate(cycle):
            upstream = cycle[(index + 1) % len(cycle)]  # the job ``job`` follows
            path, line, column = where[job][upstream]
            found.append(
                Diagnostic(
                    HZ611,
                    f"hz.after: {job} is part of a cycle: {shown}",
                    path,
                    line,
                    column,
                    hint="a job must not be queued, through others, by its own completion: "
                    "remove one link of the cycle",
                )
            )
    return found


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Each elementary cycle once, as jobs each followed by a job it follows, starting at its
    smallest name (found by a depth-first walk; a job follows at most 16 others)."""
    found: set[tuple[str, ...]] = set()
    for start in sorted(graph):
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.add(tuple(path))
                elif nxt not in path and nxt > start and len(found) < 100:
                    stack.append((nxt, [*path, nxt]))
    return [list(cycle) for cycle in sorted(found)]

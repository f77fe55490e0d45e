"""Checks over the set of contracts compiled together. A job depends on another when it is
queued after it (``hz.after``) or reads its draft (``read: contract:NAME``):

- every job depended on is one of them (HZ610);
- no job depends on itself through others (HZ611: each cycle named with its path, at each
  contract on it);
- an input that reads a draft can hold it (HZ612): text for a ``markdown`` or ``text`` draft,
  the output schema's type for a ``json`` one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ610, HZ611, HZ612
from hz.runtime.artifacts.suggest import did_you_mean_suffix

#: Where a name is written: (file, line, column).
At = tuple[str, int, int]
#: The JSON types a schema's ``type`` may name.
_TYPES = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})
#: The most cycles reported: one per group of jobs that depend on each other.
MAX_CYCLES = 20


@dataclass(frozen=True, slots=True)
class Read:
    """An input that reads ``job``'s draft, with its schema and where its ``read`` is."""

    input: str
    job: str
    schema: Any
    at: At


@dataclass(frozen=True, slots=True)
class Link:
    """One contract's dependencies: the jobs it follows (with where each is named), the
    drafts it reads, and what its own draft is (format and schema)."""

    job: str
    after: tuple[tuple[str, At], ...] = ()
    reads: tuple[Read, ...] = ()
    output_format: str = "markdown"
    output_schema: Any = None
    #: Where ``hz.name`` is: a cycle through reads only is said there.
    named_at: At = ("", 1, 1)


def chain_problems(links: list[Link]) -> list[Diagnostic]:
    by_name = {link.job: link for link in links}
    found: list[Diagnostic] = []
    # The names to suggest from, sorted once and only when a name is unknown: sorting them
    # for every contract made a compile of n contracts O(n² log n) (10,000: about 20 s).
    names: list[str] = []

    def others(job: str) -> list[str]:
        if not names:
            names.extend(sorted(by_name))
        return [name for name in names if name != job]

    for link in links:
        for upstream, at in link.after:
            if upstream not in by_name:
                found.append(_unknown("hz.after", upstream, others(link.job), at))
        for read in link.reads:
            upstream_link = by_name.get(read.job)
            if upstream_link is None:
                where = f"hz.inputs.{read.input}.read"
                found.append(_unknown(where, read.job, others(link.job), read.at))
            else:
                found += _fits(read, upstream_link)
    graph: dict[str, dict[str, At]] = {}
    for link in links:
        edges = graph.setdefault(link.job, {})
        for read in link.reads:
            edges.setdefault(read.job, read.at)
        for upstream, at in link.after:
            edges[upstream] = at
    graph = {
        job: {u: at for u, at in edges.items() if u in by_name} for job, edges in graph.items()
    }
    for cycle in cycles({job: sorted(edges) for job, edges in graph.items()}):
        shown = " <- ".join([*cycle, cycle[0]])
        for index, job in enumerate(cycle):
            upstream = cycle[(index + 1) % len(cycle)]  # a job ``job`` depends on
            path, line, column = graph[job][upstream]
            found.append(
                Diagnostic(
                    HZ611,
                    f"{job} depends on itself: {shown}",
                    path,
                    line,
                    column,
                    hint="a job must not be queued by, or read the draft of, a job that depends "
                    "on it: remove one link of the cycle",
                )
            )
    return found


def _unknown(where: str, name: str, others: list[str], at: At) -> Diagnostic:
    return Diagnostic(
        HZ610,
        f"{where}: no contract compiled with this one is named {name!r}"
        + did_you_mean_suffix(name, others),
        *at,
        hint="name the hz.name of a contract in the directories compiled together",
    )


def _types(schema: Any) -> set[str] | None:
    """The JSON types a schema allows at its top level, None when it does not say (or says
    in a way not read here: the draft is checked when it is read)."""
    if schema is False:
        return set()
    if not isinstance(schema, dict):
        return None
    names = schema.get("type")
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not all(n in _TYPES for n in names):
        return None
    found = set(names)
    return found | {"integer"} if "number" in found else found


def _fits(read: Read, upstream: Link) -> list[Diagnostic]:
    wanted = _types(read.schema)
    if wanted is None:
        return []
    if upstream.output_format in ("markdown", "text"):
        given: set[str] = {"string"}
        what = f"a {upstream.output_format} draft (a string)"
    else:
        declared = _types(upstream.output_schema)
        if declared is None:
            return [] if wanted else [_mismatch(read, upstream, "a JSON draft")]
        given = declared
        what = f"a JSON draft of type {' or '.join(sorted(given))}"
    if given & wanted:
        return []
    return [_mismatch(read, upstream, what)]


def _mismatch(read: Read, upstream: Link, what: str) -> Diagnostic:
    allowed = _types(read.schema) or set()
    says = "no value" if not allowed else " or ".join(sorted(allowed))
    return Diagnostic(
        HZ612,
        f"hz.inputs.{read.input}: {upstream.job} writes {what}, and the input's schema "
        f"takes {says}",
        *read.at,
        hint=f"make the input's schema take what {upstream.job} writes, or change its output",
    )


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """One cycle of each strongly connected component that has one (at most ``MAX_CYCLES``),
    as jobs each followed by a job it depends on, starting at the component's smallest name.

    The components are Tarjan's (linear in jobs and links, always complete: a cycle is never
    missed for a budget spent elsewhere); a component's cycle is the shortest from its
    smallest name back to it (a breadth-first search inside the component)."""
    found = [_cycle_in(graph, component) for component in _components(graph)]
    return sorted(cycle for cycle in found if cycle is not None)[:MAX_CYCLES]


def _components(graph: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, at = work.pop()
            if at == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            edges = graph.get(node, ())
            for position in range(at, len(edges)):
                nxt = edges[position]
                if nxt not in index:
                    work.append((node, position + 1))
                    work.append((nxt, 0))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                if low[node] == index[node]:
                    component: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    out.append(component)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return out


def _cycle_in(graph: dict[str, list[str]], component: set[str]) -> list[str] | None:
    """The shortest cycle through the component's smallest name; None for a lone job that
    does not depend on itself."""
    start = min(component)
    if len(component) == 1 and start not in graph.get(start, ()):
        return None
    parent: dict[str, str] = {}
    queue = [start]
    for node in queue:  # the queue grows as the search goes
        for nxt in graph.get(node, ()):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1]
            if nxt in component and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None  # pragma: no cover - a component of two or more always has a cycle

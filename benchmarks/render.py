"""Time one render in its bounded child process (as hz renders) against the same render in
process, without the child's limits: what the isolation costs.

    .venv/bin/python benchmarks/render.py [--repeat 30]

The template loops over 50 input items. The two sides alternate so load from other processes
hits both alike. Prints median and best wall time and the median CPU time (this process and its
children) of each. A measurement, not a test: exit status 0.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import hz.compiler.render.bound
from hz.compiler.render.packet import TemplatePlace, render_prompt

TEMPLATE = (
    "Draft the status for {{ inputs.week }}.\n"
    "{% for issue in inputs.issues %}- {{ issue.title }} ({{ issue.labels | join(', ') }})\n"
    "{% endfor %}"
)
VALUES = {
    "week": "2026-W48",
    "issues": [{"title": f"issue {n}", "labels": ["bug", "ui"]} for n in range(50)],
}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _once(isolated: bool) -> tuple[float, float]:
    hz.compiler.render.bound.ISOLATED = isolated
    cpu, started = _cpu(), time.perf_counter()
    prompt, problems = render_prompt(TEMPLATE, VALUES, TemplatePlace("bench"))
    wall = time.perf_counter() - started
    assert prompt is not None, problems
    return wall, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    sides: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(args.repeat + 1):  # the first round warms caches and is dropped
        for isolated in (True, False):
            sides[isolated].append(_once(isolated))
    print(f"one render, {args.repeat} runs each")
    for isolated, label in ((False, "in process"), (True, "bounded child")):
        walls = [w for w, _ in sides[isolated][1:]]
        cpus = [c for _, c in sides[isolated][1:]]
        print(
            f"  {label:<14} wall median {statistics.median(walls) * 1000:6.1f} ms"
            f"  best {min(walls) * 1000:6.1f} ms"
            f"   CPU median {statistics.median(cpus) * 1000:6.1f} ms"
        )


if __name__ == "__main__":
    main()

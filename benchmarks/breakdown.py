"""Where ``hz validate`` spends its time: imports (fresh processes) and each stage per file.

    .venv/bin/python benchmarks/breakdown.py [--count 500] [--repeat 5]

Imports are timed incrementally in the order ``hz validate`` performs them, in fresh
interpreters (best of --repeat). Stages are timed in-process over generated contracts: the
first file separately (it pays one-time costs such as compiling the contract schema), then
the mean of the rest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_contracts import generate

REPO = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# In the order `hz validate FILE` imports them (see hz/cli/validate.py).
IMPORTS = [
    "click",
    "hz.cli",
    "hz.cli.validate",
    "hz.compiler.report.formats",
    "hz.compiler.validate",
    "hz.compiler.load.loader",
    "hz.compiler.checks.structure",
    "hz.compiler.checks.structure_code",  # the contract schema as generated code
    "hz.compiler.checks.io_schemas",
    "regex",  # a pattern in an input schema: the ECMA-262 engine (jsonschema only on errors)
    "jinja2",
    "hz.compiler.checks.template",
]

IMPORT_PROBE = """
import sys, time
out = []
for name in sys.argv[1:]:
    t = time.perf_counter()
    __import__(name)
    out.append(time.perf_counter() - t)
print(" ".join(f"{x:.6f}" for x in out))
"""


def import_costs(repeat: int) -> list[float]:
    best = [float("inf")] * len(IMPORTS)
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE, *IMPORTS],
            cwd=REPO,
            env=ENV,
            capture_output=True,
            text=True,
            check=True,
        )
        best = [min(b, float(x)) for b, x in zip(best, proc.stdout.split(), strict=True)]
    return best


def stages() -> list[tuple[str, Callable[[Any], Any]]]:
    from hz.compiler.checks.io_schemas import check_inputs, check_output
    from hz.compiler.checks.limits import check_max_usd, check_timeout, check_version
    from hz.compiler.checks.structure import check_structure
    from hz.compiler.checks.template import check_template

    return [
        ("version gate", check_version),
        ("schema (fast path)", check_structure),
        ("timeout + max_usd", lambda d: (check_timeout(d), check_max_usd(d, 100.0))),
        ("input/output schemas", lambda d: (check_inputs(d), check_output(d))),
        ("template (scan, else jinja2)", check_template),
    ]


def stage_costs(files: list[Path]) -> tuple[dict[str, float], dict[str, float]]:
    from hz.compiler.load.loader import load_path

    first: dict[str, float] = {}
    total: dict[str, float] = {}
    steps = stages()
    for i, path in enumerate(files):
        t = time.perf_counter()
        doc, _ = load_path(path)
        spent = {"load (yaml)": time.perf_counter() - t}
        assert doc is not None, path
        for name, step in steps:
            t = time.perf_counter()
            step(doc)
            spent[name] = time.perf_counter() - t
        for name, seconds in spent.items():
            if i == 0:
                first[name] = seconds
            else:
                total[name] = total.get(name, 0.0) + seconds
    rest = max(len(files) - 1, 1)
    return first, {name: seconds / rest for name, seconds in total.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    startup = min(_run_time([sys.executable, "-c", "pass"]) for _ in range(args.repeat))
    print(f"interpreter startup (python -c pass): {startup * 1000:7.1f} ms")
    print("imports, incremental, in the order hz validate performs them (best of runs):")
    costs = import_costs(args.repeat)
    for name, seconds in zip(IMPORTS, costs, strict=True):
        print(f"  {name:30s} {seconds * 1000:7.1f} ms")
    print(f"  {'total':30s} {sum(costs) * 1000:7.1f} ms")
    with tempfile.TemporaryDirectory(prefix="hz-breakdown-") as tmp:
        files = generate(Path(tmp), args.count)
        first, mean = stage_costs(files)
    print(f"stages per file over {args.count} contracts: first file | mean of the rest")
    for name in first:
        print(f"  {name:30s} {first[name] * 1000:7.2f} ms | {mean.get(name, 0) * 1000:6.3f} ms")
    print(
        f"  {'total':30s} {sum(first.values()) * 1000:7.2f} ms"
        f" | {sum(mean.values()) * 1000:6.3f} ms"
    )
    return 0


def _run_time(argv: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, env=ENV, check=True)
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())

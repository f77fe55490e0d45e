"""Time the whole ``hz validate`` process against ``check-jsonschema`` on the same files.

    .venv/bin/python benchmarks/validate.py [--repeat 9] [--contract contracts/x.yaml]

(a) one contract; (b) a directory of 500 generated, varied, valid contracts (check-jsonschema
gets the same 500 files as arguments: it does not walk directories). The two tools run
alternately so that load from other processes on the machine hits both alike. Prints the
best and the median wall time of each and the ratios hz / check-jsonschema, against the
targets (a) ≤ 1.0× and (b) ≤ 0.5×. Exit status 0 even when a target is missed: this is a
measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_contracts import generate

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SCHEMA = REPO / "schemas" / "workflow-contract.schema.json"
# Measure what an installed tool does: with bytecode caching. With PYTHONDONTWRITEBYTECODE set
# (as in some shells and containers), every run would recompile hz's own modules (~25 ms).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return elapsed


def compare(label: str, hz: list[str], other: list[str], repeat: int, target: float) -> float:
    hz_times: list[float] = []
    other_times: list[float] = []
    # One warm-up each (page cache, .pyc files), not counted.
    timed(hz, REPO)
    timed(other, REPO)
    for _ in range(repeat):
        hz_times.append(timed(hz, REPO))
        other_times.append(timed(other, REPO))
    hz_best, hz_med = min(hz_times), statistics.median(hz_times)
    cj_best, cj_med = min(other_times), statistics.median(other_times)
    ratio = hz_med / cj_med
    verdict = "meets" if ratio <= target else "MISSES"
    print(f"{label}")
    print(f"  hz validate       best {hz_best:6.3f} s   median {hz_med:6.3f} s")
    print(f"  check-jsonschema  best {cj_best:6.3f} s   median {cj_med:6.3f} s")
    print(
        f"  ratio hz/cj       best {hz_best / cj_best:5.2f}x    median {ratio:5.2f}x"
        f"   target <= {target:.1f}x: {verdict}"
    )
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs per tool and case")
    parser.add_argument("--count", type=int, default=500, help="contracts in case (b)")
    parser.add_argument(
        "--contract",
        type=Path,
        default=REPO / "contracts" / "weekly-digest.yaml",
        help="the single contract of case (a)",
    )
    args = parser.parse_args()
    hz = [str(BIN / "hz"), "validate"]
    cj = [str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA)]
    startup = min(timed([sys.executable, "-c", "pass"], REPO) for _ in range(5))
    print(f"python startup (python -c pass, best of 5): {startup:.3f} s")
    print(f"{args.repeat} timed runs per tool, alternating, after one warm-up each\n")
    compare(
        f"(a) one contract: {args.contract.relative_to(REPO)}",
        [*hz, str(args.contract)],
        [*cj, str(args.contract)],
        args.repeat,
        1.0,
    )
    with tempfile.TemporaryDirectory(prefix="hz-bench-") as tmp:
        directory = Path(tmp) / "contracts"
        files = generate(directory, args.count)
        print()
        compare(
            f"(b) {args.count} generated contracts in one directory",
            [*hz, str(directory)],
            [*cj, *map(str, files)],
            args.repeat,
            0.5,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

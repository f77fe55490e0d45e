"""``hz validate`` of many files forks children for shares of them (compiler/fanout.py): the
same verdicts, in the same order, as one process — also when a child dies or hits a bug.
Real processes: the fork is the point, and a test process with threads never forks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from gen_contracts import generate  # noqa: E402

PROBE = """
import json, os, sys
from hz.compiler import fanout

directory, mode = sys.argv[1], sys.argv[2]
forks = []
fork = fanout._fork
def counting(serial, share, *rest):
    forks.append(len(share))
    return fork(serial, share, *rest)
fanout._fork = counting
parent = os.getpid()
each = fanout.validate_each
def faulty(share, **kw):
    if os.getpid() != parent and mode == "die":
        os._exit(9)
    if mode == "bug" and any(name.endswith("contract-150.yaml") for name in share):
        raise RuntimeError("a bug")
    return each(share, **kw)
fanout.validate_each = faulty
try:
    one = fanout.check_paths([directory], processes=1) if mode != "bug" else None
    many = fanout.check_paths([directory], processes=2)
except RuntimeError as e:
    print(json.dumps(["raised", str(e), forks]))
else:
    print(json.dumps([forks, one == many, len(many.names), len(many.diagnostics)]))
"""


def _probe(directory: Path, mode: str = "") -> list[object]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(directory), mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    answer: list[object] = json.loads(result.stdout)
    return answer


def _corpus(tmp_path: Path, count: int) -> Path:
    """``count`` generated contracts and every regular invalid case (diagnostics in every
    share)."""
    directory = tmp_path / "contracts"
    generate(directory, count)
    for case in sorted((REPO / "tests" / "cases" / "invalid").glob("*.yaml")):
        if case.is_file() and not case.is_symlink():
            shutil.copyfile(case, directory / f"z-{case.name}")
    return directory


def test_many_files_are_split_and_give_the_serial_verdicts(tmp_path: Path) -> None:
    forks, same, names, diagnostics = _probe(_corpus(tmp_path, 200))
    assert sum(forks) > 100  # a child checked a share
    assert same is True
    assert names >= 200  # and the one invalid case with only a warning
    assert diagnostics > 50


def test_few_files_are_not_split(tmp_path: Path) -> None:
    directory = tmp_path / "contracts"
    generate(directory, 20)
    assert _probe(directory) == [[], True, 20, 0]


def test_a_child_that_dies_costs_only_time(tmp_path: Path) -> None:
    forks, same, names, _ = _probe(_corpus(tmp_path, 200), "die")
    assert forks
    assert same is True
    assert names >= 200


def test_a_bug_in_a_childs_share_is_raised_by_the_parent(tmp_path: Path) -> None:
    raised, message, forks = _probe(_corpus(tmp_path, 200), "bug")
    assert (raised, message) == ("raised", "a bug")
    assert forks

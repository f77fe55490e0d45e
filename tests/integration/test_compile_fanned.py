"""``hz compile`` of many contracts split over forked processes (compile_fanned): the same job
files, summary and diagnostics as one process; a name given twice across the shares, or an
invalid contract in a child's share, writes nothing. Real processes: the fork is the point,
and a test process with threads never forks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.contracts import contract

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from pathlib import Path
from hz.compiler import fanout
from hz.compiler.compile import compile_fanned
from hz.compiler.jobdir import JobWriter

contracts, out, processes = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
forks = []
fork = fanout._fork
def counting(work, share, *rest):
    forks.append(len(share))
    return fork(work, share, *rest)
fanout._fork = counting
writer = JobWriter(out)
run = compile_fanned([contracts], writer, processes=processes)
summary = writer.commit() if not run.failed else writer.abort()
print(json.dumps({
    "forks": forks,
    "compiled": run.compiled,
    "diagnostics": [[d.code, d.file, d.message] for d in run.diagnostics],
    "written": None if summary is None else [p.name for p in summary.written],
}))
"""


def compile_in(tmp_path: Path, out: str, processes: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "contracts", out, str(processes)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def project(tmp_path: Path, count: int = 250) -> None:
    (tmp_path / "hz.toml").touch()
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    for n in range(count):
        text = contract(f"job-{n:03d}", timeout=f"{30 + n}s", rule=f"Rule {n}.")
        (contracts / f"c{n:03d}.yaml").write_text(text, encoding="utf-8")


def test_two_processes_write_what_one_writes(tmp_path: Path) -> None:
    project(tmp_path)
    one = compile_in(tmp_path, "one", 1)
    two = compile_in(tmp_path, "two", 2)
    assert (one["forks"], two["forks"]) == ([], [124])  # the first file, then 125 + 124
    assert one["compiled"] == two["compiled"] == 250
    assert one["written"] == two["written"] == [f"job-{n:03d}.job.json" for n in range(250)]
    for n in range(250):
        name = f"job-{n:03d}.job.json"
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == one["written"]  # no staging


def test_a_name_given_twice_across_the_shares_writes_nothing(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "contracts" / "c249.yaml").write_text(contract("job-000"), encoding="utf-8")
    two = compile_in(tmp_path, "out", 2)
    assert two["forks"] == [124]
    message = "two contracts are named 'job-000': contracts/c000.yaml and contracts/c249.yaml"
    assert two["diagnostics"] == [
        ["HZ601", "contracts/c000.yaml", message],
        ["HZ601", "contracts/c249.yaml", message],
    ]
    assert (two["compiled"], two["written"]) == (0, None)
    assert not (tmp_path / "out").exists()


def test_an_invalid_contract_in_a_childs_share_writes_nothing(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "contracts" / "c240.yaml").write_text("hz: {}\n", encoding="utf-8")
    two = compile_in(tmp_path, "out", 2)
    assert two["forks"] == [124]
    assert two["diagnostics"]
    assert all(file == "contracts/c240.yaml" for _, file, _ in two["diagnostics"])
    # Reported as one process reports it.
    assert two["diagnostics"] == compile_in(tmp_path, "again", 1)["diagnostics"]
    assert (two["compiled"], two["written"]) == (0, None)
    assert not (tmp_path / "out").exists()

"""Snapshots of the job every example contract in contracts/ compiles to, via the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from hz.runtime.artifacts.models import Job, read_artifact

REPO = Path(__file__).resolve().parents[2]
#: Both forms: *.yaml and Markdown (*.md, *.prose.md).
EXAMPLES = sorted([*(REPO / "contracts").glob("*.yaml"), *(REPO / "contracts").glob("*.md")])


def stem(path: Path) -> str:
    """``weekly.prose.md`` -> ``weekly``: the contract's name, and its inputs file's."""
    return path.name.split(".")[0]


@pytest.fixture(scope="module")
def jobs_by_source(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The text of each compiled job, keyed by its contract's path in the repository."""
    out = tmp_path_factory.mktemp("jobs")
    done = subprocess.run(
        [sys.executable, "-m", "hz", "compile", "contracts", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = {}
    for path in out.glob("*.job.json"):
        job = read_artifact(path)
        assert isinstance(job, Job)
        found[job.source.path] = path.read_text(encoding="utf-8")
    return found


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("contract", EXAMPLES, ids=[stem(p) for p in EXAMPLES])
def test_example_job(
    contract: Path, jobs_by_source: dict[str, str], snapshot: SnapshotAssertion
) -> None:
    assert jobs_by_source[f"contracts/{contract.name}"] == snapshot

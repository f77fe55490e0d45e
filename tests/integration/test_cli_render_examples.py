"""Snapshots of the packet every example contract renders to with its example inputs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from hz.runtime.artifacts.models import Packet, parse_artifact

REPO = Path(__file__).resolve().parents[2]
#: Both forms: *.yaml and Markdown (*.md, *.prose.md).
EXAMPLES = sorted([*(REPO / "contracts").glob("*.yaml"), *(REPO / "contracts").glob("*.md")])


def stem(path: Path) -> str:
    """``weekly.prose.md`` -> ``weekly``: the contract's name, and its inputs file's."""
    return path.name.split(".")[0]


def test_every_example_has_inputs() -> None:
    missing = [
        p.name for p in EXAMPLES if not (REPO / "contracts/inputs" / f"{stem(p)}.json").exists()
    ]
    assert missing == []


@pytest.mark.parametrize("contract", EXAMPLES, ids=[stem(p) for p in EXAMPLES])
def test_example_packet(hz_argv: list[str], contract: Path, snapshot: SnapshotAssertion) -> None:
    inputs = REPO / "contracts" / "inputs" / f"{stem(contract)}.json"
    rel = contract.relative_to(REPO)
    done = subprocess.run(
        [*hz_argv, "render", str(rel), "--inputs", str(inputs.relative_to(REPO))],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == snapshot
    packet = parse_artifact(done.stdout, "stdout")
    assert isinstance(packet, Packet)

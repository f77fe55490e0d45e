"""An owner in another pid namespace on the same machine id and boot (attack on issue 21, H2):
``unshare --pid`` gives hz run pid 1 of its own; another hz outside sees pid 1 as its own init,
started at another time. It must judge that owner by its lease, not by a pid that names
another process here: the run stays ``running`` and completes. Root only (unshare --pid); CI
runs as root."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.ledger_env import space, until

pytestmark = [
    pytest.mark.serial,
    pytest.mark.child_coverage,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("unshare") is None,
        reason="unshare --pid needs root and util-linux",
    ),
]


def test_an_owner_in_another_pid_namespace_is_alive_while_its_lease_is(tmp_path: Path) -> None:
    release = tmp_path / "release"  # the agent runs until the test is done looking
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", f"--until={release}")
    argv = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "hz"]
    owner = subprocess.Popen(
        [*argv, "run", "greet.yaml", "--input", "who=Ann", "--no-receipt", "-q"],
        cwd=s.root,
        env=s.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def running() -> bool:
        try:
            return [r["state"] for r in s.rows()] == ["running"]
        except sqlite3.OperationalError:  # the ledger not made yet, or being made
            return False

    try:
        until(running, what="the run running")
        [row] = s.rows()
        assert row["owner_pid"] == 1  # its own namespace's init, as unshare --fork makes it
        listed = s.hz("runs", "list")
        assert (listed.returncode, listed.stderr) == (0, "")
        assert [r["state"] for r in s.rows()] == ["running"]
        release.touch()
        out, err = owner.communicate(timeout=60)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.communicate()
    assert (owner.returncode, out, err) == (0, "Say hi to Ann.\n", "")
    assert [r["state"] for r in s.rows()] == ["completed"]
    assert len(s.starts()) == 1

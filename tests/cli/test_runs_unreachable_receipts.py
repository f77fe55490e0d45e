"""A run settled by reconciliation whose receipt directory cannot be reached (attack on issue
21, H5): another user's directory on a shared PostgreSQL ledger, an unmounted disk, a stale NFS
handle. Looking at the directory failed with an OSError that nothing caught: every command —
``hz worker`` too — exited 3, again at each try (the take-over was committed, the settling
not). The run now settles without its receipt, and its timeline says why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hz.runtime.ledger.store import Ceilings, Ledger, Owner
from tests.conftest import Cli


def test_a_receipt_directory_that_cannot_be_looked_at_leaves_the_run_settled(
    hz: Cli, tmp_path: Path
) -> None:
    done = hz("submit", "greet.yaml", "--input", "who=Ann")
    run_id = done.stdout.strip()
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    me = Owner.this_process()
    dead = Owner(f"gone:{child.stdout.strip()}", int(child.stdout), 1, me.boot, pidns=me.pidns)
    store = Ledger(tmp_path / "s" / "ledger.sqlite3")
    _, generation = store.claim_next(dead) or ("", 0)
    store.prepare(run_id, generation, "echo", "d")
    assert store.dispatch(run_id, generation, Ceilings()) is None
    # A directory hz cannot even look at: its lstat fails (as EACCES, ESTALE or EIO would;
    # ENAMETOOLONG fails so for root too).
    unreachable = tmp_path / ("x" * 300) / "receipts"
    with store.tx() as c:
        c.execute("UPDATE runs SET receipt_dir = ? WHERE id = ?", (str(unreachable), run_id))
    store.close()
    why = (
        f"no receipt: cannot write a receipt in {unreachable}: [Errno 36] File name too long: "
        f"'{unreachable}'"
    )
    detail = f"owner {dead.name} is gone; the agent may have run; {why}"
    listed = hz("runs", "list")
    assert (listed.returncode, listed.stderr) == (
        0,
        f"hz: reconciled {run_id}: dispatching -> uncertain: {detail}\n",
    )
    shown = json.loads(hz("runs", "show", run_id, "--format", "json").stdout)
    assert (shown["state"], shown["receipt"], shown["timeline"][-1]["detail"]) == (
        "uncertain",
        None,
        detail,
    )
    assert hz("worker", "--drain").returncode == 0

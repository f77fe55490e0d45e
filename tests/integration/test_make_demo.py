"""``make demo``, the README's first command, works on a clean clone and again after it: its
recipe's hz commands run twice in a copy of the repository's contracts, as real processes
(``$(BIN)/hz`` is this checkout's hz). Its runs are recorded in the demo's own state directory,
never in the user's run ledger."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from hz.runtime.ledger.store import Ledger
from tests.conftest import default_receipt_dir

REPO = Path(__file__).resolve().parents[2]


def demo_recipe() -> list[str]:
    """The shell lines of the Makefile's ``demo`` target, continuation lines joined."""
    text = (REPO / "Makefile").read_text().replace("\\\n", " ")
    body = re.search(r"^demo:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert body is not None
    return [line.strip() for line in body[1].splitlines()]


def test_make_demo_runs_twice(tmp_path: Path, hz_argv: list[str]) -> None:
    shutil.copytree(REPO / "contracts", tmp_path / "contracts")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    lines = [line.replace("$(BIN)/hz", shlex.join(hz_argv)) for line in demo_recipe()]
    assert lines[-1] == f"{shlex.join(hz_argv)} receipts verify build/receipts"
    for attempt in (1, 2):
        for line in lines:
            done = subprocess.run(
                ["sh", "-c", line],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, (attempt, line, done.stderr)
    assert done.stdout == "ok: 2 receipts in build/receipts, the chain is intact\n"
    ledger = Ledger(tmp_path / "build" / "state" / "ledger.sqlite3")
    assert [row.state for row in ledger.select()] == ["completed", "completed"]
    ledger.close()
    assert not default_receipt_dir().parent.exists()  # the user's state directory: untouched

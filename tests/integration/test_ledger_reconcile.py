"""Reconciliation from several processes at once: each run whose owner died is settled once,
by one of them; one retry per run that never started, one receipt per run that did."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.ledger_env import space

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

#: Takes every queued run as its owner, prepares each, dispatches every second one, and dies
#: without a word: three runs that never started and three that may have.
CRASH_WITH_SIX = """
import os
from hz.runtime.config.layers import load_config
from hz.runtime.ledger.session import ledger_for
from hz.runtime.ledger.store import Ceilings, Owner
ledger = ledger_for(load_config())
owner = Owner.this_process()
for n in range(6):
    run_id, generation = ledger.claim_next(owner)
    ledger.prepare(run_id, generation, "command", "digest")
    if n % 2:
        assert ledger.dispatch(run_id, generation, Ceilings()) is None
os._exit(0)
"""


def test_four_reconcilers_at_once_settle_each_run_once(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    ids = [s.submit(str(n)) for n in range(6)]
    crash = subprocess.run(
        [sys.executable, "-c", CRASH_WITH_SIX], env=s.env(), capture_output=True, text=True
    )
    assert crash.returncode == 0, crash.stderr
    reconcilers = [s.popen("runs", "reconcile", "--format", "json") for _ in range(4)]
    outputs = [p.communicate(timeout=60) for p in reconcilers]
    assert [p.returncode for p in reconcilers] == [0] * 4, [err for _, err in outputs]
    settled = [item for out, _ in outputs for item in json.loads(out)["settled"]]
    assert sorted((i["id"], i["was"], i["state"]) for i in settled) == sorted(
        (run_id, "dispatching" if n % 2 else "prepared", "uncertain" if n % 2 else "failed")
        for n, run_id in enumerate(ids)
    )
    rows = s.rows()
    old = {r["id"]: r for r in rows if r["id"] in ids}
    assert [(old[i]["state"], old[i]["failure_kind"]) for i in ids] == [
        ("uncertain", None) if n % 2 else ("failed", "not_started") for n in range(6)
    ]
    retries = [(r["retry_of"], r["attempt"], r["state"]) for r in rows if r["id"] not in ids]
    assert sorted(retries) == sorted((ids[n], 2, "queued") for n in (0, 2, 4))
    receipts = sorted((s.state / "receipts").glob("*.json"))
    assert [json.loads(p.read_text())["status"] for p in receipts] == ["uncertain"] * 3
    verified = s.cli("receipts", "verify", "state/receipts")
    assert verified.stdout == "ok: 3 receipts in state/receipts, the chain is intact\n"
    assert s.cli("runs", "reconcile").stdout == "nothing to reconcile\n"
    # The retries run once each; the uncertain runs never.
    assert s.cli("worker", "--drain").returncode == 0
    assert len(s.starts()) == 3

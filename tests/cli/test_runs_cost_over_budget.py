"""``hz runs cost`` says which budget stops spent more than their budget, and by how much."""

from __future__ import annotations

import json
from pathlib import Path

from hz.runtime.ledger.store import Ledger
from tests.conftest import Cli
from tests.helpers.ledger_cli import echo_space, ledger_file, poke
from tests.helpers.packets import make_packet


def test_a_budget_stop_that_overshot_is_named(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    ledger = Ledger(ledger_file(tmp_path))
    over, within, other = (
        ledger.create(make_packet(max_usd=0.05), key=k, workdir=tmp_path, receipt_dir=None)[0]
        for k in ("over", "within", "other")
    )
    ledger.close()
    ended = (
        "UPDATE runs SET state = ?, failure_kind = ?, cost_usd = ?, reserved_usd = ?, "
        "runner = 'claude-code', dispatched_at = 1767323045.0, job_name = ? WHERE id = ?"
    )
    poke(tmp_path, ended, ("budget", "budget_exceeded", 0.0712, 0.0712, "w\x1b[2J", over))
    poke(tmp_path, ended, ("budget", "budget_exceeded", 0.05, 0.05, "greet", within))
    poke(tmp_path, ended, ("completed", None, 0.09, 0.09, "greet", other))  # not a stop
    done = hz("runs", "cost", "--by", "runner", "--since", "2026-01-01")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "(runner)                  runs        cost    reserved  no cost\n"
        "claude-code                  3     $0.2112     $0.2112        0\n"
        f"over budget: {over} (w\\x1b[2J) spent $0.0712 against $0.05: the CLI checks between "
        "turns\n"
    )
    document = json.loads(hz("runs", "cost", "--by", "runner", "--format", "json").stdout)
    [group] = document["groups"]
    assert (group["over_budget_runs"], group["over_budget_usd"]) == (1, 0.0212)
    assert document["over_budget"] == [
        {
            "id": over,
            "job_name": "w\x1b[2J",
            "runner": "claude-code",
            "cost_usd": 0.0712,
            "max_usd": 0.05,
        }
    ]

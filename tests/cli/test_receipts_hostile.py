"""``hz receipts list`` on receipts edited by someone else: every value is shown on one line,
escaped, and no value of the wrong type is a crash."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli


def test_receipts_list_escapes_and_survives_edited_values(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    receipts = [
        {
            "started_at": "T\n::warning::x",
            "runner": "\x1b[31mred",
            "status": "failed",
            "failure_kind": "k\r",
            "cost_usd": "lots",
        },
        {
            "started_at": "T",
            "runner": "echo",
            "status": 5,
            "failure_kind": None,
            "cost_usd": {"a": 1},
        },
        {"status": "completed", "cost_usd": True},
        {"status": "completed", "cost_usd": 0.5},
    ]
    for number, receipt in enumerate(receipts, start=1):
        (tmp_path / f"r/00000{number}-a.json").write_text(json.dumps(receipt))
    done = cli("receipts", "list", "r", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "000001-a.json  T\\n::warning::x  \\x1b[31mred  failed (k\\r)  lots\n"
        "000002-a.json  T  echo  5  {'a': 1}\n"
        "000003-a.json  ?  ?  completed  True\n"
        "000004-a.json  ?  ?  completed  $0.5000\n"
    )

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


def test_a_huge_file_named_like_a_receipt_is_not_read(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    with open(tmp_path / "r/000001-a.json", "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # sparse: no disk, but reading it all costs memory
    done = cli("receipts", "verify", "r", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "FAILED 000001-a.json: larger than 16 MiB\n")
    listed = cli("receipts", "list", "r", cwd=tmp_path)
    assert (listed.returncode, listed.stdout) == (0, "000001-a.json  ?  ?  ?  ?\n")


def test_verify_escapes_a_key_planted_in_a_sealed_receipt(cli: Cli, tmp_path: Path) -> None:
    from hz.runtime.artifacts.canonical import digest_of
    from tests.helpers.contracts import GREET as CONTRACT

    (tmp_path / "greet.yaml").write_text(CONTRACT)
    (tmp_path / "operator.toml").write_text('[capabilities]\nagent_runner = "echo"\n')
    env = {"HZ_CONFIG": str(tmp_path / "operator.toml")}
    ran = cli(
        "run", "greet.yaml", "--input", "who=A", "-q", "--receipt-dir", "r", cwd=tmp_path, env=env
    )
    assert ran.returncode == 0, ran.stderr
    path = tmp_path / "r/000001-greet.json"
    receipt = json.loads(path.read_text())
    del receipt["digest"]
    receipt["x\n::warning::pwned"] = 1
    path.write_text(json.dumps({**receipt, "digest": digest_of(receipt)}))
    done = cli("receipts", "verify", "r", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        1,
        "FAILED 000001-greet.json: not in the receipt format (x\\n::warning::pwned: Extra inputs "
        "are not permitted)\n",
    )

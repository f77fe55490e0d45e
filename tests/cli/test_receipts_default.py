"""``hz receipts list|show|verify`` without a directory look where ``hz run`` chains its
receipts: ``[system.runner] receipt_dir``, else ``receipts/`` in the state directory."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli
from tests.helpers.ledger_cli import echo_space


def test_the_state_directorys_receipts_by_default(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    for who in ("Ann", "Bo"):
        assert hz("run", "greet.yaml", "--input", f"who={who}", "-q").returncode == 0
    home = tmp_path / "s" / "receipts"
    started = [
        json.loads((home / f"00000{n}-greet.json").read_text())["started_at"] for n in (1, 2)
    ]
    listed = hz("receipts", "list")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout == (
        f"000001-greet.json  {started[0]}  echo  completed  $0.0000\n"
        f"000002-greet.json  {started[1]}  echo  completed  $0.0000\n"
    )
    verified = hz("receipts", "verify")
    assert (verified.returncode, verified.stdout, verified.stderr) == (
        0,
        f"ok: 2 receipts in {home}, the chain is intact\n",
        "",
    )
    newest = hz("receipts", "show")
    assert newest.stdout.startswith("receipt 000002-greet.json\n")
    first = hz("receipts", "show", "1")  # a lone number: a receipt of the default directory
    assert first.stdout.startswith("receipt 000001-greet.json\n")
    (tmp_path / "2").write_text("{}")  # a file of that name is the file
    assert hz("receipts", "show", "2").stdout.startswith("receipt 2\n")
    assert hz("receipts", "show", str(home), "1").stdout == first.stdout


def test_the_configured_receipt_dir_by_default(cli: Cli, tmp_path: Path) -> None:
    chain = tmp_path / "chain"
    hz = echo_space(cli, tmp_path, f'[system.runner]\nreceipt_dir = "{chain}"\n')
    assert hz("run", "greet.yaml", "--input", "who=Ann", "-q").returncode == 0
    verified = hz("receipts", "verify")
    assert verified.stdout == f"ok: 1 receipt in {chain}, the chain is intact\n"
    assert not (tmp_path / "s" / "receipts").exists()


def test_no_receipts_yet(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    for args in (("list",), ("verify",), ("show",), ("show", "3")):
        done = hz("receipts", *args)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"hz: error: {tmp_path}/s/receipts: no receipts yet (hz run chains its receipts "
            "there)\n"
            "  hint: name the directory to look in another: hz receipts list DIR\n"
        )

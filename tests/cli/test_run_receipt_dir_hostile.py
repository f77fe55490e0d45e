"""``hz run`` writing into a receipt directory someone else filled: the chain's head is read
under a cap, only a regular file, and what is not a receipt hz wrote stops the receipt (exit 8,
the result printed), never a long read or a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import Cli
from tests.helpers.in_process import ECHO, hz

RUN = ("run", "greet.yaml", "--input", "who=A", "--format", "json", "-q")


def test_a_huge_file_at_the_head_of_the_chain_is_not_read(cli: Cli, work: Path) -> None:
    (work / "r").mkdir()
    with open(work / "r/000001-a.json", "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # sparse: no disk, but hashing it reads it all
    done = hz(cli, work, *RUN, "--receipt-dir", "r", config=ECHO)
    assert (done.returncode, json.loads(done.stdout)["status"]) == (8, "completed")
    assert done.stderr == (
        "hz: error: cannot write a receipt in r: 000001-a.json, the last receipt of its chain, "
        "cannot be read: larger than 16 MiB\n"
        "  hint: hz receipts verify r checks the chain; move the file away, or give another "
        "directory with --receipt-dir\n"
        "  hint: the run itself ended and its result is printed; only the receipt is missing\n"
    )
    assert sorted(p.name for p in (work / "r").iterdir()) == [".lock", "000001-a.json"]


def test_a_receipt_name_in_other_digits_is_no_receipt(cli: Cli, work: Path) -> None:
    (work / "r").mkdir()
    (work / "r/٠٠٠٠٠٩-a.json").write_text("{}")  # Arabic-Indic digits: no sequence 9
    done = hz(cli, work, *RUN, "--receipt-dir", "r", config=ECHO)
    assert (done.returncode, done.stderr) == (0, "")
    assert (work / "r/000001-greet.json").is_file()
    assert json.loads((work / "r/000001-greet.json").read_text())["previous_sha256"] is None


def test_a_huge_transcript_is_not_read(cli: Cli, work: Path) -> None:
    assert hz(cli, work, *RUN, "--receipt-dir", "r", config=ECHO).returncode == 0
    with open(work / "r/000001-greet.transcript.jsonl", "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)
    verified = hz(cli, work, "receipts", "verify", "r")
    assert (verified.returncode, verified.stdout) == (
        1,
        "FAILED 000001-greet.json: its transcript 000001-greet.transcript.jsonl cannot be read "
        "(larger than 16 MiB)\n",
    )
    shown = hz(cli, work, "receipts", "show", "r", "--transcript")
    assert (shown.returncode, shown.stderr) == (
        2,
        "hz: error: r/000001-greet.transcript.jsonl: cannot be read (larger than 16 MiB)\n",
    )


def test_a_receipt_file_that_is_a_fifo_is_refused_by_show(cli: Cli, work: Path) -> None:
    (work / "r").mkdir()
    os.mkfifo(work / "r/000001-a.json")
    shown = hz(cli, work, "receipts", "show", "r/000001-a.json")
    assert (shown.returncode, shown.stderr) == (
        2,
        "hz: error: r/000001-a.json: no such receipt or receipt directory\n",
    )


def test_a_receipt_the_operator_names_through_a_link_is_shown(cli: Cli, work: Path) -> None:
    assert hz(cli, work, *RUN, "--receipt-dir", "r", config=ECHO).returncode == 0
    (work / "latest.json").symlink_to("r/000001-greet.json")
    shown = hz(cli, work, "receipts", "show", "latest.json")
    assert (shown.returncode, shown.stdout.splitlines()[0]) == (0, "receipt latest.json")


def test_a_nul_in_a_configured_directory_is_a_configuration_error(cli: Cli, work: Path) -> None:
    for table, key in (("system.runner", "receipt_dir"), ("system", "state_dir")):
        config = ECHO + f'[{table}]\n{key} = "a\\u0000b"\n'
        done = hz(cli, work, *RUN, config=config, HZ_STATE_DIR="")
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"hz: error: {work}/operator.toml:4:1: [{table}] {key} must be a path (a non-empty "
            "string without a NUL character), got 'a\\x00b'\n"
        )


def test_the_directories_a_receipt_creates_are_private(cli: Cli, work: Path) -> None:
    # Without the ledger the receipt creates the state directory, which the ledger then shares:
    # its prompts and the transcripts must not be left readable by other users.
    done = hz(cli, work, *RUN, "--no-ledger", config=ECHO, HZ_STATE_DIR=str(work / "new/state"))
    assert (done.returncode, done.stderr) == (0, "")
    modes = [(work / p).stat().st_mode & 0o777 for p in ("new", "new/state", "new/state/receipts")]
    assert modes == [0o700, 0o700, 0o700]

"""``hz receipts show``: a receipt and its transcript, readable, from a file or a directory."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import Cli
from tests.helpers.in_process import ECHO, hz


def _two_runs(cli: Cli, work: Path) -> None:
    hz(cli, work, "run", "greet.yaml", "--input", "who=Ann", "-q", config=ECHO)
    hz(cli, work, "run", "greet.yaml", "--input", "who=Bo\x1b[2J", "-q", config=ECHO)


def test_show_the_newest_receipt_with_its_transcript(cli: Cli, work: Path) -> None:
    _two_runs(cli, work)
    done = hz(cli, work, "receipts", "show", "state/receipts", "--transcript")
    assert done.returncode == 0, done.stderr
    receipt, transcript = done.stdout.split("transcript 000002-greet.transcript.jsonl", 1)
    assert receipt.startswith("receipt 000002-greet.json\n  kind: receipt\n")
    assert "\n  sequence: 2\n" in receipt
    assert "\n  transcript_file: 000002-greet.transcript.jsonl\n" in receipt
    assert transcript == (
        " (echo: 1 event)\n"
        "end: completed, no exit code, 1 turn; usage: in 0, out 0, cache read 0, cache write 0\n"
        "  draft:\n"
        "    Say hi to Bo\\x1b[2J.\n"
    )


def test_show_a_numbered_receipt_as_json(cli: Cli, work: Path) -> None:
    _two_runs(cli, work)
    done = hz(cli, work, "receipts", "show", "state/receipts", "1", "--format", "json")
    document = json.loads(done.stdout)
    assert (done.returncode, document["file"], document["receipt"]["sequence"]) == (
        0,
        "state/receipts/000001-greet.json",
        1,
    )
    assert "transcript" not in document
    file_done = hz(
        cli, work, "receipts", "show", "state/receipts/000001-greet.json", "--transcript",
        "--format", "json",
    )  # fmt: skip
    shown = json.loads(file_done.stdout)["transcript"]
    assert [e["type"] for e in shown["events"]] == ["end"]
    assert shown["events"][0]["text"] == "Say hi to Ann.\n"


def test_show_refuses_what_is_not_there(cli: Cli, work: Path) -> None:
    _two_runs(cli, work)
    cases = {
        ("nope",): "hz: error: nope: no such receipt or receipt directory\n",
        ("state/receipts", "3"): "hz: error: state/receipts: no receipt with sequence 3 "
        "(there are 1 to 2)\n",
        ("state/receipts/000001-greet.json", "1"): "hz: error: state/receipts/000001-greet.json: "
        "a receipt file takes no receipt number\n",
    }
    for args, message in cases.items():
        done = hz(cli, work, "receipts", "show", *args)
        assert (done.returncode, done.stderr) == (2, message)


def test_a_changed_transcript_is_shown_with_a_warning(cli: Cli, work: Path) -> None:
    _two_runs(cli, work)
    path = work / "state/receipts" / "000001-greet.transcript.jsonl"
    path.write_text(re.sub("Ann", "Eve", path.read_text()))
    done = hz(cli, work, "receipts", "show", "state/receipts", "1", "--transcript")
    assert (done.returncode, done.stderr) == (
        1,
        "hz: warning: 000001-greet.transcript.jsonl does not match the receipt's "
        "transcript_sha256 (changed after the run)\n",
    )
    assert "    Say hi to Eve.\n" in done.stdout

"""Bytes that are not UTF-8 on hz's command line, as real processes receive them (argv and the
working directory are bytes; Python reads them with surrogate escapes): a checkout whose path
holds one is run and recorded losslessly, on both ledgers; a request key or a run id holding
one is refused with a message. None of them is an "unexpected error" (exit 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.ledger_env import Space, space

#: A directory name in Latin-1, as an old archive or another system wrote it.
CAFE = b"caf\xe9"


def hz(s: Space, cwd: bytes, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "hz", *args],
        cwd=cwd,
        env=s.env(),
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_a_checkout_whose_path_is_not_utf8_is_run_and_recorded(
    dsn: str | None, tmp_path: Path
) -> None:
    s = space(tmp_path, "inspect", "--prompt-file={prompt_file}", dsn=dsn)
    checkout = os.fsencode(tmp_path) + b"/" + CAFE
    os.mkdir(checkout)
    os.link(tmp_path / "greet.yaml", checkout + b"/greet.yaml")
    ran = hz(s, checkout, "run", "greet.yaml", "--input", "who=Ann", "--format", "json", "-q")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(json.loads(ran.stdout)["draft"])["cwd"] == os.fsdecode(checkout)
    # Queued with --workdir from elsewhere, run by a worker: the agent starts in that directory.
    queued = hz(s, os.fsencode(tmp_path), "submit", "greet.yaml", "--input", "who=Bo",
                "--workdir", checkout)  # fmt: skip
    assert queued.returncode == 0, queued.stderr
    worked = hz(s, os.fsencode(tmp_path), "worker", "--drain")
    assert worked.returncode == 0, worked.stderr
    listed = hz(s, os.fsencode(tmp_path), "runs", "list", "--format", "json")
    documents = json.loads(listed.stdout)["runs"]
    assert [(d["state"], d["workdir"]) for d in documents] == [
        ("completed", os.fsdecode(checkout)),  # "…/caf\udce9", as Python names those bytes
        ("completed", os.fsdecode(checkout)),
    ]
    assert [json.loads(d["result"]["draft"])["cwd"] for d in documents] == [
        os.fsdecode(checkout)
    ] * 2
    shown = hz(s, os.fsencode(tmp_path), "runs", "show", documents[1]["id"])
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.decode().splitlines()
    assert f"workdir:     {tmp_path}/caf\\udce9" in lines
    # Stored as text both ledgers take: the path's file URI, its bytes percent-encoded.
    assert {r["workdir"] for r in s.rows()} == {f"file://{tmp_path}/caf%E9"}
    # A retry copies the request as it is stored (through the typed row, which reads the
    # path back), and runs in that very directory.
    here = os.fsencode(tmp_path)
    queued = hz(s, here, "submit", "greet.yaml", "--input", "who=Cy", "--workdir", checkout)
    assert hz(s, here, "runs", "cancel", queued.stdout.decode().strip()).returncode == 0
    retried = hz(s, here, "runs", "retry", queued.stdout.decode().strip())
    assert retried.returncode == 0, retried.stderr
    assert hz(s, here, "worker", "--drain").returncode == 0
    rows = s.rows()
    assert [r["workdir"] for r in rows] == [f"file://{tmp_path}/caf%E9"] * 4
    assert json.loads(json.loads(rows[3]["result_json"])["draft"])["cwd"] == os.fsdecode(checkout)


@pytest.mark.child_coverage
def test_a_request_key_or_run_id_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}")
    here = os.fsencode(tmp_path)
    keyed = hz(s, here, "run", "greet.yaml", "--input", "who=Ann", "--request-key", b"\xff")
    assert (keyed.returncode, keyed.stdout) == (2, b"")
    assert keyed.stderr.decode().endswith(
        "Error: Invalid value for --request-key: the key holds the byte \\xff, which is not "
        "UTF-8, at character 1; a request key is 1 to 256 letters, digits, punctuation marks, "
        "symbols and spaces (not at either end); no control or invisible characters\n"
    )
    shown = hz(s, here, "runs", "show", b"run_\xff")
    assert (shown.returncode, shown.stdout) == (2, b"")
    assert shown.stderr.decode().endswith(
        "Error: Invalid value for 'RUN_ID': 'run_\\udcff' is not a run id (run_, a date as "
        "YYYYMMDD, _ and 12 hexadecimal digits, as hz runs list shows them)\n"
    )
    assert not s.state.exists()  # refused before the ledger was opened

"""The line a batch (``hz run -j``) and ``hz worker`` print for each finished run names what
finished: the job and the file it was made from (relative to where hz runs when under it),
escaped; the worker says on stderr that it started, where and with how many slots."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.helpers.ledger_cli import echo_space, poke, worker_started

#: A file name a user can make: an escape sequence and a newline in it.
HOSTILE = "x\x1b[31m\nz.yaml"
SHOWN = "x\\x1b[31m\\nz.yaml"


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    made = echo_space(cli, tmp_path)
    (tmp_path / "sub").mkdir()
    shutil.copy(tmp_path / "greet.yaml", tmp_path / "sub" / "greet.yaml")
    shutil.copy(tmp_path / "greet.yaml", tmp_path / HOSTILE)
    return made


def ids(hz: Cli) -> list[str]:
    listed = json.loads(hz("runs", "list", "--format", "json").stdout)["runs"]
    return [run["id"] for run in reversed(listed)]  # oldest first


def test_a_batch_names_each_runs_job_and_file(hz: Cli, tmp_path: Path) -> None:
    done = hz("run", "-j", "1", "greet.yaml", "sub/greet.yaml", HOSTILE, "--input", "who=A")
    assert (done.returncode, done.stderr) == (0, "")
    first, second, third = ids(hz)
    assert done.stdout == (
        f"{first}  completed  greet  greet.yaml\n"
        f"{second}  completed  greet  sub/greet.yaml\n"
        f"{third}  completed  greet  {SHOWN}\n"
    )


def test_a_file_outside_the_directory_is_named_in_full(
    hz: Cli, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "greet.yaml"
    shutil.copy(tmp_path / "greet.yaml", elsewhere)
    done = hz("run", "-j", "1", str(elsewhere), "../" + tmp_path.name + "/greet.yaml",
              "--input", "who=A")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    first, second = ids(hz)
    assert done.stdout == (
        f"{first}  completed  greet  {elsewhere}\n{second}  completed  greet  greet.yaml\n"
    )


def test_a_worker_says_it_started_and_names_what_finished(hz: Cli, tmp_path: Path) -> None:
    for target in ("sub/greet.yaml", HOSTILE):
        assert hz("submit", target, "--input", "who=B").returncode == 0
    first, second = ids(hz)
    poke(tmp_path, "UPDATE runs SET job_name = ? WHERE id = ?", ("job\x07\u202e", second))
    done = hz("worker", "--drain", "-j", "1")
    assert done.returncode == 0
    assert done.stderr == worker_started(tmp_path / "s")
    assert done.stdout == (
        f"{first}  completed  greet  sub/greet.yaml\n"
        f"{second}  completed  job\\x07\\u202e  {SHOWN}\n"
    )
    shown = hz("runs", "show", first).stdout.splitlines()
    assert shown[5:7] == [f"workdir:     {tmp_path}", f"from:        {tmp_path}/sub/greet.yaml"]
    document = json.loads(hz("runs", "show", second, "--format", "json").stdout)
    assert document["target"] == str(tmp_path / HOSTILE)


def test_the_start_line_names_the_queues_and_the_slots(hz: Cli, tmp_path: Path) -> None:
    done = hz("worker", "--drain", "-j", "3", "--queue", "reviews", "--queue", "nightly")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == worker_started(tmp_path / "s", 3, "queues reviews, nightly")
    one = hz("worker", "--drain", "--queue", "reviews")
    assert one.stderr == worker_started(tmp_path / "s", 1, "queue reviews")


def test_a_retry_keeps_the_file_it_was_made_from(hz: Cli, tmp_path: Path) -> None:
    assert hz("submit", "sub/greet.yaml", "--input", "who=B").returncode == 0
    [run_id] = ids(hz)
    assert hz("runs", "cancel", run_id).returncode == 0
    retried = hz("runs", "retry", run_id, "--format", "json")
    assert json.loads(retried.stdout)["target"] == str(tmp_path / "sub" / "greet.yaml")


def test_what_the_lines_quote_from_outside_is_escaped(hz: Cli, tmp_path: Path) -> None:
    """A state directory named with an escape and a newline, a target recorded as the URI of
    bytes that are not UTF-8 (or edited to one): escaped, every one."""
    state = tmp_path / "st\x1b[2J\nx"
    assert hz("submit", "greet.yaml", "--input", "who=B", HZ_STATE_DIR=str(state)).returncode == 0
    ledger = state / "ledger.sqlite3"
    with contextlib.closing(sqlite3.connect(ledger)) as c:
        c.execute("UPDATE runs SET target = ?", (f"file://{tmp_path}/x%FF%1b.yaml",))
        c.commit()
        [run_id] = [row[0] for row in c.execute("SELECT id FROM runs")]
    done = hz("worker", "--drain", HZ_STATE_DIR=str(state))
    assert done.stderr == (
        f"hz: worker: started: sqlite ledger {tmp_path}/st\\x1b[2J\\nx/ledger.sqlite3, every "
        "queue, 1 slot\n"
    )
    assert done.stdout == f"{run_id}  completed  greet  x\\udcff\\x1b.yaml\n"

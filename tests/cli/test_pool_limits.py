"""How many runs one pool may take at once, and a machine that refuses a thread: a usage or
configuration error, or one line naming what needed the thread — never exit 3, never a run
taken and left behind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from hz.runtime.ledger.store import Ledger
from tests.conftest import CliResult

HINT = (
    "  hint: the system's limit on threads is reached (ulimit -u, a container's pids.max, "
    "memory): run fewer at once (-j, [system] max_parallel) or raise the limit\n"
)


def refuse_threads(monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    """``Thread.start`` fails for threads named ``prefix``…, as on a machine out of threads."""
    start = threading.Thread.start

    def refusing(thread: threading.Thread) -> None:
        if thread.name.startswith(prefix):
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", refusing)


@pytest.mark.parametrize("command", ["run", "worker"])
def test_jobs_are_capped_as_the_worker_caps_them(
    hz: Callable[..., CliResult], command: str
) -> None:
    done = hz(command, "-j", "257", *(["greet.yaml"] if command == "run" else []))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "Error: Invalid value for '-j' / '--jobs': 257 is not in the range 1<=x<=256."
    )


def test_max_parallel_is_capped_the_same(hz: Callable[..., CliResult]) -> None:
    done = hz("worker", "--drain", HZ_SYSTEM__MAX_PARALLEL="257")
    assert (done.returncode, done.stderr) == (
        2,
        "hz: error: environment variable HZ_SYSTEM__MAX_PARALLEL: [system] max_parallel must "
        "be an integer from 1 to 256, got 257\n"
        "  hint: each run holds two threads and an agent: a machine takes a few hundred\n",
    )


def test_a_slot_the_machine_refuses_ends_the_batch_before_any_run(
    hz: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    refuse_threads(monkeypatch, "hz-slot-2")
    done = hz("run", "-j", "4", "greet.yaml", "greet.yaml", "--input", "who=A", "--force-new")
    assert (done.returncode, done.stderr) == (
        2,
        "hz: error: cannot start a thread for run slot 3 of 4: can't start new thread\n" + HINT,
    )
    assert Ledger(tmp_path / "s" / "ledger.sqlite3").select("1 = 1", ()) == []


def test_a_watcher_the_machine_refuses_fails_the_run_before_its_agent(
    hz: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    refuse_threads(monkeypatch, "hz-watch-")
    done = hz("run", "greet.yaml", "--input", "who=A")
    [row] = Ledger(tmp_path / "s" / "ledger.sqlite3").select("1 = 1", ())
    assert (done.returncode, done.stderr) == (
        2,
        f"hz: error: cannot start a thread for watching run {row.id}: can't start new "
        "thread\n" + HINT,
    )
    assert (row.state, row.failure_kind, row.dispatched_at is not None) == (
        "failed",
        "not_started",
        True,
    )

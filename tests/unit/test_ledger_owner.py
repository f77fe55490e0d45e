"""The owner of a run, in process: automatic retries only where nothing ran."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.result import AgentResult, ToolCall
from hz.runtime.ledger import host
from hz.runtime.ledger.cancel import cancel
from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.foreground import Request, run_foreground
from hz.runtime.ledger.owner import MAX_BACKOFF, Binding, Policy, Slots, Told, backoff, run_owned
from hz.runtime.ledger.reconcile import reconcile
from hz.runtime.ledger.store import Ceilings, Ledger, Owner, StaleOwner
from hz.runtime.ledger.worker import Pool, from_queue
from hz.runtime.runners.protocol import RunRequest
from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.clock import FakeClock
from tests.helpers.operator import command_binding
from tests.helpers.packets import make_packet


class Scripted:
    """A runner that answers with the given results in order."""

    name = "scripted"

    def __init__(self, results: list[AgentResult]) -> None:
        self.results = results
        self.calls = 0

    def run(self, request: RunRequest) -> AgentResult:
        self.calls += 1
        return self.results.pop(0)


def limited(**extra: Any) -> AgentResult:
    return AgentResult(
        runner="scripted",
        status="failed",
        failure_kind="rate_limited",
        retry_after_seconds=0.05,
        **extra,
    )


DONE = AgentResult(runner="scripted", status="completed", draft="ok")


def run_with(
    new_ledger: Any, tmp_path: Path, results: list[AgentResult], attempts: int
) -> tuple[Ledger, Scripted, str]:
    runner = Scripted(results)
    ledger = new_ledger()
    outcome = run_foreground(
        ledger,
        Request(make_packet(), "k", tmp_path, None, False),
        binding=Binding(runner, "scripted", ""),
        policy=Policy(max_attempts=attempts),
    )
    return ledger, runner, outcome.state


def test_a_rate_limit_before_any_tool_is_retried(
    new_ledger: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger, runner, state = run_with(new_ledger, tmp_path, [limited(), limited(), DONE], 3)
    assert (state, runner.calls) == ("completed", 3)
    rows = ledger.select()
    assert [(r.attempt, r.state, r.retry_of) for r in rows] == [
        (1, "failed", None),
        (2, "failed", rows[0].id),
        (3, "completed", rows[1].id),
    ]


def test_a_retrys_backoff_is_waited_on_the_clock_it_is_given(
    new_ledger: Any, tmp_path: Path
) -> None:
    """A minute's backoff passes on an injected clock without a minute of real time; the
    lease is renewed along the way, as it would be."""
    runner = Scripted([limited().model_copy(update={"retry_after_seconds": 60.0}), DONE])
    ledger, clock = new_ledger(), FakeClock()
    begun = time.monotonic()
    outcome = run_foreground(
        ledger,
        Request(make_packet(), "k", tmp_path, None, False),
        binding=Binding(runner, "scripted", ""),
        policy=Policy(max_attempts=3),
        clock=clock,
    )
    assert (outcome.state, runner.calls) == ("completed", 2)
    assert time.monotonic() - begun < 30
    assert sum(clock.slept) >= 60.0  # waited on the clock: past the minute (120 s at most)
    assert max(clock.slept) <= ledger.lease_seconds / 3  # in slices, renewing the lease


def test_retries_stop_at_max_attempts(new_ledger: Any, tmp_path: Path) -> None:
    _, runner, state = run_with(new_ledger, tmp_path, [limited(), limited(), DONE], 2)
    assert (state, runner.calls) == ("failed", 2)


def test_a_rate_limit_after_a_tool_ran_is_not_retried(
    new_ledger: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    after_tool = limited(tool_calls=(ToolCall(name="Read"),))
    _, runner, state = run_with(new_ledger, tmp_path, [after_tool, DONE], 3)
    assert (state, runner.calls) == ("failed", 1)


@pytest.mark.parametrize(
    ("status", "failure_kind"),
    [
        ("timeout", None),
        ("budget", "budget_exceeded"),
        ("failed", "runtime_error"),
        ("failed", "auth_misconfigured"),
        ("uncertain", None),
        ("cancelled", "aborted"),
    ],
)
def test_no_other_ending_is_retried(
    new_ledger: Any, tmp_path: Path, status: str, failure_kind: str | None
) -> None:
    ended = AgentResult(
        runner="scripted", status=status, failure_kind=failure_kind, retry_after_seconds=0.05
    )  # type: ignore[arg-type]
    ledger, runner, state = run_with(new_ledger, tmp_path, [ended, DONE], 3)
    assert (state, runner.calls) == (status, 1)
    assert [(r.attempt, r.state) for r in ledger.select()] == [(1, status)]


def test_backoff_follows_retry_after_capped_with_jitter() -> None:
    assert 5.0 <= backoff(1, 5.0) <= 5.5
    assert 2.0 <= backoff(1, None) <= 2.2
    assert 8.0 <= backoff(3, None) <= 8.8
    assert MAX_BACKOFF <= backoff(1, 3600.0) <= MAX_BACKOFF * 1.1


# -- with real agent processes (the command runner and the fake agent), in process ----------


def owned(ledger: Ledger, workdir: Path, receipt_dir: Path | None) -> tuple[str, int]:
    """A new run of the test packet, owned by this process."""
    return ledger.create(
        make_packet(), key="k", workdir=workdir, receipt_dir=receipt_dir, adopt=Owner.this_process()
    )


def started(tmp_path: Path, count: int = 1) -> None:
    deadline = time.monotonic() + 30
    pids = tmp_path / "pids"
    while not (pids.exists() and len(recorded_pids(pids)) >= count):
        assert time.monotonic() < deadline, "the agent did not start"
        time.sleep(0.05)


@pytest.mark.serial
def test_a_cancel_from_another_thread_stops_a_stubborn_agent(
    new_ledger: Any, tmp_path: Path
) -> None:
    binding = command_binding(tmp_path, "stubborn")
    ledger = new_ledger()
    run_id, generation = owned(ledger, tmp_path, tmp_path / "r")
    outcome: list[object] = []
    # The agent ignores SIGTERM; how long the grace is before SIGKILL is not the point here.
    policy = Policy(kill_grace=0.2)
    owner = threading.Thread(
        target=lambda: outcome.append(
            run_owned(ledger, run_id, generation, binding=binding, policy=policy)
        )
    )
    owner.start()
    started(tmp_path, 2)
    # The agent and its helper run, but the owner may not have recorded it yet (a cancel
    # that lands before that record kills the group as it starts: the next test).
    deadline = time.monotonic() + 30
    while ledger.get(run_id).state != "running":
        assert time.monotonic() < deadline, "the running record was not committed"
        time.sleep(0.05)
    begun = time.monotonic()
    row = cancel(ledger, run_id, grace=0.2)
    owner.join(timeout=15)
    assert time.monotonic() - begun < 10
    assert (row.state, row.failure_kind) == ("cancelled", "aborted")
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(tmp_path / "pids"))
    result = row.result
    assert result is not None
    assert result["reason"] == "cancelled (hz runs cancel); the run's processes were killed"


@pytest.mark.serial
def test_a_cancel_committed_before_the_running_record_kills_the_agent_as_it_starts(
    new_ledger: Any, tmp_path: Path
) -> None:
    """The cancel is on record once the run is dispatching, before the agent spawns: the owner
    finds it as it records ``running`` and kills the new group at once (no grace)."""
    binding = command_binding(tmp_path, "stubborn")
    ledger, other = new_ledger(), new_ledger()
    run_id, generation = owned(ledger, tmp_path, tmp_path / "r")

    def cancel_now(_: object) -> None:
        with other.tx() as c:
            c.execute("UPDATE runs SET cancel_requested_at = ? WHERE id = ?", (time.time(), run_id))
            other.event(c, run_id, "cancel", "cancel requested")

    begun = time.monotonic()
    outcome = run_owned(
        ledger, run_id, generation, binding=binding, policy=Policy(), on_owned=cancel_now
    )
    assert time.monotonic() - begun < 10
    assert (outcome.state, outcome.failure_kind) == ("cancelled", "aborted")
    assert outcome.result is not None
    assert outcome.result.reason == "cancelled as the agent started; its group was killed"
    row = ledger.get(run_id)
    assert (row.state, row.failure_kind) == ("cancelled", "aborted")
    pids = tmp_path / "pids"
    assert all(is_gone(int(str(p["pid"]))) for p in (recorded_pids(pids) if pids.exists() else []))


@pytest.mark.serial
def test_a_worker_pool_stops_and_cancels_what_runs(new_ledger: Any, tmp_path: Path) -> None:
    binding = command_binding(tmp_path, "sleep")
    ledger = new_ledger()
    run_id, _ = ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
    done: list[str] = []
    pool = Pool(
        ledger,
        Slots(2, binding, Policy()),
        from_queue(),
        Told(on_done=lambda outcome: done.append(outcome.state)),
    )
    worker = threading.Thread(target=pool.run)
    worker.start()
    started(tmp_path)
    pool.stop("the worker got SIGTERM")
    worker.join(timeout=15)
    assert done == ["cancelled"]
    timeline = [(e.state, e.detail) for e in ledger.events(run_id)]
    assert ("cancel", "the worker got SIGTERM") in timeline


@pytest.mark.serial
def test_reconcile_kills_an_orphaned_group_and_removes_its_private_dir(
    new_ledger: Any, tmp_path: Path
) -> None:
    ledger = new_ledger()
    run_id, _ = ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    me = Owner.this_process()
    dead = Owner("gone:1", int(child.stdout), 1, me.boot, pidns=me.pidns)
    _, generation = ledger.claim_next(dead) or ("", 0)
    ledger.prepare(run_id, generation, "command", "d")
    assert ledger.dispatch(run_id, generation, Ceilings()) is None
    orphan = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, "
            "signal.SIG_IGN); print('ready', flush=True); time.sleep(3600)",
        ],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    assert orphan.stdout is not None
    assert orphan.stdout.readline() == b"ready\n"
    private = Path(tempfile.mkdtemp(prefix="hz-test-"))
    ledger.spawned(run_id, generation, orphan.pid, orphan.pid)
    ledger.private_dir(run_id, generation, private)
    try:
        # The orphan ignores SIGTERM: the kill grace passes on a clock that skips it.
        [settled] = reconcile(ledger, clock=FakeClock())
        assert settled.state == "uncertain"
        assert settled.detail.endswith(
            "its process group was killed; its private directory was removed"
        )
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert not private.exists()
        assert host.group_members(orphan.pid) == []
    finally:
        if orphan.poll() is None:
            os.killpg(orphan.pid, signal.SIGKILL)
        orphan.wait()
        orphan.stdout.close()


def test_a_cancel_settles_within_its_ceiling_on_the_clock_it_is_given(
    new_ledger: Any, tmp_path: Path
) -> None:
    """An owner that lives but never settles (stalled): the canceller waits out its ceiling on
    an injected clock, then settles the run itself, uncertain; no real seconds pass."""
    ledger = new_ledger()
    run_id, generation = owned(ledger, tmp_path, None)
    ledger.prepare(run_id, generation, "command", "d")
    assert ledger.dispatch(run_id, generation, Ceilings()) is None
    clock = FakeClock()
    begun = time.monotonic()
    row = cancel(ledger, run_id, clock=clock)
    assert time.monotonic() - begun < 5
    assert clock.now - 1000.0 >= 10.0 - 2 * 2.0 - 1.0  # the ceiling's wait, on the clock
    assert (row.state, row.failure_kind) == ("uncertain", None)
    me = Owner.this_process().name
    assert ledger.events(run_id)[-1].detail == (
        f"cancelled; owner {me} did not settle it within the ceiling"
    )


def test_a_run_cancelled_before_dispatch_is_never_spawned(new_ledger: Any, tmp_path: Path) -> None:
    binding = command_binding(tmp_path, "echo", "--prompt-file={prompt_file}")
    ledger = new_ledger()
    run_id, generation = owned(ledger, tmp_path, None)
    cancel(ledger, run_id)
    with pytest.raises(StaleOwner):
        run_owned(ledger, run_id, generation, binding=binding, policy=Policy())
    assert not (tmp_path / "pids").exists()


def test_a_missing_workdir_fails_the_run_as_not_started(new_ledger: Any, tmp_path: Path) -> None:
    binding = command_binding(tmp_path, "echo")
    ledger = new_ledger()
    run_id, generation = owned(ledger, tmp_path / "gone", None)
    with pytest.raises(HzError):
        run_owned(ledger, run_id, generation, binding=binding, policy=Policy())
    row = ledger.get(run_id)
    assert (row.state, row.failure_kind) == ("failed", "not_started")


def test_a_database_away_as_a_claimed_run_is_first_read_is_waited_out(
    new_ledger: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The owner's first read of the run it claimed is tried again as its records up to
    dispatching are: given up, the run would stay claimed, never renewed, and be failed as
    not started once its lease lapsed (a PostgreSQL restart between a claim and that read)."""
    ledger, clock, runner = new_ledger(), FakeClock(), Scripted([DONE])
    run_id, generation = owned(ledger, tmp_path, None)
    read = Ledger.get
    away = [LedgerUnavailable("the database is restarting")]

    def get(self: Ledger, run: str) -> Any:
        if away:
            raise away.pop()
        return read(self, run)

    monkeypatch.setattr(Ledger, "get", get)
    outcome = run_owned(
        ledger,
        run_id,
        generation,
        binding=Binding(runner, "scripted", ""),
        policy=Policy(),
        clock=clock,
    )
    assert (outcome.state, runner.calls, away) == ("completed", 1, [])
    assert ledger.get(run_id).state == "completed"
    assert clock.slept[:1] == [0.1]  # waited on the clock it was given


class Interrupting(Scripted):
    """A runner interrupted (Ctrl-C) before it could return, after reporting progress."""

    def __init__(self, turns: int) -> None:
        super().__init__([])
        self.turns = turns

    def run(self, request: RunRequest) -> AgentResult:
        from hz.runtime.runners.protocol import Progress

        if request.progress is not None and self.turns:
            request.progress(Progress(elapsed_seconds=0.1, turns=self.turns, tool_calls=1))
        raise KeyboardInterrupt


@pytest.mark.serial
@pytest.mark.parametrize(("turns", "state"), [(0, "cancelled"), (2, "cancelled")])
def test_an_owner_interrupted_inside_the_runner_settles_by_what_it_saw(
    new_ledger: Any, tmp_path: Path, turns: int, state: str
) -> None:
    ledger = new_ledger()
    run_id, generation = owned(ledger, tmp_path, tmp_path / "r")
    binding = Binding(Interrupting(turns), "scripted", "")
    outcome = run_owned(ledger, run_id, generation, binding=binding, policy=Policy())
    assert outcome.state == state
    assert outcome.result is not None
    assert outcome.result.reason == "hz was interrupted (SIGINT); the run's processes were killed"
    [receipt] = (tmp_path / "r").glob("*.json")
    assert json.loads(receipt.read_text())["status"] == state
    events = [(e.state, e.detail) for e in ledger.events(run_id)]
    assert ("cancel", "hz was interrupted (SIGINT)") in events

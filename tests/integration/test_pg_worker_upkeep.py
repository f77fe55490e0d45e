"""What an hz worker on PostgreSQL keeps in order beside running jobs: a run held for a spend
ceiling waits with one new job (never a retried one), procrastinate jobs left ``doing`` by an
outage are finished once their run is terminal, a listener that stops hearing notifications is
replaced, and the day of a ceiling is the database's day."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hz.runtime.ledger.owner import Binding, Policy, Slots, Told
from hz.runtime.ledger.pg.db import PgDb
from hz.runtime.ledger.pg.dispatch import Procrastinate
from hz.runtime.ledger.pg.listener import worker_app
from hz.runtime.ledger.pg.worker import PgWorker, WorkerOptions
from hz.runtime.ledger.store import Ceilings, Ending, Hold, Ledger, Owner
from tests.helpers.ledger_env import Space, pg_rows, space, until
from tests.helpers.packets import make_packet
from tests.helpers.workers import running_worker

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

CEILING = 'command_output = "json"\n[system.budget]\nmax_usd_per_day = 1.0\n'


def submit(s: Space, who: str) -> str:
    done = s.cli("submit", "greet.yaml", "--input", f"who={who}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def sql(dsn: str, query: str, *params: object) -> list[Any]:
    return pg_rows(dsn, query, params)


def jobs_of(dsn: str, run_id: str) -> list[tuple[int, str, int]]:
    rows = sql(
        dsn,
        "SELECT id, status::text AS status, attempts FROM procrastinate_jobs "
        "WHERE args->>'run_id' = %s ORDER BY id",
        run_id,
    )
    return [(int(r["id"]), str(r["status"]), int(r["attempts"])) for r in rows]


def timeline(s: Space, run_id: str) -> list[str]:
    assert s.dsn is not None
    rows = sql(s.dsn, "SELECT state, detail FROM events WHERE run_id = %s ORDER BY seq", run_id)
    return [f"{r['state']}: {r['detail']}" for r in rows]


def test_a_held_run_waits_with_one_new_job_never_a_retried_one(tmp_path: Path, pg_dsn: str) -> None:
    """Held for a spend ceiling, the run's job ends and a new one, due at the next look,
    takes its place in the same transaction: hz's row names it, the old one is gone, nothing
    was retried (attempts 0). A cancel reaches the job that waits: the looks are 5 s apart, so
    the job still waits when the cancel comes (with the default first wait of 1 s, a slow
    `hz runs cancel` could find the worker looking, and the job ending as its task did)."""
    waits = "hold_wait_min_seconds = 5\n"
    s = space(
        tmp_path, "json", "--cost=0.1", "--delay=30", max_usd=0.6, extra=CEILING + waits, dsn=pg_dsn
    )
    first = submit(s, "Ann")
    with running_worker(s, "-j", "2") as worker:
        until(lambda: s.rows("id = %s AND state = 'running'", (first,)), what="the first run")
        second = submit(s, "Bo")
        [row] = s.rows("id = %s", (second,))
        original = int(row["job_id"])

        def replaced() -> Any:
            [now] = s.rows("id = %s", (second,))
            if now["job_id"] is None or int(now["job_id"]) == original:
                return None
            found = jobs_of(pg_dsn, second)
            return found if found == [(int(now["job_id"]), "todo", 0)] else None

        [(job, _, _)] = until(replaced, ceiling=15, what="the held run's job replaced")
        assert job > original
        assert [line for line in timeline(s, second) if "waiting" in line] == [
            "queued: waiting: reserving $0.60 would cross [system.budget] max_usd_per_day of "
            "$1.00 ($0.60 reserved or spent today)"
        ]
        cancelled = s.cli("runs", "cancel", second)
        assert cancelled.returncode == 0, cancelled.stderr
        [row] = s.rows("id = %s", (second,))
        assert row["state"] == "cancelled"
        assert jobs_of(pg_dsn, second) == [(int(row["job_id"]), "cancelled", 0)]
        assert worker.stop() == 0
    assert (worker.stdout, worker.stderr) == (
        f"{first}  cancelled (aborted)  greet  greet.yaml\n",
        s.worker_started(slots=2),
    )
    assert len(s.starts()) == 1


def edit(dsn: str, query: str, *params: object) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SET search_path TO hz, public")
        c.execute(query, params)  # type: ignore[arg-type]


def worker_row(dsn: str, silent_for: float) -> int:
    [row] = sql(
        dsn,
        "INSERT INTO procrastinate_workers (last_heartbeat) VALUES "
        "(now() - make_interval(secs => %s)) RETURNING id",
        silent_for,
    )
    return int(row["id"])


def test_jobs_left_doing_after_an_outage_end_as_their_run_ended(
    tmp_path: Path, pg_dsn: str
) -> None:
    """A worker whose finish failed during a long outage leaves its job ``doing`` while hz's
    row is terminal. Reconciliation ends such jobs as their run ended — only a silent
    worker's, or one whose run ended as long ago, and never the job of a run that is live."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn)
    ids = [submit(s, who) for who in ("Ann", "Bo", "Cy", "Di", "Ge")]
    done = s.cli("worker", "--drain")
    assert done.returncode == 0, done.stderr
    completed, cancelled, fresh, live, forgotten = ids
    # A held run's looker that could not end after handing the run to a newer job (here the
    # one reconciliation gives a run whose row names none: the next command's).
    held = submit(s, "Ed")
    [row] = s.rows("id = %s", (held,))
    looker = int(row["job_id"])
    edit(pg_dsn, "UPDATE runs SET job_id = NULL WHERE id = %s", held)
    # A queued run's own job, taken by a silent worker: the run is live, its job untouched.
    own = submit(s, "Fy")
    [row] = s.rows("id = %s", (held,))
    newer = int(row["job_id"])
    assert newer != looker
    silent, alive = worker_row(pg_dsn, 3600), worker_row(pg_dsn, 0)
    edit(pg_dsn, "UPDATE runs SET state = 'cancelled' WHERE id = %s", cancelled)
    # ``live`` is running on another host, its lease renewed: nobody may judge it.
    edit(
        pg_dsn,
        "UPDATE runs SET state = 'running', ended_at = NULL, owner = 'elsewhere:1', "
        "owner_pid = 1, owner_boot = 'b', owner_host = 'elsewhere', "
        "lease_until = extract(epoch from now()) + 3600 WHERE id = %s",
        live,
    )
    # ``forgotten`` ended long ago: its worker, alive, lost the finish it could not write.
    edit(pg_dsn, "UPDATE runs SET ended_at = ended_at - 3600 WHERE id = %s", forgotten)
    for run_id, worker in (
        (completed, silent),
        (cancelled, silent),
        (fresh, alive),
        (forgotten, alive),
    ):
        edit(
            pg_dsn,
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s "
            "WHERE args->>'run_id' = %s",
            worker,
            run_id,
        )
    for run_id in (live, held, own):
        edit(
            pg_dsn,
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = NULL "
            "WHERE args->>'run_id' = %s",
            run_id,
        )
    reconciled = s.cli("runs", "reconcile")
    assert (reconciled.returncode, reconciled.stderr) == (0, "")
    assert [jobs_of(pg_dsn, run_id)[0][1] for run_id in ids] == [
        "succeeded",
        "aborted",
        "doing",  # its worker is alive: it finishes its own job
        "doing",  # its run is live
        "succeeded",
    ]
    assert s.rows("id = %s", (live,))[0]["state"] == "running"
    assert (jobs_of(pg_dsn, held), jobs_of(pg_dsn, own)[0][1]) == (
        [(looker, "succeeded", 1), (newer, "doing", 0)],
        "doing",
    )
    [row] = s.rows("id = %s", (held,))
    assert (row["state"], row["owner"], row["job_id"]) == ("queued", None, newer)


def listeners(dsn: str) -> list[int]:
    rows = sql(
        dsn,
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND query LIKE 'LISTEN %%' ORDER BY pid",
    )
    return [int(r["pid"]) for r in rows]


def probing_worker(pg_dsn: str) -> tuple[Ledger, PgWorker, list[str]]:
    """A worker that runs no agent and probes its listener every 0.3 s; what it notes and
    every job error land in the list."""
    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    notes: list[str] = []
    pg = PgWorker(
        ledger,
        worker_app(pg_dsn),
        Slots(1, Binding(runner=None, name="none", settings_digest=""), Policy()),  # type: ignore[arg-type]
        Told(lambda outcome: None, lambda run_id, error: notes.append(f"{run_id}: {error}")),
        options=WorkerOptions(probe_every=0.3),
        on_settled=lambda settled: None,
        note=notes.append,
    )
    return ledger, pg, notes


def test_a_listener_that_hears_nothing_is_cut_and_made_anew(pg_dsn: str) -> None:
    """The listener's server process stopped (SIGSTOP: its connection hangs, nothing is
    raised): the worker's probe goes unheard, the connection is cut, procrastinate listens on
    a new one — the worker itself keeps running. A listener whose connection is killed outright
    (``pg_terminate_backend``) is made anew by procrastinate alone."""
    ledger, pg, notes = probing_worker(pg_dsn)
    stopped: list[int] = []

    async def eventually(condition: Any, what: str) -> Any:
        deadline = time.monotonic() + 20
        while not (found := await asyncio.to_thread(condition)):
            assert time.monotonic() < deadline, (what, notes)
            await asyncio.sleep(0.05)
        return found

    async def scenario() -> None:
        pg._wake = asyncio.Event()
        supervisor = asyncio.create_task(pg._supervise())
        [first] = await eventually(lambda: listeners(pg_dsn), "a listener")
        worker = pg._worker
        os.kill(first, signal.SIGSTOP)
        stopped.append(first)
        await eventually(lambda: [p for p in listeners(pg_dsn) if p != first], "a new listener")
        assert notes == [
            "hz: worker: procrastinate's listener heard nothing for 0.3 s; its connection "
            "was cut and is made anew"
        ]
        assert pg._worker is worker  # the same procrastinate worker, never stopped
        [second] = [p for p in listeners(pg_dsn) if p != first]
        sql(pg_dsn, "SELECT pg_terminate_backend(%s)", second)
        await eventually(
            lambda: [p for p in listeners(pg_dsn) if p not in (first, second)], "a third"
        )
        await asyncio.sleep(1.0)  # three probes, each heard
        assert len(notes) == 1, notes
        assert pg._worker is worker
        pg.stop("the test is over")
        await asyncio.wait_for(supervisor, timeout=20)

    try:
        asyncio.run(scenario())
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        ledger.close()


def test_a_released_reservation_wakes_a_held_runs_job_at_once(pg_dsn: str, tmp_path: Path) -> None:
    """A run that ends below its reservation makes the held runs' jobs due and notifies the
    listening workers as a new job does: one that polls only every 30 s takes the job within
    a second."""
    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    me = Owner.this_process()
    ceilings = Ceilings(per_day=0.6)  # make_packet's budget is $0.50: one at a time
    ahead, generation = ledger.create(
        make_packet(), key="a", workdir=tmp_path, receipt_dir=None, adopt=me
    )
    ledger.prepare(ahead, generation, "echo", "d")
    assert ledger.dispatch(ahead, generation, ceilings) is None
    held, _ = ledger.create(make_packet(), key="h", workdir=tmp_path, receipt_dir=None)
    [row] = sql(pg_dsn, "SELECT job_id FROM runs WHERE id = %s", held)
    until_ = ledger.hold(held, Hold(ceilings, "echo"), job_id=int(row["job_id"]))
    assert until_ is not None
    # As a run held for a while is: its next look 30 s away (its first job was the looker).
    edit(pg_dsn, "DELETE FROM procrastinate_jobs WHERE id = %s", int(row["job_id"]))
    edit(
        pg_dsn,
        "UPDATE procrastinate_jobs SET scheduled_at = now() + interval '30 seconds' "
        "WHERE id = (SELECT job_id FROM runs WHERE id = %s)",
        held,
    )
    app = worker_app(pg_dsn)
    taken: list[tuple[str, float]] = []

    @app.task(name="hz.run")
    def run(run_id: str) -> None:
        taken.append((run_id, time.monotonic()))

    async def scenario() -> float:
        async with app.open_async():
            worker = asyncio.create_task(
                app.run_worker_async(
                    fetch_job_polling_interval=30,
                    listen_notify=True,
                    install_signal_handlers=False,
                )
            )
            deadline = time.monotonic() + 20
            while not listeners(pg_dsn):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # its first fetch found nothing due
            assert taken == []
            released = time.monotonic()
            await asyncio.to_thread(
                ledger.finish, ahead, generation, Ending("completed", cost_usd=0.0)
            )
            while not taken and time.monotonic() < released + 5:
                await asyncio.sleep(0.02)
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
            return released

    try:
        released = asyncio.run(scenario())
    finally:
        ledger.close()
    assert [run_id for run_id, _ in taken] == [held]
    assert taken[0][1] - released < 1.0


def test_notifications_forged_by_any_role_leave_the_listener_listening(
    pg_dsn: str, tmp_path: Path
) -> None:
    """Any role that may connect may NOTIFY on procrastinate's channels: payloads that are not
    procrastinate's are ignored: the worker neither stops nor loses its listener, whose own
    probes are still heard."""
    ledger, pg, notes = probing_worker(pg_dsn)

    async def scenario() -> None:
        pg._wake = asyncio.Event()
        supervisor = asyncio.create_task(pg._supervise())
        deadline = time.monotonic() + 20
        while not (found := await asyncio.to_thread(listeners, pg_dsn)):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        worker = pg._worker
        for payload in (
            "not json",
            "[" * 7000,
            "[]",
            '"x"',
            "{}",
            '{"type": 5}',
            '{"type": "abort_job_requested"}',
            '{"type": "abort_job_requested", "job_id": "1"}',
            '{"type": "hz_listener_probe", "token": "guess"}',
            '{"type": "job_inserted"}',
            '{"type": "job_inserted", "x": ' + "[" * 3000 + "]" * 3000 + "}",  # typed, deep
        ):
            for channel in ("procrastinate_any_queue_v1", "procrastinate_queue_v1#default"):
                await asyncio.to_thread(sql, pg_dsn, "SELECT pg_notify(%s, %s)", channel, payload)
        await asyncio.sleep(1.0)  # three probes, each heard
        assert (pg._worker, await asyncio.to_thread(listeners, pg_dsn)) == (worker, found)
        assert notes == []
        pg.stop("the test is over")
        await asyncio.wait_for(supervisor, timeout=20)

    try:
        asyncio.run(scenario())
    finally:
        ledger.close()

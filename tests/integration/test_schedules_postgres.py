"""Schedules on PostgreSQL through procrastinate's periodic task (``hz.runtime.ledger.pg.ticks``):
real workers' supervisors on a real database, the tick every second instead of every minute,
the slots on an injected clock the test moves a minute at a time. Two firing workers and one
that fires nothing: each slot has one run (ledger rows), the worker without schedules never
takes a tick, a restart catches up per catch_up, a clock jumped back fires nothing twice."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from hz.runtime.artifacts.models import Job
from hz.runtime.artifacts.schedule import Schedule
from hz.runtime.ledger.owner import Binding, Policy, Slots, Told
from hz.runtime.ledger.pg.db import PgDb
from hz.runtime.ledger.pg.dispatch import Procrastinate, make_app
from hz.runtime.ledger.pg.ticks import QUEUE_PREFIX, TICK_TASK, Ticks, deployment, runs_app
from hz.runtime.ledger.pg.worker import PgWorker, WorkerOptions
from hz.runtime.ledger.schedules import Firing
from hz.runtime.ledger.store import Ledger
from tests.helpers.scheduled import Clock, job, packet

pytestmark = pytest.mark.serial

EVERY_SECOND = "* * * * * *"  # procrastinate's sixth field: seconds
MINUTELY = job("minutely", Schedule(cron="* * * * *"))
#: 02:30 in Berlin; on 31 March 2030 that wall time does not exist (03:30 summer time fires).
BERLIN = job("berlin", Schedule(cron="30 2 * * *", timezone="Europe/Berlin", catch_up="all"))
PAUSED = job("paused", Schedule(cron="* * * * *"))
#: 01:57:30 UTC, 02:57:30 CET: the clocks go forward at 01:00 UTC. In the future, so the runs
#: the slots queue are not due: no worker runs them.
START = datetime(2030, 3, 31, 0, 57, 30, tzinfo=UTC)


class Looks:
    """Each firing worker's ``Ticks.look``, recording the instant each look fired at (the
    firing clock as the look read it), once the look is done."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.local = threading.local()
        self.done: list[tuple[str, datetime]] = []

    def now(self) -> datetime:
        self.local.now = self.clock.now
        return self.clock.now

    def look(self, name: str, firing: Firing) -> Callable[[], Any]:
        def look() -> Any:
            fired = firing.tick()
            self.done.append((name, self.local.now))
            return fired

        return look


class Fleet:
    """Workers' supervisors (``PgWorker._supervise``) in one event loop, each with its own
    ledger and procrastinate apps; what they note lands in ``notes``."""

    def __init__(self, dsn: str, tmp_path: Path, looks: Looks) -> None:
        self.dsn, self.tmp_path, self.looks = dsn, tmp_path, looks
        self.ledgers: list[Ledger] = []
        self.notes: list[str] = []
        self.workers: list[PgWorker] = []

    def ledger(self) -> Ledger:
        ledger = Ledger(PgDb(self.dsn, where="w"), dispatcher=Procrastinate(self.dsn))
        self.ledgers.append(ledger)
        return ledger

    def worker(self, name: str, jobs: tuple[Job, ...] | None, cron: str = EVERY_SECOND) -> PgWorker:
        """A worker of every queue; with ``jobs``, one that fires them (``--schedules``)."""
        ticks = None
        if jobs is not None:
            firing = Firing(
                self.ledger(), jobs, packet, workdir=self.tmp_path, clock=self.looks.now
            )
            ticks = Ticks(self.dsn, deployment(jobs), self.looks.look(name, firing), cron)
        pg = PgWorker(
            self.ledger(),
            runs_app(self.dsn),
            Slots(1, Binding(runner=None, name="none", settings_digest=""), Policy()),  # type: ignore[arg-type]
            Told(lambda outcome: None, lambda run_id, error: self.notes.append(str(error))),
            options=WorkerOptions(ticks=ticks),
            on_settled=lambda settled: None,
            note=self.notes.append,
        )
        self.workers.append(pg)
        return pg

    def close(self) -> None:
        for ledger in self.ledgers:
            ledger.close()


@pytest.fixture
def fleet(pg_dsn: str, tmp_path: Path) -> Iterator[tuple[Fleet, Clock, Looks]]:
    clock = Clock(START)
    looks = Looks(clock)
    made = Fleet(pg_dsn, tmp_path, looks)
    yield made, clock, looks
    made.close()


def sql(dsn: str, query: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    with psycopg.connect(dsn, row_factory=dict_row, autocommit=True) as c:
        return c.execute(query, params).fetchall()  # type: ignore[arg-type]


def keys(dsn: str, job: str) -> list[str]:
    rows = sql(
        dsn,
        "SELECT request_key FROM hz.runs WHERE request_key LIKE %s ORDER BY request_key",
        (f"schedule:{job}:%",),
    )
    return [str(r["request_key"]) for r in rows]


async def until(condition: Callable[[], bool], what: str, notes: list[str]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, (what, notes)
        await asyncio.sleep(0.05)


async def supervised(workers: list[PgWorker], body: Callable[[], Any]) -> None:
    """``body`` while ``workers`` run; then each is stopped and waited for."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=16))
    for pg in workers:
        pg._wake = asyncio.Event()
    tasks = [asyncio.create_task(pg._supervise()) for pg in workers]
    try:
        await body()
    finally:
        for pg in workers:
            pg.stop("the test is over")
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)


def test_two_firing_workers_fire_each_slot_once_and_a_third_takes_no_tick(
    fleet: tuple[Fleet, Clock, Looks], pg_dsn: str
) -> None:
    made, clock, looks = fleet
    jobs = (MINUTELY, BERLIN, PAUSED)
    one = made.ledger()
    one.set_paused("paused", True, START.timestamp())
    workers = [made.worker("one", jobs), made.worker("two", jobs), made.worker("runs", None)]

    async def body() -> None:
        # Both start looks saw START: the jobs are first seen then.
        await until(lambda: len(looks.done) >= 2, "the start looks", made.notes)
        # Six minutes, a minute at a time: the test moves on once a tick looked at the minute.
        for minute in range(1, 7):
            clock.now = START + timedelta(minutes=minute)
            await until(lambda: any(at == clock.now for _, at in looks.done), "a tick", made.notes)
        # The clock jumps back 30 minutes: the ticks go on, nothing fires.
        newest = len(looks.done)
        clock.now = START - timedelta(minutes=30)
        await until(lambda: len(looks.done) >= newest + 3, "ticks after the jump", made.notes)
        # procrastinate may defer an older minute again after a clock jump back (its defer
        # row of that minute deleted once a newer one was deferred): as if it did.
        await asyncio.to_thread(defer_tick, pg_dsn, deployment(jobs), START)
        await until(lambda: not tick_jobs(pg_dsn), "the old tick", made.notes)

    asyncio.run(supervised(workers, body))
    assert keys(pg_dsn, "minutely") == [
        f"schedule:minutely:2030-03-31T0{h}:{m:02d}:00Z"
        for h, m in ((0, 58), (0, 59), (1, 0), (1, 1), (1, 2), (1, 3))
    ]
    # 02:30 CET does not exist that night: it fires at 03:30 summer time, 01:30 UTC. Not yet.
    assert keys(pg_dsn, "berlin") == []
    assert keys(pg_dsn, "paused") == []
    assert {name for name, _ in looks.done} <= {"one", "two"}
    # A tick the runs' worker took would have failed there (it has no such task) and stayed.
    assert set(tick_jobs(pg_dsn)) <= {"todo", "doing"}
    assert made.notes == []


def tick_jobs(dsn: str) -> list[str]:
    """The statuses of the ticks procrastinate still has (a succeeded one is deleted)."""
    rows = sql(dsn, "SELECT status FROM procrastinate_jobs WHERE task_name = %s", (TICK_TASK,))
    return [str(r["status"]) for r in rows]


def defer_tick(dsn: str, deployment: str, minute: datetime) -> None:
    app = make_app(dsn)
    with app.open():
        app.configure_task(TICK_TASK, queue=QUEUE_PREFIX + deployment).defer(
            timestamp=int(minute.timestamp())
        )


def test_a_restarted_worker_catches_up_per_catch_up_before_any_tick(
    fleet: tuple[Fleet, Clock, Looks], pg_dsn: str
) -> None:
    """procrastinate defers a missed minute only when it is under 10 minutes old; the worker's
    own look at start catches up. The tick here is yearly: only the start looks fire."""
    made, clock, looks = fleet
    latest = job("latest", Schedule(cron="*/10 * * * *"))
    every = job("every", Schedule(cron="*/10 * * * *", catch_up="all"))
    skip = job("skip", Schedule(cron="*/10 * * * *", catch_up="skip"))
    jobs = (latest, every, skip)

    def start_at(moment: datetime) -> None:
        clock.now = moment
        pg = made.worker("one", jobs, cron="0 0 1 1 *")
        seen = len(looks.done)

        async def body() -> None:
            await until(lambda: len(looks.done) > seen, "the start look", made.notes)

        asyncio.run(supervised([pg], body))

    start_at(START)  # first seen: slots count from now
    start_at(START + timedelta(minutes=3))
    assert sql(pg_dsn, "SELECT count(*) AS n FROM hz.runs") == [{"n": 3}]
    # Down for 35 minutes.
    start_at(START + timedelta(minutes=38))
    assert (keys(pg_dsn, "latest"), keys(pg_dsn, "every"), keys(pg_dsn, "skip")) == (
        ["schedule:latest:2030-03-31T01:00:00Z", "schedule:latest:2030-03-31T01:30:00Z"],
        [
            "schedule:every:2030-03-31T01:00:00Z",
            "schedule:every:2030-03-31T01:10:00Z",
            "schedule:every:2030-03-31T01:20:00Z",
            "schedule:every:2030-03-31T01:30:00Z",
        ],
        ["schedule:skip:2030-03-31T01:00:00Z"],  # 01:30 is five minutes old: past ON_TIME
    )
    assert [name for name, _ in looks.done] == ["one", "one", "one"]
    assert made.notes == []

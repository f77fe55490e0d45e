"""Schedules on PostgreSQL: procrastinate's periodic task as the minute's tick, in a queue only
the workers that fire schedules take (docs/decisions/0021-schedules-by-periodic-ticks.md).

- A worker started with ``--schedules DIR`` runs a second procrastinate worker beside the one
  that runs runs: it takes jobs of one queue only, ``hz:schedules:DEPLOYMENT`` (DEPLOYMENT: a
  digest of the scheduled jobs it fires, so workers given the same ``build/jobs`` share it),
  and registers the periodic task ``hz.schedules.tick`` there, every minute, with that digest
  as its ``periodic_id``. procrastinate's deferrer (inside every such worker) inserts one job
  per minute however many workers defer it (a unique row of its periodic defers);
  the worker that takes it fires the due slots of its jobs (``Firing.tick``). A cron slot is a
  minute of some zone's wall clock, so a tick each minute is as timely as a periodic task per
  job, and the zone, the daylight-saving rules, catch-up and jitter stay hz's.
- No other worker takes a tick: the queue's name has a colon, which no queue a user names can
  have (``QUEUE_NAME``), and a worker of every queue (no ``--queue``) takes jobs of every
  queue but these (``RunsOnly``).
- What procrastinate does not promise is hz's: a missed minute older than 10 minutes is not
  deferred, an older minute may be deferred again after a clock jump back. So the firing
  worker also looks once at start and at each restart of its tick worker (after the database
  was away), and each slot's run is created under its request key ``schedule:JOB:SLOT``
  (``Ledger.create`` refuses a key that has a run): a tick only says "look now".
- Succeeded ticks are deleted (procrastinate keeps the defer row: its delete trigger unlinks
  it); the tick has a queueing lock, so at most one waits per deployment, also after the
  deployment changed and no worker takes its queue any more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from procrastinate import App
from procrastinate.jobs import Job as ProcrastinateJob
from procrastinate.manager import JobManager

from hz.runtime.artifacts.models import Job
from hz.runtime.ledger.pg.compat import JOBS
from hz.runtime.ledger.pg.listener import worker_app

#: The periodic task's name.
TICK_TASK = "hz.schedules.tick"
#: The queues of ticks begin so; a colon is in no queue name a user can give.
QUEUE_PREFIX = "hz:schedules:"
#: Every minute: the finest a five-field cron slot can be (a sixth field, seconds, is
#: procrastinate's too: tests tick every second).
TICK_CRON = "* * * * *"


def deployment(jobs: Iterable[Job]) -> str:
    """The digest of the scheduled ``jobs`` (names and job digests): the queue and the
    periodic id workers given the same compiled jobs share."""
    scheduled = sorted(f"{job.name}\0{job.digest}" for job in jobs if job.schedule is not None)
    return hashlib.sha256("\n".join(scheduled).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Ticks:
    """What a worker that fires schedules does on PostgreSQL: ``look`` at start, after each
    restart of its tick worker and at each tick (in a thread of the worker's executor)."""

    conninfo: str
    deployment: str
    look: Callable[[], Any]
    cron: str = TICK_CRON

    @property
    def queue(self) -> str:
        return QUEUE_PREFIX + self.deployment


class ForeignTick(Exception):
    """A job of the tick task with arguments procrastinate's deferrer does not give."""


def tick_app(ticks: Ticks) -> App:
    """The app of a worker's tick worker: the tick task in its queue, periodic every minute."""
    app = worker_app(ticks.conninfo)

    def tick(timestamp: int, **others: object) -> None:
        # procrastinate gives the minute as ``timestamp``; anything else was deferred by hand.
        if others or not isinstance(timestamp, int) or isinstance(timestamp, bool):
            raise ForeignTick(f"{TICK_TASK} takes one argument, timestamp; nothing was fired")
        ticks.look()

    task = app.task(name=TICK_TASK, queue=ticks.queue)(tick)
    app.periodic(cron=ticks.cron, periodic_id=ticks.deployment, queueing_lock=ticks.queue)(task)
    return app


class RunsOnly(JobManager):
    """procrastinate's job manager, whose fetch for a worker of every queue leaves the ticks'
    queues out: that worker takes the jobs of the queues that have jobs waiting, but these."""

    async def fetch_job(
        self, queues: Iterable[str] | None, worker_id: int
    ) -> ProcrastinateJob | None:
        if queues is None:
            rows = await self.connector.execute_query_all_async(
                f"SELECT DISTINCT queue_name FROM {JOBS} "  # noqa: S608
                "WHERE status = 'todo' AND NOT starts_with(queue_name, %(prefix)s)",
                prefix=QUEUE_PREFIX,
            )
            queues = [str(row["queue_name"]) for row in rows]
            if not queues:
                return None
        return await super().fetch_job(queues, worker_id)


def runs_app(conninfo: str) -> App:
    """The app of a worker's runs: every queue but the ticks'."""
    app = worker_app(conninfo)
    app.job_manager = RunsOnly(app.connector)
    return app

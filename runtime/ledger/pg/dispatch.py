"""procrastinate as the ledger's dispatcher (``hz.runtime.ledger.backend.Dispatcher``).

procrastinate moves work: a queued run is one job of the task ``hz.run`` (its only argument
the run id), deferred in the transaction that inserts the run, so a run exists exactly when its
job does. It decides nothing: the worker claims the run in hz's table before it starts anything
(a job whose run is cancelled, adopted or already taken does nothing), and hz's run table says
how the run ended. The task has no retry strategy: procrastinate never runs a job again, and
hz never relaunches a run that was dispatched. A run held for a spend ceiling gets a new job
due at its next look, in the transaction that holds it (``Ledger.hold``), and the row records
the new job's id.

The names of procrastinate's tables, function and notification in these statements are
``hz.runtime.ledger.pg.compat``'s (constants, checked against procrastinate's schema).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from procrastinate import App, PsycopgConnector

from hz.runtime.ledger.backend import Connection, Db
from hz.runtime.ledger.pg.compat import (
    ANY_QUEUE_CHANNEL,
    FINISH_JOB,
    JOB_INSERTED,
    JOBS,
    QUEUE_CHANNEL_PREFIX,
    WORKERS,
)
from hz.runtime.ledger.pg.db import PgConnection
from hz.runtime.ledger.states import TERMINAL, RunState, sql_list

#: The procrastinate task every hz run is a job of.
TASK = "hz.run"
#: A queue name hz accepts (procrastinate's is a varchar; hz keeps it short and plain).
QUEUE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
#: procrastinate's priority is an integer; hz bounds it.
PRIORITY_RANGE = (-1000, 1000)
#: The status a leftover job ends in, by its run's state (``leftover``); any other: failed.
_JOB_STATUS = {
    RunState.COMPLETED: "succeeded",
    RunState.QUEUED: "succeeded",
    RunState.CANCELLED: "aborted",
}


def make_app(conninfo: str) -> App:
    """An app whose connector opens its pool only when a worker runs (``open_async``).

    The dispatcher's app is never opened: it defers and cancels on hz's own connection, in
    hz's transaction (procrastinate's sync path). A worker opens an app of its own
    (``hz.runtime.ledger.pg.listener.worker_app``), whose connector then speaks asyncio
    only."""
    return App(connector=PsycopgConnector(conninfo=conninfo))


class NotPostgres(TypeError):
    """procrastinate was handed a connection of another backend: a bug in hz's wiring."""


def _raw(c: Connection) -> Any:
    """The psycopg connection of one of hz's PostgreSQL transactions (procrastinate defers and
    cancels on it, in hz's transaction)."""
    if not isinstance(c, PgConnection):
        raise NotPostgres(f"procrastinate needs a PostgreSQL connection, not {type(c).__name__}")
    return c.raw


class Procrastinate:
    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo
        self.app = make_app(conninfo)

    def enqueue(
        self, c: Connection, run_id: str, *, queue: str, priority: int, not_before: float
    ) -> int:
        raw = _raw(c)
        options: dict[str, Any] = {"queue": queue, "priority": priority, "connection": raw}
        if not_before > 0:  # the database's time (``Ledger.now``): procrastinate compares
            options["schedule_at"] = datetime.fromtimestamp(not_before, UTC)  # with now()
        job_id = self.app.configure_task(TASK, **options).defer(run_id=run_id)
        return int(job_id)

    def cancel(self, db: Db, job_id: int) -> None:
        with db.tx() as c:
            self.app.job_manager.cancel_job_by_id(job_id, abort=True, connection=_raw(c))

    def wake(self, c: Connection) -> None:
        # Due now, and said so as procrastinate says a new job is there (its insert trigger's
        # notification): a listening worker takes it at once, not at its next poll. A job
        # deferred by a hold that commits while this runs is seen: the statement that wakes
        # the runs waited for the hold's row lock, and this one reads after it.
        c.execute(
            f"WITH woken AS (UPDATE {JOBS} SET scheduled_at = now() "  # noqa: S608
            "WHERE status = 'todo' AND scheduled_at > now() AND id IN (SELECT job_id FROM runs "
            "WHERE state = ? AND owner IS NULL AND held_reason IS NOT NULL) "
            "RETURNING id, queue_name), "
            f"said AS (SELECT id, queue_name, json_build_object('type', '{JOB_INSERTED}', "
            "'job_id', id)::text AS payload FROM woken) "
            f"SELECT pg_notify('{QUEUE_CHANNEL_PREFIX}' || queue_name, payload), "
            f"pg_notify('{ANY_QUEUE_CHANNEL}', payload) FROM said",
            (RunState.QUEUED,),
        )

    def stranded(self, c: Connection) -> list[str]:
        # A job that failed before its claim (the database went away mid-claim) ends without
        # running its run; the run, never dispatched, is safe to hand to the queue again.
        rows = c.execute(
            f"SELECT r.id FROM runs r LEFT JOIN {JOBS} j ON j.id = r.job_id "  # noqa: S608
            "WHERE r.state = ? AND r.owner IS NULL AND r.batch IS NULL "
            "AND (j.id IS NULL OR j.status NOT IN ('todo', 'doing')) ORDER BY r.created_at",
            (RunState.QUEUED,),
        ).fetchall()
        return [str(r["id"]) for r in rows]

    def leftover(self, c: Connection, *, stalled_after: float) -> int:
        # A worker whose finish failed during a long outage leaves its job ``doing`` while
        # hz's row says how the run ended — or, for a held run, after the job had handed the
        # run to a newer job (the run queued, unowned, naming another job: nothing of the run
        # is touched). Only a silent worker's (its heartbeat is procrastinate's, on the
        # database's clock), or one whose run ended as long ago: a live worker finishes its
        # own job the moment its run ends, and one that outlived the outage without
        # restarting has forgotten the finish it could not write. Its status follows the
        # run's end, as the worker would have.
        rows = c.execute(
            f"SELECT j.id, r.state FROM {JOBS} j "  # noqa: S608
            "JOIN runs r ON r.id = j.args->>'run_id' "
            f"LEFT JOIN {WORKERS} w ON w.id = j.worker_id "
            "WHERE j.status = 'doing' AND j.task_name = ? "
            f"AND (r.state IN {sql_list(TERMINAL)} OR (r.state = ? AND r.owner IS NULL "
            "AND r.job_id IS DISTINCT FROM j.id)) "
            "AND (w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => ?) "
            "OR r.ended_at < extract(epoch from now()) - ?) "
            "ORDER BY j.id FOR UPDATE OF j SKIP LOCKED",
            (TASK, RunState.QUEUED, stalled_after, stalled_after),
        ).fetchall()
        for row in rows:
            status = _JOB_STATUS.get(row["state"], "failed")
            c.execute(f"SELECT {FINISH_JOB}(?, ?, false)", (row["id"], status))
        return len(rows)

    def abandon(self, c: Connection, job_id: int) -> None:
        # In hz's transaction: a job still waiting is cancelled (procrastinate's job manager),
        # one a worker took ends failed (its SQL function, as its manager calls it); neither
        # is retried, neither raises when the job has ended already.
        self.app.job_manager.cancel_job_by_id(job_id, connection=_raw(c))
        c.execute(
            f"SELECT {FINISH_JOB}(id, ?, false) FROM {JOBS} "  # noqa: S608
            "WHERE id = ? AND status = 'doing'",
            ("failed", job_id),  # procrastinate's job status, not a run's state
        )

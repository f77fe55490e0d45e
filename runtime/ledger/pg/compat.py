"""procrastinate's internals hz relies on, in one place (STYLE 22). Written against
procrastinate 3.10.0 (pyproject.toml admits its 3.10 patch releases only);
tests/unit/test_ledger_pg_compat.py pins each one and fails when a release changes it.

Everything else hz does with procrastinate is public API: ``App``, ``configure_task(...,
connection=)``, ``job_manager.cancel_job_by_id(..., connection=)``, the worker's documented
arguments and the connector's ``listen_notify`` (``hz.runtime.ledger.pg.listener``). Two things
are not. The names of procrastinate's SQL objects that hz's own statements use (below: its
tables, a function, its notifications), checked against the installed schema.sql. And
``SupervisedWorker``: procrastinate's ``Worker`` (importable, not in ``procrastinate.__all__``)
with two private methods overridden, each turned into a hook with a public name that hz's worker
(``hz.runtime.ledger.pg.worker``) fills in (and ``app.job_manager`` replaced by a subclass whose
``fetch_job`` leaves the ticks' queues out: ``hz.runtime.ledger.pg.ticks.RunsOnly``):

- ``_persist_job_status`` → ``delete_when_succeeded``: delete one job as it succeeds. A run held
  for a spend ceiling, or handed back, gets a new job in the transaction that holds it; the job
  that looked must not stay behind as a row per look. procrastinate deletes every succeeded job
  or none (``delete_jobs``, https://github.com/procrastinate-org/procrastinate/issues/344,
  https://github.com/procrastinate-org/procrastinate/pull/354); no per-job choice or hook exists.
- ``_monitor_side_tasks`` → ``side_task_ended``: stop the worker when *any* side task ends
  (fails, returns or is cancelled) and say which; the periodic deferrer only when the app has
  periodic tasks (without, it returns at once). procrastinate 3.10 stops watching once the first
  one ends, which is the periodic deferrer at once when there are no periodic tasks
  (https://github.com/procrastinate-org/procrastinate/issues/1597; fix proposed in
  https://github.com/procrastinate-org/procrastinate/pull/1605, which still lets a side task
  that returns or is cancelled go unnoticed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from procrastinate import JobContext
from procrastinate.job_context import JobResult
from procrastinate.jobs import Job, Status
from procrastinate.retry import RetryDecision
from procrastinate.worker import Worker

#: The name procrastinate gives its periodic deferrer side task, which returns at once when no
#: periodic task is registered (a worker of runs registers none; a worker of ticks, one).
DEFERRER = "deferrer"

#: procrastinate's SQL objects hz's own statements name (procrastinate/sql/schema.sql): its
#: tables and the columns hz reads or sets, the one function hz calls itself (a job a worker
#: took ends ``failed`` inside hz's transaction: procrastinate's only public finish by id,
#: ``finish_job_by_id_async``, takes no connection), and the notification its insert trigger
#: sends, which hz sends too when held runs' jobs become due. Everything else goes through
#: procrastinate's job manager.
JOBS = "procrastinate_jobs"
JOB_COLUMNS = ("id", "queue_name", "task_name", "args", "status", "scheduled_at", "worker_id")
JOB_STATUSES = ("todo", "doing", "succeeded", "failed", "aborted")
WORKERS = "procrastinate_workers"
WORKER_COLUMNS = ("id", "last_heartbeat")
#: ``(job_id bigint, end_status procrastinate_job_status, delete_job boolean)``
FINISH_JOB = "procrastinate_finish_job_v1"
QUEUE_CHANNEL_PREFIX = "procrastinate_queue_v1#"
ANY_QUEUE_CHANNEL = "procrastinate_any_queue_v1"
#: The ``type`` of the notifications procrastinate's triggers send (with a ``job_id``).
JOB_INSERTED = "job_inserted"
ABORT_REQUESTED = "abort_job_requested"

#: What the overrides were written against: ``str(inspect.signature(...))`` in 3.10.0, the
#: return annotation included. ``_start_side_tasks`` makes the list ``_monitor_side_tasks``
#: receives (a newer procrastinate returns the heartbeat apart: procrastinate PR #1585);
#: ``_process_job`` calls ``_persist_job_status``.
UPSTREAM = {
    "procrastinate.worker.Worker._persist_job_status": (
        "(self, job: 'jobs.Job', status: 'jobs.Status', retry_decision: "
        "'retry.RetryDecision | None', context: 'job_context.JobContext', job_result: "
        "'job_context.JobResult | None')"
    ),
    "procrastinate.worker.Worker._monitor_side_tasks": (
        "(self, side_tasks: 'list[asyncio.Task[Any]]')"
    ),
    "procrastinate.worker.Worker._start_side_tasks": "(self) -> 'list[asyncio.Task[Any]]'",
    "procrastinate.worker.Worker._process_job": "(self, context: 'job_context.JobContext')",
    # Overridden by ``hz.runtime.ledger.pg.ticks.RunsOnly`` (the worker calls it through
    # ``app.job_manager``, which hz replaces).
    "procrastinate.manager.JobManager.fetch_job": (
        "(self, queues: 'Iterable[str] | None', worker_id: 'int') -> 'jobs_module.Job | None'"
    ),
}
#: sha256 of the source of the methods overridden, in 3.10.0: hz replaces the whole monitor
#: and one branch of the persist, so any change upstream (#1605 landing) is to be read.
SOURCES = {
    "procrastinate.worker.Worker._persist_job_status": (
        "821921c86130d1517f51144cd8cb839b7d9426dd98832bebe885b9efc0b5d005"
    ),
    "procrastinate.worker.Worker._monitor_side_tasks": (
        "4e56a47727194084f93af43f476d42f52daf39892d71052be5682d1d5cf77639"
    ),
}


class SupervisedWorker(Worker):
    """procrastinate's worker with two hooks; a subclass overrides only the hooks."""

    def delete_when_succeeded(self, job_id: int) -> bool:
        """Asked as a job succeeds: True deletes its row instead of keeping it
        ``succeeded``."""
        return False

    def side_task_ended(self, name: str, failure: BaseException | None) -> None:
        """A side task ended (``failure`` None: it returned or was cancelled); the worker stops
        after the call."""

    async def _persist_job_status(
        self,
        job: Job,
        status: Status,
        retry_decision: RetryDecision | None,
        context: JobContext,
        job_result: JobResult | None,
    ) -> None:
        if job.id is not None and status == Status.SUCCEEDED and self.delete_when_succeeded(job.id):
            await self.app.job_manager.finish_job(job=job, status=status, delete_job=True)
            return
        await super()._persist_job_status(job, status, retry_decision, context, job_result)

    async def _monitor_side_tasks(self, side_tasks: list[asyncio.Task[Any]]) -> None:
        periodic = bool(self.app.periodic_registry.periodic_tasks)
        watched = [t for t in side_tasks if periodic or t.get_name() != DEFERRER]
        if not watched:
            return
        done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            self.side_task_ended(task.get_name(), None if task.cancelled() else task.exception())
        self.stop()  # type: ignore[no-untyped-call]

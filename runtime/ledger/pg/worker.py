"""``hz worker`` on PostgreSQL: a procrastinate worker, supervised, running each job through
the owner machinery every backend shares (``hz.runtime.ledger.owner.run_owned``).

- A job is one run id. The task claims the run in hz's table (only a ``queued`` run nobody
  owns; the generation moves on) before anything starts; a job whose run is not claimable does
  nothing. The run is then owned exactly as on one machine: its agent in its own process
  group, the lease renewed by the owner's watcher, every write fenced by the generation.
- Cancel: ``hz runs cancel`` commits the intent in hz's table (who asked in the run's
  timeline), which the owner's watcher reads within a tick, then asks procrastinate to abort
  the job. The run is cancelled by its phase as on one machine; the job ends ``aborted``.
  procrastinate's abort alone cancels nothing: any role that can connect may send its
  notification (``abort_job_requested`` with a running job's id; ids are sequential), and a
  role with rights on procrastinate's tables only may set its flag.
- A run a spend ceiling leaves no room for is held before it is claimed (``Ledger.hold``:
  nothing claimed or prepared, its timeline told once). In the same transaction the run gets
  a new job, due at its next look, whose id hz's row records (a cancel reaches it); the job
  that looked ends normally and is deleted (``_Worker``), so a held run has one job, however
  long it waits. No retry strategy is ever set: procrastinate never runs a job twice. A run
  that ends below its reservation makes the held runs' jobs due at once.
- Supervision: procrastinate's worker stops itself when one of its side tasks (heartbeat,
  listener, abort poll) ends — hz watches every one of them, not only the first to finish
  (procrastinate issue #1597) — and when it loses the database. This loop starts a new one,
  with backoff, until ``hz worker`` is told to stop. A listener that hangs without failing is
  found by a probe and listens anew on a new connection (``hz.runtime.ledger.pg.listener``).
- Reconciliation at start and every half lease: this host's runs whose owner is gone are
  settled (their process groups killed: same host id, boot id, pid and start time), any host's
  runs whose lease expired become ``uncertain``, their jobs ended without a retry; runs another
  host settled have their orphans here killed. Never relaunched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from procrastinate import App, JobContext
from procrastinate.exceptions import JobAborted

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.printable import printable
from hz.runtime.ledger import host
from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.owner import Slots, Told, run_owned
from hz.runtime.ledger.pg.compat import SupervisedWorker
from hz.runtime.ledger.pg.dispatch import TASK
from hz.runtime.ledger.pg.listener import PROBE_EVERY, ListeningConnector
from hz.runtime.ledger.pg.ticks import Ticks, tick_app
from hz.runtime.ledger.reconcile import Settled, reconcile
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.store import RUN_ID, Hold, Ledger, Owner, StaleOwner, UnknownRun
from hz.runtime.ledger.worker import Running
from hz.runtime.process.signals import Escalation, handled

#: How often a worker looks for jobs when no notification came (the listener may be gone).
FETCH_POLL = 1.0
#: How often it asks the database which running jobs are to abort (besides notifications).
ABORT_POLL = 1.0
#: Restart delays of the supervised worker (doubling, reset after a worker that ran 30 s).
RESTART_MIN, RESTART_MAX = 0.5, 15.0


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    queues: tuple[str, ...] = ()
    drain: bool = False
    #: How often the listener is probed (``hz.runtime.ledger.pg.listener``).
    probe_every: float = PROBE_EVERY
    #: Fire schedules by procrastinate's periodic tick (``hz.runtime.ledger.pg.ticks``); not
    #: while draining.
    ticks: Ticks | None = None


class ForeignJob(Exception):
    """A job of hz's task that names no run of this ledger."""


class _OneLine(logging.Handler):
    """The warnings and errors of the libraries under the worker (procrastinate, psycopg's
    pool, asyncio) on stderr as one line each, escaped, without a traceback (a job that failed
    says why in the same line). Without it, a record no handler took would reach stderr raw
    through logging's last-resort handler (psycopg's pool discarding a cut connection)."""

    def __init__(self, note: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.note = note

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {record.exc_info[1]}"
        self.note(f"hz: worker: {printable(' '.join(text.split())[:500])}")


class _Worker(SupervisedWorker):
    """procrastinate's worker, stopped when *any* of its side tasks ends, deleting the jobs
    of held runs as they end (``hz.runtime.ledger.pg.compat``)."""

    side_failure: str | None = None

    def __init__(self, *args: Any, superseded: set[int] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Jobs of held runs, replaced by a job due at the run's next look: deleted when they
        #: end, so that a run held all day has one job, not one per look.
        self.superseded = set() if superseded is None else superseded

    def delete_when_succeeded(self, job_id: int) -> bool:
        if job_id in self.superseded:
            self.superseded.discard(job_id)
            return True
        return False

    def side_task_ended(self, name: str, failure: BaseException | None) -> None:
        # One line: procrastinate's messages span several ("\nDatabase error.\n").
        text = " ".join(str(failure).split())[:300] or type(failure).__name__
        self.side_failure = f"its side task {name} " + (f"failed: {text}" if failure else "ended")


class _TickWorker(_Worker):
    """The worker of a firing worker's ticks: each tick that succeeds is deleted (a row a
    minute would stay otherwise); one that failed stays and says why."""

    def delete_when_succeeded(self, job_id: int) -> bool:
        return True


class PgWorker:
    """``slots.jobs`` jobs at once of ``options.queues``, how each run ended ``told``; what
    reconciliation settled to ``on_settled``, a line about the worker itself to ``note``."""

    def __init__(
        self,
        ledger: Ledger,
        app: App,
        slots: Slots,
        told: Told,
        *,
        options: WorkerOptions,
        on_settled: Callable[[list[Settled]], None],
        note: Callable[[str], None],
    ) -> None:
        self.ledger, self.app, self.slots, self.told = ledger, app, slots, told
        self.options = options
        self.on_settled = on_settled
        self.note = note
        self.owner = Owner.this_process()
        self.name = f"hz@{host.host_id()}:{self.owner.pid}"
        self.running = Running()
        self._worker: _Worker | None = None
        self._tick_worker: _Worker | None = None
        #: Set to cut a restart's wait short (``stop``); made anew by each loop (``_main``).
        self._wake = asyncio.Event()
        self._superseded: set[int] = set()
        if isinstance(app.connector, ListeningConnector):
            app.connector.probing(every=options.probe_every, note=note)
        app.task(name=TASK, pass_context=True)(self._job)

    # -- the task (a thread of the loop's executor) ------------------------------------------

    def _job(self, context: JobContext, /, run_id: object = None, **others: object) -> None:
        # A job may have been deferred by hand, or by another hz, with any arguments: it ends
        # failed (never retried), with one line on stderr (``_OneLine``), and runs nothing.
        if others or not isinstance(run_id, str) or not RUN_ID.match(run_id):
            raise ForeignJob(f"{TASK} takes one argument, run_id, an hz run id; nothing was run")
        try:
            self.ledger.get(run_id)
            job_id = context.job.id
            hold = Hold(
                self.slots.policy.ceilings, self.slots.binding.name, self.slots.binding.runner_of
            )
            if self.ledger.hold(run_id, hold, job_id=job_id) is not None:
                if job_id is not None:
                    self._superseded.add(job_id)
                return  # the run waits with a new job; this one ran nothing
            generation = self.ledger.claim(run_id, self.owner, worker=self.name)
        except UnknownRun as e:  # another database's run, or none at all
            raise ForeignJob(f"{e.message}; nothing was run") from None
        except HzError as e:  # the database went away: reconciliation queues the run again
            self.told.error(run_id, e)
            raise
        if generation is None:
            return  # cancelled, adopted or taken: the ledger says it is not to run here
        # procrastinate's abort (a notification any role that can connect may send, or a flag
        # in its table) is not acted on: the run's owner reads the cancel from hz's own table,
        # where hz runs cancel (a role with grants) commits it first.
        try:
            outcome = run_owned(
                self.ledger,
                run_id,
                generation,
                binding=self.slots.binding,
                policy=self.slots.policy,
                on_owned=self.running.track,
            )
        except HzError as e:
            self.told.error(run_id, e)
            return
        except StaleOwner:
            return  # settled by another process (a cancel) before this one dispatched it
        finally:
            self.running.untrack(run_id)
        error = outcome.unrecorded_error()
        if error is not None:  # its result saved to a file, named
            self.told.error(run_id, error)
            return
        if outcome.requeued:
            if context.job.id is not None:
                self._superseded.add(context.job.id)
            return  # handed back, with a new job (``Ledger.release``)
        try:
            self.told.done(outcome)
        except LedgerUnavailable as e:  # its report could not be read: said instead, and
            self.told.error(run_id, e)  # the job ends as its recorded run did (as a pool's)
        if outcome.state == RunState.CANCELLED and context.should_abort():
            raise JobAborted(f"run {run_id} was cancelled")

    # -- the process ---------------------------------------------------------------------------

    def stop(self, reason: str, *, now: bool = False) -> None:
        """Take no more jobs; cancel what runs (as ``hz runs cancel``: SIGTERM, SIGKILL a kill
        grace later, or with ``now`` SIGKILL at once); exit once settled."""
        self.running.stopping.set()
        for worker in (self._worker, self._tick_worker):
            if worker is not None:
                worker.stop()  # type: ignore[no-untyped-call]
        self._wake.set()
        self.running.stop(reason, now=now)

    def run(self) -> None:
        logger = logging.getLogger()
        handler = _OneLine(self.note)
        logger.addHandler(handler)
        try:
            asyncio.run(self._main())
        finally:
            logger.removeHandler(handler)

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()
        # Sync tasks run in the loop's default executor: one thread per slot, two for
        # reconciliation and cancels, one for the ticks.
        loop.set_default_executor(
            ThreadPoolExecutor(max_workers=self.slots.jobs + 3, thread_name_prefix="hz-job")
        )
        self._wake = asyncio.Event()  # of this loop
        # As on one machine (``hz.runtime.process.signals``): the first signal stops and
        # cancels, the second kills the runs' groups at once, later ones cannot interrupt the
        # settling.
        on_signal = Escalation(
            lambda name: self.stop(f"the worker got {name}"),
            lambda name: self.stop(f"the worker got {name} again", now=True),
        )
        signals = handled()
        for signum in signals:
            loop.add_signal_handler(signum, on_signal, signum.name)
        await self._reconcile()
        reaper = asyncio.create_task(self._reap(), name="hz-reaper")
        try:
            await self._supervise()
        finally:
            reaper.cancel()
            for signum in signals:
                loop.remove_signal_handler(signum)
                if on_signal.count:
                    signal.signal(signum, signal.SIG_IGN)

    async def _reconcile(self) -> None:
        try:
            settled = await asyncio.to_thread(
                reconcile, self.ledger, max_attempts=self.slots.policy.max_attempts
            )
        except HzError as e:
            self.note(f"hz: worker: reconcile: {e.message}")
            return
        self.on_settled(settled)

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(self.ledger.lease_seconds / 2)
            await self._reconcile()

    async def _supervise(self) -> None:
        """Keep procrastinate's worker of runs going and, when this worker fires schedules,
        the worker of its ticks beside it; each is restarted on its own."""
        ticks = self.options.ticks
        if ticks is None or self.options.drain:
            if ticks is not None:  # draining: one look, no ticks
                await asyncio.to_thread(ticks.look)
            await self._keep(self._runs_worker, self.app)
            return
        app = tick_app(ticks)
        ticking = asyncio.create_task(self._keep(self._ticks_worker, app, ticks), name="hz-ticks")
        try:
            await self._keep(self._runs_worker, self.app)
        finally:
            if not self.running.stopping.is_set():
                ticking.cancel()  # the runs' supervision failed: a bug, not a stop
            with contextlib.suppress(asyncio.CancelledError):
                await ticking

    def _runs_worker(self, app: App) -> _Worker:
        worker = _Worker(
            app,
            superseded=self._superseded,
            queues=list(self.options.queues) or None,
            name=self.name,
            concurrency=self.slots.jobs,
            wait=not self.options.drain,
            **self._worker_options(),
        )
        self._worker = worker
        return worker

    def _ticks_worker(self, app: App) -> _Worker:
        queue = self.options.ticks.queue if self.options.ticks else ""
        worker = _TickWorker(
            app,
            queues=[queue],
            name=f"{self.name}/schedules",
            concurrency=1,
            **self._worker_options(),
        )
        self._tick_worker = worker
        return worker

    def _worker_options(self) -> dict[str, Any]:
        """What the runs' and the schedules' procrastinate workers share: hz's own signal
        handling, a heartbeat and a stall timeout from the ledger's lease, the polls, LISTEN."""
        lease, poll = self.ledger.lease_seconds, self.ledger.poll_seconds
        return {
            "install_signal_handlers": False,
            "update_heartbeat_interval": max(1.0, lease / 3),
            "stalled_worker_timeout": max(10.0, lease * 4),
            "fetch_job_polling_interval": FETCH_POLL if poll is None else poll,
            "abort_job_polling_interval": ABORT_POLL if poll is None else poll,
            "listen_notify": True,
            "shutdown_graceful_timeout": None,
        }

    async def _keep(
        self, make: Callable[[App], _Worker], app: App, ticks: Ticks | None = None
    ) -> None:
        """Run the worker ``make`` makes, and again with backoff when it stops, until this
        worker stops (or drained). With ``ticks``, look at the schedules before each start:
        what procrastinate's deferrer does not defer on start (a minute older than 10 minutes)
        is caught up per each job's catch_up."""
        delay = RESTART_MIN
        while not self.running.stopping.is_set():
            worker = make(app)
            began = time.monotonic()
            failure: str | None = None
            try:
                if ticks is not None:
                    await asyncio.to_thread(ticks.look)
                async with app.open_async():
                    if self.running.stopping.is_set():
                        return
                    await worker.run()  # type: ignore[no-untyped-call]
            except Exception as e:  # the database gone, a foreign-key error after a prune
                failure = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            finally:
                if ticks is None:
                    self._worker = None
                else:
                    self._tick_worker = None
            if self.running.stopping.is_set() or (self.options.drain and failure is None):
                return
            why = failure or worker.side_failure or "it stopped"
            which = "" if ticks is None else " of schedules"
            self.note(f"hz: worker: procrastinate's worker{which} stopped ({why}); restarting")
            if time.monotonic() - began > 30:
                delay = RESTART_MIN
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=delay)
            delay = min(delay * 2, RESTART_MAX)

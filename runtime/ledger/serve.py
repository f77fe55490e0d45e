"""``hz worker``: queued runs taken and run until a signal stops it (or, draining, until
nothing is runnable now), on either backend. What it prints is the caller's (callbacks)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.owner import Outcome, Slots, Told
from hz.runtime.ledger.reconcile import Settled
from hz.runtime.ledger.schedules import Firing
from hz.runtime.ledger.store import Hold, Ledger, Owner
from hz.runtime.ledger.worker import Pool, from_queue, run_pool


@dataclass(frozen=True, slots=True)
class Service:
    """What a worker runs and how: its slots (how many, the runner, the operator's policy),
    the queues it takes runs from, whether it drains."""

    slots: Slots
    queues: tuple[str, ...] = ()
    drain: bool = False
    #: Fires schedules: on PostgreSQL at procrastinate's periodic tick, and at the worker's
    #: start (``hz.runtime.ledger.pg.ticks``); on SQLite its own thread looks (the caller's).
    firing: Firing | None = None


@dataclass(frozen=True, slots=True)
class Reports:
    """Where a worker says what happens."""

    on_done: Callable[[Outcome], None]
    on_error: Callable[[str, Exception], None]
    #: Claims fail because the database cannot be written now; None: they work again.
    on_trouble: Callable[[HzError | None], None]
    #: Runs a periodic reconciliation settled (PostgreSQL).
    on_settled: Callable[[list[Settled]], None]
    #: A line about the worker itself (PostgreSQL's supervision).
    note: Callable[[str], None]
    #: The worker became idle (``IdleWatch``); None: nobody is told, nothing looks.
    on_idle: Callable[[], None] | None = None


#: How often a worker whose idleness is told looks whether it is idle.
IDLE_LOOK = 1.0


class IdleWatch:
    """``on_idle()`` each time the worker becomes idle (it runs nothing, and nothing it could
    take is queued): once per idle period, however often it looks (every ``every`` seconds, on
    a thread of its own while the block runs). A run that ended since the last look (``ran``)
    ended the idle period, however short it was. A ledger it cannot read now says nothing: the
    worker's own claims report that."""

    def __init__(
        self,
        ledger: Any,
        queues: tuple[str, ...],
        on_idle: Callable[[], None] | None,
        *,
        every: float = IDLE_LOOK,
    ) -> None:
        self.ledger = ledger
        self.queues = queues
        self.on_idle = on_idle
        self.every = every
        self.owner = Owner.this_process()
        self.idle = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="hz-idle", daemon=True)

    def __enter__(self) -> IdleWatch:
        from hz.runtime.process.threads import start

        if self.on_idle is not None:
            start(self._thread, "the worker's idle watch")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def ran(self) -> None:
        self.idle = False

    def _watch(self) -> None:
        try:
            while True:
                self.look()
                if self._stop.wait(self.every):
                    return
        finally:
            self.ledger.thread_done()

    def look(self) -> None:
        try:
            held, due = self.ledger.activity(self.owner, self.queues)
        except HzError:
            return
        idle = held == 0 and due == 0
        if idle and not self.idle and self.on_idle is not None:
            self.on_idle()
        self.idle = idle


def serve(ledger: Ledger, service: Service, reports: Reports) -> bool:
    """Take queued runs and run them, ``service.jobs`` at once, until a cancel signal (the
    first cancels what runs, the second kills it at once) or, with ``drain``, until nothing
    is runnable now. A run held for a spend ceiling waits in the queue. True when it drained
    (the held runs are worth saying), False when a signal stopped it. With
    ``reports.on_idle``, it is told each time the worker becomes idle (``IdleWatch``)."""
    idle = IdleWatch(ledger, service.queues, reports.on_idle)

    def done(outcome: Outcome) -> None:
        idle.ran()
        reports.on_done(outcome)

    def failed(run_id: str, error: Exception) -> None:
        idle.ran()
        reports.on_error(run_id, error)

    with idle:
        return _serve(ledger, service, replace(reports, on_done=done, on_error=failed))


def _serve(ledger: Ledger, service: Service, reports: Reports) -> bool:
    slots = replace(service.slots, policy=replace(service.slots.policy, fail_over_ceiling=False))
    told = Told(reports.on_done, reports.on_error)
    if ledger.dispatcher is not None:
        from hz.runtime.ledger.pg.dispatch import Procrastinate
        from hz.runtime.ledger.pg.ticks import Ticks, deployment, runs_app
        from hz.runtime.ledger.pg.worker import PgWorker, WorkerOptions

        if not isinstance(ledger.dispatcher, Procrastinate):
            raise TypeError(f"no worker for the dispatcher {type(ledger.dispatcher).__name__}")
        conninfo = ledger.dispatcher.conninfo
        firing = service.firing
        ticks = None
        if firing is not None and any(job.schedule is not None for job in firing.jobs):
            ticks = Ticks(conninfo, deployment(firing.jobs), firing.tick)
        PgWorker(
            ledger,
            runs_app(conninfo),  # its own: opened for asyncio
            slots,
            told,
            options=WorkerOptions(queues=service.queues, drain=service.drain, ticks=ticks),
            on_settled=reports.on_settled,
            note=reports.note,
        ).run()
        return service.drain
    hold = Hold(slots.policy.ceilings, slots.binding.name, slots.binding.runner_of)
    claim = from_queue(service.queues, hold=hold, drain=service.drain)
    pool = Pool(ledger, slots, claim, told, on_trouble=reports.on_trouble)
    run_pool(pool, "the worker got {signal}{again}")
    return service.drain and not pool.stopping.is_set()


__all__ = ["IdleWatch", "Reports", "Service", "Slots", "serve"]

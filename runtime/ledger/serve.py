"""``hz worker``: queued runs taken and run until a signal stops it (or, draining, until
nothing is runnable now), on either backend. What it prints is the caller's (callbacks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.owner import Outcome
from hz.runtime.ledger.reconcile import Settled
from hz.runtime.ledger.store import Hold, Ledger
from hz.runtime.ledger.worker import Pool, Slots, from_queue, run_pool


@dataclass(frozen=True, slots=True)
class Service:
    """What a worker runs and how: its slots (how many, the runner, the operator's policy),
    the queues it takes runs from, whether it drains."""

    slots: Slots
    queues: tuple[str, ...] = ()
    drain: bool = False


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


def serve(ledger: Ledger, service: Service, reports: Reports) -> bool:
    """Take queued runs and run them, ``service.jobs`` at once, until a cancel signal (the
    first cancels what runs, the second kills it at once) or, with ``drain``, until nothing
    is runnable now. A run held for a spend ceiling waits in the queue. True when it drained
    (the held runs are worth saying), False when a signal stopped it."""
    slots = service.slots
    policy = replace(slots.policy, fail_over_ceiling=False)
    if ledger.dispatcher is not None:
        from hz.runtime.ledger.pg.dispatch import Procrastinate
        from hz.runtime.ledger.pg.listener import worker_app
        from hz.runtime.ledger.pg.worker import PgWorker, WorkerOptions

        if not isinstance(ledger.dispatcher, Procrastinate):
            raise TypeError(f"no worker for the dispatcher {type(ledger.dispatcher).__name__}")
        PgWorker(
            ledger,
            worker_app(ledger.dispatcher.conninfo),  # its own: opened for asyncio
            options=WorkerOptions(queues=service.queues, jobs=slots.jobs, drain=service.drain),
            binding=slots.binding,
            policy=policy,
            on_done=reports.on_done,
            on_error=reports.on_error,
            on_settled=reports.on_settled,
            note=reports.note,
        ).run()
        return service.drain
    hold = Hold(policy.ceilings, slots.binding.name)
    pool = Pool(
        ledger,
        jobs=slots.jobs,
        binding=slots.binding,
        policy=policy,
        claim=from_queue(service.queues, hold=hold, drain=service.drain),
        on_done=reports.on_done,
        on_error=reports.on_error,
        on_trouble=reports.on_trouble,
    )
    run_pool(pool, "the worker got {signal}{again}")
    return service.drain and not pool.stopping.is_set()


__all__ = ["Reports", "Service", "Slots", "serve"]

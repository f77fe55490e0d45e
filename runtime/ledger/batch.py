"""A foreground batch (``hz run -j N``): many requests as one batch, N at once, each read
only when a slot can take it. What it prints is the caller's (callbacks, and the batch's
tallies once it ended)."""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass

from hz.runtime.ledger.cancel import cancel
from hz.runtime.ledger.foreground import Request
from hz.runtime.ledger.owner import Outcome, Slots, Told
from hz.runtime.ledger.store import KeyHeld, Ledger, Owner
from hz.runtime.ledger.worker import Pool, run_pool

#: A display of the batch while it runs, made from its id and its count of unread targets.
Display = Callable[[str, Callable[[], int]], AbstractContextManager[object]]


class BatchSource:
    """A batch's runs, read one target at a time as a slot frees: the packet of a target is
    built (compiled, rendered or read) only when a slot can take its run, and is dropped once
    its run is in the ledger, so hz holds the packets of at most ``jobs`` runs whatever the
    size of the batch.

    ``requests`` yields a ``Request`` per target, or None for a target whose packet could not
    be built (its diagnostics are reported already). A pool's ``claim``: the batch's own queued
    runs first (automatic retries whose time has come), then the next target's new run; False
    while some are elsewhere in flight or wait for their time; None once all are settled. A
    request whose key has a run is counted in ``held`` and handed to ``on_held``."""

    def __init__(
        self,
        requests: Iterator[Request | None],
        total: int,
        batch: str,
        on_held: Callable[[KeyHeld], None] = lambda e: None,
    ) -> None:
        self.requests = requests
        self.total = total
        self.batch = batch
        self.on_held = on_held
        self.ids: list[str] = []
        self.read = 0
        self.unbuilt = 0
        self.held = 0
        #: A bug while reading a target: the batch reads no more, and ``run_batch``'s caller
        #: raises it once the runs in flight have settled.
        self.error: Exception | None = None
        self._lock = threading.Lock()

    def unread(self) -> int:
        return self.total - self.read

    def __call__(self, ledger: Ledger, owner: Owner) -> tuple[str, int] | bool | None:
        claimed = ledger.claim_next(owner, batch=self.batch)
        if claimed is not None:
            return claimed
        with self._lock:  # one target at a time: building a packet may compile and render
            while self.error is None:
                try:
                    request = next(self.requests)
                except StopIteration:
                    break
                except Exception as e:  # a bug: handed to the main thread
                    self.error = e
                    break
                self.read += 1
                if request is None:
                    self.unbuilt += 1
                    continue
                try:
                    run_id, _ = request.create(ledger, batch=self.batch)
                except KeyHeld as e:
                    self.held += 1
                    self.on_held(e)
                    continue
                self.ids.append(run_id)
                claimed = ledger.claim_next(owner, batch=self.batch)
                if claimed is not None:
                    return claimed
                # A worker on the same ledger took it: read the next target.
        return None if ledger.batch_done(self.batch) else False


@dataclass(frozen=True, slots=True)
class BatchReports:
    """Where a batch says what happens: each run's end, a run that could not be started or
    kept, a request whose key has a run, and the display while it runs."""

    on_done: Callable[[Outcome], None]
    on_error: Callable[[str, Exception], None]
    on_held: Callable[[KeyHeld], None]
    display: Display | None = None


def run_batch(
    ledger: Ledger,
    requests: Iterator[Request | None],
    total: int,
    slots: Slots,
    reports: BatchReports,
) -> BatchSource:
    """Run ``total`` requests as one batch in ``slots``, reading each only when a slot can
    take it, hz's cancel signals routed to the pool (``run_pool``); what was read and run. A
    retry a stop left in the queue is cancelled: nothing of it ran."""
    source = BatchSource(requests, total, f"batch_{secrets.token_hex(6)}", reports.on_held)
    pool = Pool(ledger, slots, source, Told(reports.on_done, reports.on_error))
    display = reports.display
    with contextlib.nullcontext() if display is None else display(source.batch, source.unread):
        run_pool(pool, "hz was interrupted{again} ({signal})")
    for row in ledger.batch_queued(source.batch):
        cancel(ledger, row.id, grace=slots.policy.kill_grace)
    return source


__all__ = ["BatchReports", "BatchSource", "Slots", "run_batch"]

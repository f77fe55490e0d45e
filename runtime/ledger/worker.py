"""Running queued runs, N at once: ``hz worker`` and the foreground batch ``hz run -j N``.

Each slot is a thread that owns one run at a time (the runs' agents are processes; a thread
only supervises one). ``stop()`` stops claiming new runs and cancels the running ones through
the same path as ``hz runs cancel``; every slot settles within the cancel ceiling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from hz.runtime.errors import HzError
from hz.runtime.ledger.owner import Binding, Outcome, OwnedRun, Policy, run_owned
from hz.runtime.ledger.store import Hold, Ledger, Owner

#: How long an idle slot sleeps before looking at the queue again.
IDLE_POLL = 0.2


class Pool:
    """``jobs`` slots taking runs from ``source`` until it returns None (a batch) or until
    ``stop()`` (a worker: ``source`` then waits for new runs)."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        jobs: int,
        binding: Binding,
        policy: Policy,
        claim: Callable[[Ledger, Owner], tuple[str, int] | bool | None],
        on_done: Callable[[Outcome], None] | None = None,
        on_error: Callable[[str, Exception], None] | None = None,
    ) -> None:
        self.ledger = ledger
        self.jobs = jobs
        self.binding = binding
        self.policy = policy
        self.claim = claim
        self.on_done = on_done
        self.on_error = on_error
        self.owner = Owner.this_process()
        self.stopping = threading.Event()
        self.running: dict[str, OwnedRun] = {}
        self._lock = threading.Lock()

    def run(self) -> None:
        threads = [
            threading.Thread(target=self._slot, name=f"hz-slot-{n}", daemon=True)
            for n in range(self.jobs)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(timeout=0.2)  # joins in slices so signals reach the main thread

    def stop(self, reason: str, *, now: bool = False) -> None:
        """Claim nothing more; cancel what runs (intent committed, then signals: SIGTERM and
        SIGKILL two seconds later, or with ``now`` SIGKILL at once)."""
        self.stopping.set()
        with self._lock:
            owned = list(self.running.values())
        for run in owned:
            run.interrupt(reason, now=now)

    def _slot(self) -> None:
        ledger = self.ledger  # a connection per thread, or one per statement from a pool
        while not self.stopping.is_set():
            claimed = self.claim(ledger, self.owner)
            if claimed is None:
                return
            if claimed is False or claimed is True:
                self.stopping.wait(IDLE_POLL)
                continue
            run_id, generation = claimed
            try:
                outcome = run_owned(
                    ledger,
                    run_id,
                    generation,
                    binding=self.binding,
                    policy=self.policy,
                    on_owned=self._track,
                )
            except HzError as e:
                if self.on_error is not None:
                    self.on_error(run_id, e)
                continue
            finally:
                with self._lock:
                    self.running.pop(run_id, None)
            if outcome.requeued:
                self.stopping.wait(IDLE_POLL)
            elif self.on_done is not None:
                self.on_done(outcome)

    def _track(self, owned: OwnedRun) -> None:
        with self._lock:
            self.running[owned.run_id] = owned
        if self.stopping.is_set():
            owned.interrupt("the worker is stopping")


def from_queue(
    queues: tuple[str, ...] = (), *, hold: Hold | None = None
) -> Callable[[Ledger, Owner], tuple[str, int] | bool]:
    """A worker's source: the next queued run (of ``queues`` when given), or False (nothing
    now; look again later). With ``hold``, runs a spend ceiling leaves no room for wait in
    the queue, unclaimed (``Ledger.hold_here``)."""

    def claim(ledger: Ledger, owner: Owner) -> tuple[str, int] | bool:
        claimed = ledger.claim_next(owner, queues=queues, hold=hold)
        return False if claimed is None else claimed

    return claim

"""One run in the foreground (``hz run``): create or adopt it, own it to its end, follow its
automatic retries; hz's own cancel signals reach it as a ``CancelToken`` it polls.

SIGINT, SIGTERM, SIGHUP and SIGQUIT take the cancel path of ``hz runs cancel``
(``hz.runtime.process.signals``): the intent is committed, then the agent's group is killed at
once by the process chokepoint, and the run settles as ``cancelled``. A signal before the
agent started cancels the run, which nothing of ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Packet
from hz.runtime.ledger.cancel import cancel
from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.keys import new_key
from hz.runtime.ledger.owner import Binding, NotStarted, Outcome, Policy, run_owned
from hz.runtime.ledger.store import Ledger, Owner, StaleOwner
from hz.runtime.ledger.watcher import Watcher
from hz.runtime.process.cancel import CancelToken
from hz.runtime.process.clock import SYSTEM, Clock
from hz.runtime.process.signals import routed
from hz.runtime.runners.protocol import ProgressCallback

#: The longest wait for a retry's time (``owner.backoff`` caps it at a minute, plus jitter).
MAX_WAIT = 2 * 60.0


@dataclass(frozen=True, slots=True)
class Request:
    """One run asked for: what ``hz run`` and ``hz submit`` parsed, ready for the ledger."""

    packet: Packet
    key: str
    workdir: Path
    receipt_dir: Path | None
    force_new: bool
    #: The packet, job or contract the packet was made from (a batch's and a worker's lines
    #: name it).
    target: Path | None = None

    @classmethod
    def of(
        cls,
        packet: Packet,
        *,
        key: str | None,
        workdir: Path,
        receipt_dir: Path | None,
        force_new: bool = False,
        target: Path | None = None,
    ) -> Request:
        """The request for ``packet``. Keys are opt-in (``hz.runtime.ledger.keys``): without
        one, the request is a new run, with a key of its own that its retries share."""
        key = key if key is not None else new_key()
        return cls(packet, key, workdir, receipt_dir, force_new, target)

    def create(self, ledger: Ledger, **where: Any) -> tuple[str, int]:
        """Create its run in the ledger (``where``: its batch, queue, priority, an owner to
        adopt it); the run's id and generation."""
        return ledger.create(
            self.packet,
            key=self.key,
            workdir=self.workdir,
            receipt_dir=self.receipt_dir,
            force_new=self.force_new,
            target=self.target,
            **where,
        )


@dataclass(frozen=True, slots=True)
class Retrying:
    """An automatic retry a foreground run is about to wait for: the attempt that ended, and
    the retry's run, its number, and how long until it is due."""

    after: Outcome
    run_id: str
    attempt: int
    max_attempts: int
    wait_seconds: float


def run_foreground(
    ledger: Ledger,
    request: Request,
    *,
    binding: Binding,
    policy: Policy,
    progress: ProgressCallback | None = None,
    on_retry: Callable[[Retrying], None] | None = None,
    clock: Clock = SYSTEM,
) -> Outcome:
    """Create (or adopt) the run, own it to its end, follow automatic retries (``on_retry``
    is told of each as it starts waiting for it); hz's cancel signals routed to it for the
    whole time."""
    owner = Owner.this_process()
    token = CancelToken()
    current: list[Watcher] = []

    def on_signal(name: str) -> None:
        # Values only: the loops that wait poll the token; the watcher commits the intent.
        token.cancel(name)
        if current:
            current[0].stop_now(name)

    previous: Outcome | None = None
    with routed(on_signal):
        while True:
            current.clear()
            run_id, generation = request.create(ledger, adopt=owner)
            if previous is not None and on_retry is not None:
                _tell(ledger, on_retry, previous, run_id, policy.max_attempts)
            try:
                wait_until_due(ledger, run_id, generation, token=token, clock=clock)
                outcome = run_owned(
                    ledger,
                    run_id,
                    generation,
                    binding=binding,
                    policy=policy,
                    progress=progress,
                    on_owned=current.append,
                    receipt_dir=request.receipt_dir,
                    token=token,
                    clock=clock,
                )
            except NotStarted as e:
                row = cancel(ledger, run_id, grace=policy.kill_grace, clock=clock)
                reason = f"hz was interrupted ({e.signal_name}) before the agent started"
                return Outcome(run_id, row.state, failure_kind="aborted", reason=reason)
            except StaleOwner:
                # Settled by another process before its agent started (hz runs cancel of the
                # queued retry, a reconciler): as it was settled.
                row = ledger.get(run_id)
                reason = f"settled by another process before the agent started ({row.state})"
                return Outcome(run_id, row.state, failure_kind=row.failure_kind, reason=reason)
            if outcome.retry is None:
                return outcome
            previous = outcome
            request = replace(request, force_new=False)  # the retry holds the key: adopt it


def _tell(
    ledger: Ledger,
    on_retry: Callable[[Retrying], None],
    after: Outcome,
    run_id: str,
    max_attempts: int,
) -> None:
    try:
        row = ledger.get(run_id)
        wait = max(0.0, row.not_before - ledger.clock().now)
    except HzError:  # the ledger cannot be read now: the run goes on, untold
        return
    on_retry(Retrying(after, run_id, row.attempt, max_attempts, wait))


def wait_until_due(
    ledger: Ledger,
    run_id: str,
    generation: int,
    *,
    token: CancelToken | None = None,
    clock: Clock = SYSTEM,
    limit: float = MAX_WAIT,
) -> None:
    """Wait, owning the run, until its time has come (an automatic retry's backoff), renewing
    its lease every third of it, so that no other process judges its owner gone meanwhile.
    ``StaleOwner`` when another process settled it (``hz runs cancel``); ``NotStarted`` when
    ``token`` is cancelled (a signal to hz). A database that cannot be written now delays a
    renewal, never the wait."""
    slice_ = max(ledger.lease_seconds / 3, 0.01)
    deadline = clock.monotonic() + limit
    while True:
        if token is not None and token.cancelled:
            raise NotStarted(token.reason or "a signal")
        wait = ledger.get(run_id).not_before - ledger.clock().now
        left = deadline - clock.monotonic()
        if wait <= 0 or left <= 0:
            return
        pause = min(wait, left, slice_)
        if token is not None and clock is SYSTEM:
            token.wait(pause)  # a signal ends the pause at once
        else:
            clock.sleep(pause)  # an injected clock: its own time, the token seen next
        try:
            ledger.renew(run_id, generation)
        except LedgerUnavailable:
            continue  # a full disk: renewed at the next slice

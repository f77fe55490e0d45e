"""``hz run`` through the run ledger: one foreground run, or a batch with ``-j N``.

A foreground run is a ledger run like any other (request key, states, lease, receipt); this
process is its owner. SIGINT, SIGTERM, SIGHUP and SIGQUIT take the cancel path of
``hz runs cancel``: the intent is committed, then the agent's group gets SIGTERM and SIGKILL
two seconds later, and the run settles as ``cancelled`` with what its runner read.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from hz.runtime.artifacts.models import Packet
from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.ledger.owner import Binding, Interrupted, Outcome, OwnedRun, Policy
from hz.runtime.ledger.store import Ledger, Owner, StaleOwner

#: The signals that cancel a run (SIGINT included: Ctrl-C is the same path).
CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@contextlib.contextmanager
def signals_to(
    handler: Callable[[str], None], again: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Route the cancel signals to ``handler(signal name)`` while the block runs. The first
    one calls ``handler``, the second ``again`` (a stopping worker or batch: kill the groups
    now rather than after the grace); later ones are ignored, so they cannot cut short the
    killing of the runs' processes or the writing of their receipts (they stay ignored to the
    end of hz)."""
    started: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        started.append(signum)
        if len(started) == 1:
            handler(signal.Signals(signum).name)
        elif len(started) == 2 and again is not None:
            again(signal.Signals(signum).name)

    # SIGINT stays ignored where it was (a background job of a shell without job control).
    handled = [s for s in CANCEL_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
    previous = {s: signal.signal(s, on_signal) for s in handled}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, signal.SIG_IGN if started else old)


def run_pool(pool: Any, why: str, display: contextlib.AbstractContextManager[Any]) -> None:
    """Run a pool of runs (a batch, a worker) until it ends. The first cancel signal stops it
    (claim nothing more, cancel what runs), the second stops its runs at once; ``why`` is the
    reason each gives, formatted with ``signal`` (its name) and ``again`` ("" or " again")."""

    def first(name: str) -> None:
        pool.stop(why.format(signal=name, again=""))

    def second(name: str) -> None:
        pool.stop(why.format(signal=name, again=" again"), now=True)

    with signals_to(first, second), display:
        pool.run()


@dataclass(frozen=True, slots=True)
class Request:
    """One foreground run: what ``hz run`` parsed, ready for the ledger."""

    packet: Packet
    key: str
    workdir: Path
    receipt_dir: Path | None
    force_new: bool

    def create(self, ledger: Ledger, **where: Any) -> tuple[str, int]:
        """Create its run in the ledger (``where``: its batch, queue, priority, an owner to
        adopt it); the run's id and generation."""
        return ledger.create(
            self.packet,
            key=self.key,
            workdir=self.workdir,
            receipt_dir=self.receipt_dir,
            force_new=self.force_new,
            **where,
        )


def run_foreground(
    ledger: Ledger,
    request: Request,
    *,
    binding: Binding,
    policy: Policy,
    progress: Any = None,
) -> Outcome:
    """Create (or adopt) the run, own it to its end, follow automatic retries."""
    from hz.runtime.ledger.cancel import cancel
    from hz.runtime.ledger.owner import run_owned
    from hz.runtime.ledger.store import Owner

    owner = Owner.this_process()
    current: list[OwnedRun] = []

    def on_signal(name: str) -> None:
        # Raised into the runner (as Ctrl-C is): the process chokepoint kills the group on the
        # way out, and a runner that handles a cancel itself classifies it by its phase.
        if current:
            current[0].interrupt(f"hz was interrupted ({name})")
            if not current[0].watch.in_runner:
                return  # settling: the run ends as it is
        raise Interrupted(name)

    with signals_to(on_signal):
        while True:
            current.clear()
            run_id, generation = request.create(ledger, adopt=owner)
            try:
                wait_until_due(ledger, run_id, generation)
                outcome = run_owned(
                    ledger,
                    run_id,
                    generation,
                    binding=binding,
                    policy=policy,
                    progress=progress,
                    on_owned=current.append,
                    receipt_dir=request.receipt_dir,
                )
            except Interrupted as e:
                row = cancel(ledger, run_id)
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
            request = replace(request, force_new=False)  # the retry holds the key: adopt it


#: The longest wait for a retry's time (``owner.backoff`` caps it at a minute, plus jitter).
MAX_WAIT = 2 * 60.0


def wait_until_due(
    ledger: Ledger,
    run_id: str,
    generation: int,
    *,
    sleep: Callable[[float], None] = time.sleep,
    limit: float = MAX_WAIT,
) -> None:
    """Wait, owning the run, until its time has come (an automatic retry's backoff), renewing
    its lease every third of it, so that no other process judges its owner gone meanwhile.
    ``StaleOwner`` when another process settled it (``hz runs cancel``); a cancel signal
    interrupts ``sleep`` (``Interrupted`` is raised from the handler). A database that
    cannot be written now delays a renewal, never the wait."""
    from hz.runtime.ledger.db import LedgerUnavailable

    slice_ = max(ledger.lease_seconds / 3, 0.01)
    deadline = time.monotonic() + limit
    while True:
        wait = ledger.get(run_id).not_before - ledger.clock().now
        left = deadline - time.monotonic()
        if wait <= 0 or left <= 0:
            return
        sleep(min(wait, left, slice_))
        try:
            ledger.renew(run_id, generation)
        except LedgerUnavailable:
            continue  # a full disk: renewed at the next slice


class BatchDisplay:
    """Done / running / queued and spend so far, one line on a terminal, rewritten. Targets
    not read yet count as queued (``unread``)."""

    def __init__(self, ledger: Ledger, batch: str, stream: Any, unread: Callable[[], int]) -> None:
        self.ledger = ledger
        self.batch = batch
        self.stream = stream
        self.unread = unread
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="hz-batch", daemon=True)

    def __enter__(self) -> BatchDisplay:
        from hz.runtime.process.threads import start

        start(self._thread, "the batch's progress line")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.stream.write("\r\x1b[K")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with contextlib.suppress(Exception):
                self.stream.write("\r\x1b[K" + self.line())
                self.stream.flush()

    def line(self) -> str:
        counts: dict[str, int] = {}
        spent = 0.0
        for row in self.ledger.connection.execute(
            "SELECT state, COUNT(*) AS n, COALESCE(SUM(reserved_usd), 0) AS spent "
            "FROM runs WHERE batch = ? GROUP BY state",
            (self.batch,),
        ).fetchall():
            phase = {"queued": "queued", "prepared": "running", "dispatching": "running"}.get(
                row["state"], "running" if row["state"] == "running" else "done"
            )
            counts[phase] = counts.get(phase, 0) + int(row["n"])
            spent += float(row["spent"])
        queued = counts.get("queued", 0) + self.unread()
        return (
            f"hz: {counts.get('done', 0)} done · {counts.get('running', 0)} running · "
            f"{queued} queued · ${spent:.2f} reserved or spent"
        )


class BatchSource:
    """A batch's runs, read one target at a time as a slot frees: the packet of a target is
    built (compiled, rendered or read) only when a slot can take its run, and is dropped once
    its run is in the ledger, so hz holds the packets of at most ``jobs`` runs whatever the
    size of the batch.

    ``requests`` yields a ``Request`` per target, or None for a target whose packet could not
    be built (its diagnostics are reported already). A pool's ``claim``: the batch's own queued
    runs first (automatic retries whose time has come), then the next target's new run; False
    while some are elsewhere in flight or wait for their time; None once all are settled."""

    def __init__(self, requests: Iterator[Request | None], total: int, batch: str) -> None:
        self.requests = requests
        self.total = total
        self.batch = batch
        self.ids: list[str] = []
        self.read = 0
        self.unbuilt = 0
        self.held = 0
        #: A bug while reading a target: the batch reads no more, and ``run_batch`` raises it
        #: once the runs in flight have settled.
        self.error: Exception | None = None
        self._lock = threading.Lock()

    def unread(self) -> int:
        return self.total - self.read

    def __call__(self, ledger: Ledger, owner: Owner) -> tuple[str, int] | bool | None:
        from hz.runtime.ledger.store import KeyHeld

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
                    click.echo(f"hz: error: {printable(e.message)}", err=True)
                    continue
                self.ids.append(run_id)
                claimed = ledger.claim_next(owner, batch=self.batch)
                if claimed is not None:
                    return claimed
                # A worker on the same ledger took it: read the next target.
        return None if ledger.batch_done(self.batch) else False


def run_batch(
    ledger: Ledger,
    requests: Iterator[Request | None],
    *,
    total: int,
    jobs: int,
    binding: Binding,
    policy: Policy,
    fmt: str,
    quiet: bool,
) -> int:
    """Run ``total`` requests as one batch with ``jobs`` slots, reading each only when a slot
    can take it; the exit status says how the runs ended (0 all completed, else the first
    other run's status; 1 when a target could not be built, 2 when a request key had a run)."""
    import secrets

    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.ledger.cancel import cancel
    from hz.runtime.ledger.view import exit_status, run_json
    from hz.runtime.ledger.worker import Pool

    batch = f"batch_{secrets.token_hex(6)}"
    source = BatchSource(requests, total, batch)
    lock = threading.Lock()

    def done(outcome: Outcome) -> None:
        document = run_json(ledger, ledger.get(outcome.run_id), timeline=False)
        with lock:
            if fmt == "jsonl":
                click.echo(printable_json(document))
            elif fmt == "text" and not quiet:
                kind = f" ({document['failure_kind']})" if document["failure_kind"] else ""
                workdir = printable(document["workdir"])
                click.echo(f"{outcome.run_id}  {document['state']}{kind}  {workdir}")

    def failed(run_id: str, error: Exception) -> None:
        message = error.message if isinstance(error, HzError) else str(error)
        click.echo(f"hz: error: {run_id}: {printable(message)}", err=True)

    pool = Pool(
        ledger,
        jobs=jobs,
        binding=binding,
        policy=policy,
        claim=source,
        on_done=done,
        on_error=failed,
    )

    display = (
        BatchDisplay(ledger, batch, sys.stderr, source.unread)
        if sys.stderr.isatty() and not quiet and fmt != "json"
        else contextlib.nullcontext()
    )
    run_pool(pool, "hz was interrupted{again} ({signal})", display)
    for row in ledger.select("batch = ? AND state = 'queued'", (batch,)):
        cancel(ledger, row.id)  # left in the queue by a stop (a retry): nothing of it ran
    if source.unbuilt:
        click.echo(
            f"hz: {source.unbuilt} of {total} targets could not be built (reported above); "
            "nothing of them ran",
            err=True,
        )
    if source.error is not None:
        raise source.error
    if source.unread():
        click.echo(
            f"hz: {source.unread()} of {total} targets were not started: the batch was stopped",
            err=True,
        )
    # One run's document at a time, as printable_json would write the whole list.
    code = 0
    if fmt == "json":
        click.echo('{"kind": "run_list", "runs": [', nl=False)
    for n, run_id in enumerate(source.ids):
        document = run_json(ledger, ledger.get(run_id), timeline=False)
        code = code or exit_status(document)
        if fmt == "json":
            click.echo((", " if n else "") + printable_json(document), nl=False)
    if fmt == "json":
        click.echo("]}")
    return code or (1 if source.unbuilt else 0) or (2 if source.held else 0)

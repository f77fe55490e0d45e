"""``hz run`` through the run ledger: a batch with ``-j N`` (one foreground run is
``hz.runtime.ledger.foreground``)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import click

from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.ledger.foreground import Request, run_foreground
from hz.runtime.ledger.owner import Binding, Outcome, Policy
from hz.runtime.ledger.store import Ledger, Owner
from hz.runtime.process.signals import routed


def run_pool(pool: Any, why: str, display: contextlib.AbstractContextManager[Any]) -> None:
    """Run a pool of runs (a batch, a worker) until it ends. The first cancel signal stops it
    (claim nothing more, cancel what runs), the second stops its runs at once; ``why`` is the
    reason each gives, formatted with ``signal`` (its name) and ``again`` ("" or " again")."""

    def first(name: str) -> None:
        pool.stop(why.format(signal=name, again=""))

    def second(name: str) -> None:
        pool.stop(why.format(signal=name, again=" again"), now=True)

    with routed(first, second), display:
        pool.run()


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


__all__ = ["BatchDisplay", "BatchSource", "Request", "run_batch", "run_foreground", "run_pool"]

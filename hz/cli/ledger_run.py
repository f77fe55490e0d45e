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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from hz.runtime.ledger.owner import Binding, Interrupted, Outcome, OwnedRun, Policy
from hz.runtime.ledger.store import Ledger
from hz.runtime.models import Packet

#: The signals that cancel a run (SIGINT included: Ctrl-C is the same path).
CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@contextlib.contextmanager
def signals_to(handler: Callable[[str], None]) -> Iterator[None]:
    """Route the cancel signals to ``handler(signal name)`` while the block runs. Only the
    first one counts: later ones are ignored, so they cannot cut short the killing of the
    run's processes or the writing of its receipt (they stay ignored to the end of hz)."""
    started: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        if started:
            return
        started.append(signum)
        handler(signal.Signals(signum).name)

    # SIGINT stays ignored where it was (a background job of a shell without job control).
    handled = [s for s in CANCEL_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
    previous = {s: signal.signal(s, on_signal) for s in handled}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, signal.SIG_IGN if started else old)


@dataclass(frozen=True, slots=True)
class Request:
    """One foreground run: what ``hz run`` parsed, ready for the ledger."""

    packet: Packet
    key: str
    workdir: Path
    receipt_dir: Path | None
    force_new: bool


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

    force_new = request.force_new
    with signals_to(on_signal):
        while True:
            current.clear()
            run_id, generation = ledger.create(
                request.packet,
                key=request.key,
                workdir=request.workdir,
                receipt_dir=request.receipt_dir,
                force_new=force_new,
                adopt=owner,
            )
            try:
                wait = ledger.get(run_id)["not_before"] - time.time()
                if wait > 0:
                    time.sleep(min(wait, 2 * 60.0))
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
                return Outcome(run_id, row["state"], failure_kind="aborted", reason=reason)
            if outcome.retry is None:
                return outcome
            force_new = False  # the retry holds the key now: adopt it


class BatchDisplay:
    """Done / running / queued and spend so far, one line on a terminal, rewritten."""

    def __init__(self, ledger: Ledger, batch: str, stream: Any) -> None:
        self.ledger = Ledger(ledger.path)
        self.batch = batch
        self.stream = stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="hz-batch", daemon=True)

    def __enter__(self) -> BatchDisplay:
        self._thread.start()
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
        counts = dict(
            self.ledger.connection.execute(
                "SELECT CASE WHEN state IN ('queued') THEN 'queued' WHEN state IN ('prepared', "
                "'dispatching', 'running') THEN 'running' ELSE 'done' END AS s, COUNT(*) "
                "FROM runs WHERE batch = ? GROUP BY s",
                (self.batch,),
            ).fetchall()
        )
        spent = self.ledger.connection.execute(
            "SELECT COALESCE(SUM(reserved_usd), 0) FROM runs WHERE batch = ?", (self.batch,)
        ).fetchone()[0]
        return (
            f"hz: {counts.get('done', 0)} done · {counts.get('running', 0)} running · "
            f"{counts.get('queued', 0)} queued · ${spent:.2f} reserved or spent"
        )


def run_batch(
    ledger: Ledger,
    requests: list[Request],
    *,
    jobs: int,
    binding: Binding,
    policy: Policy,
    fmt: str,
    quiet: bool,
) -> int:
    """Queue every request as one batch, run it with ``jobs`` slots; the exit status says how
    the runs ended (0 all completed, else the first other run's status)."""
    import json
    import secrets

    from hz.runtime.errors import HzError
    from hz.runtime.ledger.cancel import cancel
    from hz.runtime.ledger.store import KeyHeld
    from hz.runtime.ledger.view import exit_status, run_json, summarize_exits
    from hz.runtime.ledger.worker import Pool, from_batch

    batch = f"batch_{secrets.token_hex(6)}"
    ids: list[str] = []
    held = 0
    for request in requests:
        try:
            run_id, _ = ledger.create(
                request.packet,
                key=request.key,
                workdir=request.workdir,
                receipt_dir=request.receipt_dir,
                force_new=request.force_new,
                batch=batch,
            )
            ids.append(run_id)
        except KeyHeld as e:
            held += 1
            click.echo(f"hz: error: {e.message}", err=True)
    lock = threading.Lock()

    def done(outcome: Outcome) -> None:
        document = run_json(ledger, ledger.get(outcome.run_id), timeline=False)
        with lock:
            if fmt == "jsonl":
                click.echo(json.dumps(document, ensure_ascii=False))
            elif fmt == "text" and not quiet:
                kind = f" ({document['failure_kind']})" if document["failure_kind"] else ""
                click.echo(f"{outcome.run_id}  {document['state']}{kind}  {document['workdir']}")

    def failed(run_id: str, error: Exception) -> None:
        message = error.message if isinstance(error, HzError) else str(error)
        click.echo(f"hz: error: {run_id}: {message}", err=True)

    pool = Pool(
        ledger,
        jobs=jobs,
        binding=binding,
        policy=policy,
        claim=from_batch(batch),
        on_done=done,
        on_error=failed,
    )

    def on_signal(name: str) -> None:
        pool.stop(f"hz was interrupted ({name})")

    display = (
        BatchDisplay(ledger, batch, sys.stderr)
        if sys.stderr.isatty() and not quiet and fmt != "json"
        else contextlib.nullcontext()
    )
    with signals_to(on_signal), display:
        pool.run()
    for run_id in ids:  # left in the queue by a stop: nothing of them ran
        if ledger.get(run_id)["state"] == "queued":
            cancel(ledger, run_id)
    documents = [run_json(ledger, ledger.get(run_id), timeline=False) for run_id in ids]
    if fmt == "json":
        click.echo(json.dumps({"kind": "run_list", "runs": documents}, ensure_ascii=False))
    code = summarize_exits([exit_status(d) for d in documents])
    return code or (2 if held else 0)

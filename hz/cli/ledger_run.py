"""``hz run -j N``'s printing: the batch's progress line and what each run's end says (the
batch itself runs in ``hz.runtime.ledger.batch``; one foreground run in
``hz.runtime.ledger.foreground``)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from hz.cli.progress import RewrittenLine
from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.ledger.foreground import Request
from hz.runtime.ledger.owner import Binding, Outcome, Policy
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.store import KeyHeld, Ledger


class BatchDisplay(RewrittenLine):
    """Done / running / queued and spend so far, one line on a terminal, rewritten. Targets
    not read yet count as queued (``unread``)."""

    def __init__(self, ledger: Ledger, batch: str, stream: Any, unread: Callable[[], int]) -> None:
        super().__init__(stream, interval=0.5, name="hz-batch", what="the batch's progress line")
        self.ledger = ledger
        self.batch = batch
        self.unread = unread

    def draw(self) -> None:
        with contextlib.suppress(Exception):  # the ledger cannot be read now: the next tick
            super().draw()

    def text(self) -> str:
        counts = self.ledger.batch_progress(self.batch)
        queued = counts.queued + self.unread()
        return (
            f"hz: {counts.done} done · {counts.running} running · "
            f"{queued} queued · ${counts.spent:.2f} reserved or spent"
        )


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
    config: Any,
) -> int:
    """Run ``total`` requests as one batch with ``jobs`` slots, reading each only when a slot
    can take it; the exit status says how the runs ended (0 all completed, else the first
    other run's status; 1 when a target could not be built, 2 when a request key had a run)."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.ledger.batch import BatchReports, Slots
    from hz.runtime.ledger.batch import run_batch as run_the_batch
    from hz.runtime.ledger.session import patiently
    from hz.runtime.ledger.view import exit_status, finished_line, run_json

    lock = threading.Lock()

    def done(outcome: Outcome) -> None:
        if outcome.state == RunState.COMPLETED:
            from hz.cli.publish import publish_completed

            publish_completed(ledger, config, outcome.run_id)
        document = patiently(lambda: run_json(ledger, ledger.get(outcome.run_id), timeline=False))
        with lock:
            if fmt == "jsonl":
                click.echo(printable_json(document))
            elif fmt == "text" and not quiet:
                click.echo(finished_line(document, Path.cwd()))

    def failed(run_id: str, error: Exception) -> None:
        message = error.message if isinstance(error, HzError) else str(error)
        click.echo(f"hz: error: {run_id}: {printable(message)}", err=True)

    def held(e: KeyHeld) -> None:
        click.echo(f"hz: error: {printable(e.message)}", err=True)

    def display(batch_id: str, unread: Callable[[], int]) -> Any:
        if sys.stderr.isatty() and not quiet and fmt != "json":
            return BatchDisplay(ledger, batch_id, sys.stderr, unread)
        return contextlib.nullcontext()

    reports = BatchReports(done, failed, held, display)
    source = run_the_batch(ledger, requests, total, Slots(jobs, binding, policy), reports)
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


__all__ = ["BatchDisplay", "Request", "run_batch"]

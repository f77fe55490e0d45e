"""``hz worker``: run queued runs from the ledger, N at once, until SIGTERM."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click

from hz.cli.ledger_run import run_pool
from hz.cli.runs import FORMAT, report_settled
from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.process.threads import MAX_PARALLEL


@click.command(short_help="Run queued runs from the ledger until stopped (SIGTERM).")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1, max=MAX_PARALLEL),
    help="Runs at once [default: [system] max_parallel, 1].",
)
@click.option(
    "--queue",
    "queues",
    multiple=True,
    metavar="NAME",
    help="Take runs of this queue only (repeatable) [default: every queue].",
)
@click.option(
    "--drain",
    is_flag=True,
    help="Exit once nothing is runnable now instead of waiting (runs held for a spend "
    "ceiling stay queued; stderr says how many).",
)
@FORMAT
def worker(jobs: int | None, queues: tuple[str, ...], drain: bool, fmt: str) -> int:
    """Take queued runs (hz submit, hz runs retry, automatic retries) and run them, reconciling
    the ledger first. SIGTERM, SIGINT, SIGHUP or SIGQUIT: claim nothing more, cancel what
    runs (as hz runs cancel: SIGTERM, SIGKILL 2 s later), exit when every run has settled
    (within 10 s); a second signal kills the runs' groups at once; later ones are ignored.
    One line per finished run on stdout (text), or one JSON document at exit (--format
    json).

    With [system.queue] backend = "postgres" the runs come through procrastinate, from any
    machine's hz submit; the worker reconciles every half lease, and restarts procrastinate's
    worker when it stops (a side task died, the database went away)."""
    from hz.cli.submit import check_queue
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.config.layers import load_config
    from hz.runtime.config.tables import SystemSettings
    from hz.runtime.ledger.owner import Binding
    from hz.runtime.ledger.session import backend, open_ledger, policy
    from hz.runtime.ledger.view import run_json
    from hz.runtime.ledger.worker import Pool, from_queue

    for name in queues:
        check_queue(name)
    config = load_config(cwd=Path.cwd())
    binding = Binding.from_config(config)
    ledger, settled = open_ledger(config)
    report_settled(settled)
    finished: list[dict[str, Any]] = []

    def done(outcome: Any) -> None:
        document = run_json(ledger, ledger.get(outcome.run_id), timeline=False)
        finished.append(document)
        if fmt == "text":
            kind = f" ({document['failure_kind']})" if document["failure_kind"] else ""
            click.echo(f"{outcome.run_id}  {document['state']}{kind}")

    def failed(run_id: str, error: Exception) -> None:
        message = error.message if isinstance(error, HzError) else str(error)
        click.echo(f"hz: error: {run_id}: {printable(message)}", err=True)
        hint = error.hint if isinstance(error, HzError) else None
        if hint:
            click.echo(f"  hint: {printable(hint)}", err=True)

    def trouble(error: HzError | None) -> None:
        if error is None:
            click.echo("hz: worker: the run ledger takes writes again; claiming runs", err=True)
        else:
            click.echo(
                f"hz: worker: cannot claim runs now: {printable(error.message)}; trying again",
                err=True,
            )

    slots = jobs or SystemSettings.from_config(config).max_parallel
    if backend(config) == "postgres":
        _run_postgres(ledger, queues, slots, drain, binding, policy(config), done, failed)
        if drain:
            _say_held(ledger)
        if fmt == "json":
            click.echo(printable_json({"kind": "worker", "runs": finished}))
        return 0
    from hz.runtime.ledger.store import Hold

    held = policy(config, fail_over_ceiling=False)
    take = from_queue(queues, hold=Hold(held.ceilings, binding.name))

    def claim(ledger_: Any, owner: Any) -> Any:
        claimed = take(ledger_, owner)
        # Held until later (not due for another look now): not runnable now.
        later = f"{HELD} AND not_before > {ledger_.db.clock}"
        if claimed is False and drain and not ledger_.select(f"{LIVE} AND NOT ({later})"):
            return None
        return claimed

    pool = Pool(
        ledger,
        jobs=slots,
        binding=binding,
        policy=held,
        claim=claim,
        on_done=done,
        on_error=failed,
        on_trouble=trouble,
    )

    run_pool(pool, "the worker got {signal}{again}", contextlib.nullcontext())
    if drain and not pool.stopping.is_set():
        _say_held(ledger)
    if fmt == "json":
        click.echo(printable_json({"kind": "worker", "runs": finished}))
    return 0


#: Runs that still have to run, and of them, those held for a spend ceiling: ``--drain``
#: means "until nothing is runnable now", so it does not wait for a ceiling's next window.
LIVE = "state IN ('queued', 'prepared', 'dispatching', 'running')"
HELD = "state = 'queued' AND owner IS NULL AND held_reason IS NOT NULL"


def _say_held(ledger: Any) -> None:
    held = len(ledger.select(HELD))
    if held:
        runs = "run" if held == 1 else "runs"
        click.echo(
            f"hz: worker: drained; {held} {runs} held for a spend ceiling stay queued "
            "(hz runs list --state queued)",
            err=True,
        )


def _run_postgres(
    ledger: Any,
    queues: tuple[str, ...],
    slots: int,
    drain: bool,
    binding: Any,
    policy: Any,
    done: Any,
    failed: Any,
) -> None:
    from dataclasses import replace

    from hz.runtime.ledger.pg.listener import worker_app
    from hz.runtime.ledger.pg.worker import PgWorker, WorkerOptions

    def note(message: str) -> None:
        click.echo(message, err=True)

    PgWorker(
        ledger,
        worker_app(ledger.dispatcher.conninfo),  # its own: opened for asyncio
        options=WorkerOptions(queues=queues, jobs=slots, drain=drain),
        binding=binding,
        policy=replace(policy, fail_over_ceiling=False),
        on_done=done,
        on_error=failed,
        on_settled=report_settled,
        note=note,
    ).run()

"""``hz worker``: run queued runs from the ledger, N at once, until SIGTERM."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from hz.cli.counts import plural
from hz.cli.help import examples
from hz.cli.params import jobs_option
from hz.cli.runs import FORMAT, report_settled
from hz.runtime.artifacts.printable import printable, printable_json


@click.command(
    short_help="Run queued runs from the ledger until stopped (SIGTERM).",
    epilog=examples("hz worker -j 4", "hz worker --schedules build/jobs"),
)
@jobs_option("Runs at once [default: [system] max_parallel, 1].")
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
@click.option(
    "--schedules",
    "schedules_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    metavar="DIR",
    help="Fire the schedules and chains (hz.schedule, hz.after) of the jobs compiled in DIR "
    "(hz compile --out DIR): each slot once, however many workers fire it [default: "
    "[system.schedules] jobs, else none].",
)
@FORMAT
def worker(
    jobs: int | None,
    queues: tuple[str, ...],
    drain: bool,
    schedules_dir: Path | None,
    fmt: str,
) -> int:
    """Take queued runs (hz submit, hz runs retry, automatic retries) and run them, reconciling
    the ledger first. SIGTERM, SIGINT, SIGHUP or SIGQUIT: claim nothing more, cancel what
    runs (as hz runs cancel: SIGTERM, SIGKILL 2 s later), exit when every run has settled
    (within 10 s); a second signal kills the runs' groups at once; later ones are ignored.
    One line per finished run on stdout (text), or one JSON document at exit (--format
    json).

    With [system.queue] backend = "postgres" the runs come through procrastinate, from any
    machine's hz submit; the worker reconciles every half lease, and restarts procrastinate's
    worker when it stops (a side task died, the database went away)."""
    from hz.cli.closed_stdout import line
    from hz.cli.publish import publish_completed
    from hz.cli.submit import check_queue
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.config.layers import load_config
    from hz.runtime.config.tables import SystemSettings
    from hz.runtime.ledger.owner import Binding
    from hz.runtime.ledger.serve import Reports, Service, Slots, serve
    from hz.runtime.ledger.session import backend, open_ledger, patiently, policy
    from hz.runtime.ledger.states import RunState
    from hz.runtime.ledger.view import finished_line, run_json

    for name in queues:
        check_queue(name)
    config = load_config(cwd=Path.cwd())
    binding = Binding.from_config(config)
    ledger, settled = open_ledger(config)
    click.get_current_context().call_on_close(ledger.close)
    report_settled(settled)
    finished: list[dict[str, Any]] = []

    def done(outcome: Any) -> None:
        if outcome.state == RunState.COMPLETED:
            publish_completed(ledger, config, outcome.run_id)
        document = patiently(lambda: run_json(ledger, ledger.get(outcome.run_id), timeline=False))
        finished.append(document)
        if fmt == "text":
            line(finished_line(document, Path.cwd()), what="finished runs")

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
    click.echo(started(backend(config), ledger.db.where, queues, slots), err=True)

    def note(message: str) -> None:
        click.echo(message, err=True)

    def idle() -> None:
        click.echo("hz: worker: idle: nothing queued; waiting for runs (hz submit)", err=True)

    if schedules_dir is None:
        from hz.runtime.config.tables import SchedulesSettings

        configured = SchedulesSettings.from_config(config).jobs
        schedules_dir = None if configured is None else Path(configured).expanduser()
    firing = None if schedules_dir is None else _fire(config, schedules_dir, note)
    service = Service(Slots(slots, binding, policy(config)), queues, drain, firing)
    on_idle = idle if sys.stderr.isatty() and not drain else None
    if serve(ledger, service, Reports(done, failed, trouble, report_settled, note, on_idle)):
        _say_held(ledger)
        _say_left(ledger)
    if fmt == "json":
        line(printable_json({"kind": "worker", "runs": finished}), what="its runs")
    return 0


def _fire(config: Any, directory: Path, note: Any) -> Any:
    """Start the thread that fires ``directory``'s chains (and on SQLite its schedules) on its
    own ledger connection; it stops with the process (it only queues runs: each look is one
    short transaction per slot). The ``Firing``: on PostgreSQL the worker fires the schedules
    with it at procrastinate's periodic tick."""
    import threading

    from hz.cli.schedules import firing_maker, load_jobs
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.config.tables import SchedulesSettings
    from hz.runtime.ledger.schedules import Fired, Firing
    from hz.runtime.ledger.session import backend, ledger_for
    from hz.runtime.process.threads import start

    jobs = load_jobs(directory)
    fired_ledger = ledger_for(config)
    stop = threading.Event()
    click.get_current_context().call_on_close(stop.set)

    def report(fired: Fired) -> None:
        for key, run_id in fired.queued:
            note(f"hz: worker: queued {run_id} for {printable(key)}")
        for key, message in fired.failed:
            note(f"hz: worker: {printable(key)}: not queued: {printable(message)}")
        for said in fired.notes:
            note(f"hz: worker: {printable(said)}")

    from hz.cli.request_options import RunTargets

    def trouble(error: HzError) -> None:
        note(f"hz: worker: firing schedules: {printable(error.message)}; trying again")

    firing = Firing(
        fired_ledger,
        jobs,
        firing_maker(config, Path.cwd(), directory, note, fired_ledger),
        workdir=Path.cwd(),
        receipt_dir=RunTargets.receipts_of(config),
        report=report,
        trouble=trouble,
        max_followers=SchedulesSettings.from_config(config).max_followers,
    )
    scheduled = sum(1 for job in jobs if job.schedule is not None)
    chained = sum(1 for job in jobs if job.after)
    note(f"hz: worker: firing {scheduled} scheduled and {chained} chained jobs of {directory}")
    looks = backend(config) != "postgres"
    thread = threading.Thread(
        target=firing.run, args=(stop.wait,), kwargs={"schedules": looks}, daemon=True
    )
    start(thread, "firing schedules")
    return firing


def started(backend: str, where: str, queues: tuple[str, ...], slots: int) -> str:
    """The line a worker starts with: where it takes runs from, and how many at once."""
    if not queues:
        which = "every queue"
    else:
        which = ("queue " if len(queues) == 1 else "queues ") + ", ".join(queues)
    at = f"{backend} ledger {printable(where)}"
    return f"hz: worker: started: {at}, {which}, {plural(slots, 'slot')}"


def _say_held(ledger: Any) -> None:
    held = len(ledger.held_runs())
    if held:
        click.echo(
            f"hz: worker: drained; {plural(held, 'run')} held for a spend ceiling stay queued "
            "(hz runs list --state queued)",
            err=True,
        )


def _say_left(ledger: Any) -> None:
    left = ledger.left_behind()
    if left:
        stay = "stays" if left == 1 else "stay"
        click.echo(
            f"hz: worker: drained; {plural(left, 'run')} no worker takes now {stay} in the ledger "
            "(values hz cannot read, or due more than an hour from now: hz runs list)",
            err=True,
        )

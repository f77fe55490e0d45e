"""``hz publish RUN``: write a completed run's draft where its contract asks (each publish a
ledger step, written once), or with ``--staged`` print what would be written, where, and with
which credential's name, writing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hz.cli.counts import plural
from hz.cli.help import examples
from hz.cli.runs import FORMAT, emit, open_ledger, run_ids
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.printable import printable


@click.command(
    epilog=examples(
        "hz publish run_20261201_3f0c9a1b2c4d --staged",
        "hz publish run_20261201_3f0c9a1b2c4d --step 2",
    )
)
@click.argument("run_id")
@click.option("--step", type=click.IntRange(min=1), default=None, help="Only this step.")
@click.option("--staged", is_flag=True, help="Print what would be written; write nothing.")
@click.option(
    "--resend",
    is_flag=True,
    help="Send an uncertain step again (a person checked the target holds nothing).",
)
@click.option(
    "--skip",
    is_flag=True,
    help="Publish this step never (with --step): an uncertain one a person settled by hand.",
)
@FORMAT
def publish(run_id: str, step: int | None, staged: bool, resend: bool, skip: bool, fmt: str) -> int:
    """Publish a completed run's draft where its contract asks: each publish a step of the
    run, written once (a published step is never written again; an uncertain one only with
    --resend). Exit 0 when every step shown is published or skipped, 1 otherwise."""
    from hz.runtime.publish.engine import from_config, make_steps, publish_run, stage

    (run_id,) = run_ids((run_id,))
    if (skip or resend) and step is None:
        raise click.UsageError("--skip and --resend take one step: give --step N")
    if skip and (resend or staged):
        raise click.UsageError("--skip cannot be combined with --resend or --staged")
    ledger, config = open_ledger(fmt)
    if skip:
        make_steps(ledger, run_id)
        if ledger.skip_step(run_id, step, "skipped by hz publish --skip") is None:
            raise HzError(
                f"step {step} of {run_id} cannot be skipped: it does not exist, is published, "
                "or is being published now",
                hint=f"hz runs show {run_id} lists its steps",
            )
        shown = [s.to_json() for s in ledger.steps(run_id) if s.step == step]
        emit(shown, fmt, steps_text(shown))
        return 0
    if step is not None and step not in [s.step for s in make_steps(ledger, run_id)]:
        raise HzError(
            f"run {run_id} has no step {step}",
            hint=f"hz runs show {run_id} lists its steps",
        )
    ctx = from_config(config)
    if staged:
        found = stage(ledger, run_id, ctx, only=step)
        document: Any = [
            {
                "step": s.step.step,
                "to": s.step.target,
                "where": s.where,
                "credential": s.credential,
                "state": s.step.state,
                "body": None if s.payload is None else s.payload.text,
                "problem": s.problem,
            }
            for s in found
        ]
        emit(document, fmt, staged_text(document))
        return 0
    steps = publish_run(ledger, run_id, ctx, only=step, resend=resend)
    shown = [s.to_json() for s in steps if step is None or s.step == step]
    emit(shown, fmt, steps_text(shown))
    return 0 if all(s["state"] in ("published", "skipped") for s in shown) else 1


def refuse_undeliverable(config: Any, packet: Any, workdir: Path) -> None:
    """Before a session (or a queued run): ``PublishRefused`` when the operator's policy does
    not allow a publish the packet asks for, so no money is spent on an undeliverable draft."""
    if not packet.publishes:
        return
    from hz.runtime.publish.engine import from_config
    from hz.runtime.publish.policy import check

    ctx = from_config(config)
    check(
        packet.job.name,
        packet.publishes,
        ctx.settings,
        workdir=workdir,
        targets=ctx.targets,
        environ=ctx.environ,
    )


def publish_completed(ledger: Any, config: Any, run_id: str, *, clock: Any = None) -> int:
    """A completed run's publishes: written now (``[publish] mode = "auto"``) or left pending
    for ``hz publish RUN``; each step's end on stderr. 0 when every step was published.

    The database away (a restart just after the run's end was recorded) is waited out as the
    run's own records are (``handle.patiently``, 60 s on ``clock``): its steps are made only
    here, so giving up at once would leave a completed run that never publishes. Trying again
    writes nothing twice (each step is taken once). Past the patience it is said, with the
    command that publishes the run, and 1 is returned."""
    from hz.runtime.ledger.session import LedgerUnavailable, patiently
    from hz.runtime.process.clock import SYSTEM

    try:
        return patiently(lambda: _publish_completed(ledger, config, run_id), clock or SYSTEM)
    except LedgerUnavailable as e:
        click.echo(
            f"hz: error: {run_id}: publishing: {printable(e.message)}; its publishes were not "
            "written",
            err=True,
        )
        click.echo(f"  hint: hz publish {run_id} writes them (each once)", err=True)
        return 1


def _publish_completed(ledger: Any, config: Any, run_id: str) -> int:
    """``publish_completed`` tried once: ``LedgerUnavailable`` raised, any other ``HzError``
    said (1)."""
    from hz.runtime.ledger.session import LedgerUnavailable
    from hz.runtime.ledger.store import read_packet
    from hz.runtime.publish.engine import from_config, make_steps, publish_run

    packet = read_packet(ledger.get(run_id))
    if packet is None or not packet.publishes:
        return 0
    try:
        ctx = from_config(config)
        if ctx.settings.mode == "approve":
            steps = make_steps(ledger, run_id)
            click.echo(
                f"hz: {plural(len(steps), 'publish', 'publishes')} of {run_id} await approval: "
                f"hz publish {run_id} --staged shows them, hz publish {run_id} writes them",
                err=True,
            )
            return 0
        shown = [step.to_json() for step in publish_run(ledger, run_id, ctx)]
    except LedgerUnavailable:
        raise
    except HzError as e:
        click.echo(f"hz: error: {run_id}: publishing: {printable(e.message)}", err=True)
        return 1
    for line in steps_text(shown).splitlines():
        click.echo(f"hz: {run_id}: publish {line}", err=True)
    return 0 if all(s["state"] in ("published", "skipped") for s in shown) else 1


def staged_text(document: list[dict[str, Any]]) -> str:
    out = []
    for item in document:
        head = f"step {item['step']}: {item['to']} -> {printable(item['where'])}"
        if item["credential"]:
            head += f" (credential: ${item['credential']})"
        out.append(f"{head} [{item['state']}]")
        if item["problem"]:
            out.append(f"  refused: {printable(item['problem'])}")
        else:
            out += ["  " + printable(line) for line in str(item["body"]).splitlines()]
    return "\n".join(out) + "\n" if out else "no publishes\n"


def steps_text(steps: list[dict[str, Any]]) -> str:
    lines = []
    for s in steps:
        line = f"step {s['step']}: {s['to']}: {s['state']}"
        if s["location"]:
            line += f": {printable(s['location'])}"
        if s["detail"]:
            line += f" ({printable(s['detail'])})"
        lines.append(line)
    return "\n".join(lines) + "\n" if lines else "no publishes\n"

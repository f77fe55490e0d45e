"""``hz publish RUN``: write a completed run's draft where its contract asks (each publish a
ledger step, written once), or with ``--staged`` print what would be written, where, and with
which credential's name, writing nothing."""

from __future__ import annotations

from typing import Any

import click

from hz.cli.help import examples
from hz.cli.runs import FORMAT, emit, open_ledger, run_ids
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
@FORMAT
def publish(run_id: str, step: int | None, staged: bool, resend: bool, fmt: str) -> int:
    """Publish a completed run's draft where its contract asks."""
    from hz.runtime.publish.engine import from_config, publish_run, stage

    (run_id,) = run_ids((run_id,))
    ledger, config = open_ledger(fmt)
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
        if s["detail"] and s["state"] != "published":
            line += f" ({printable(s['detail'])})"
        lines.append(line)
    return "\n".join(lines) + "\n" if lines else "no publishes\n"

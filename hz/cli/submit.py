"""``hz submit``: queue runs in the ledger for ``hz worker``; returns at once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from hz.cli.help import examples
from hz.cli.request_options import RunTargets, reported_packets, request_options
from hz.cli.runs import FORMAT, report_settled

#: A queue name: what procrastinate and hz both store and show without escaping.
_QUEUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_queue(name: str) -> str:
    if not _QUEUE.match(name):
        shown = repr(name[:64]) + (f" (… {len(name)} characters)" if len(name) > 64 else "")
        raise click.BadParameter(
            f"{shown} is not a queue name (1 to 64 letters, digits, '.', '_' or '-')",
            param_hint="--queue",
        )
    return name


@click.command(
    short_help="Queue runs for hz worker; print their run ids.",
    epilog=examples(
        "hz submit contracts/weekly.yaml --input week=2026-W49",
        "hz submit build/packets/*.json --queue reviews --priority 5",
    ),
)
@request_options
@click.option(
    "--queue",
    default="default",
    show_default=True,
    metavar="NAME",
    help="The queue a worker takes them from (hz worker --queue NAME).",
)
@click.option(
    "--priority",
    type=click.IntRange(-1000, 1000),
    default=0,
    show_default=True,
    help="Higher runs first among queued runs of a queue.",
)
@FORMAT
def submit(asked: RunTargets, queue: str, priority: int, fmt: str) -> int:
    """Queue one run per target; a worker (hz worker) runs them.

    \b
    Exit status: 0 queued, 1 a contract or input has errors (nothing queued), 2 usage or
    configuration error, or the --request-key has a run or names another request (nothing
    queued; without a key every target is a new run).
    """
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    check_queue(queue)
    workdir = asked.workdir
    if asked.request_key is not None and len(asked.targets) > 1:
        raise click.UsageError(
            "--request-key (or HZ_REQUEST_KEY) names one request: give one target"
        )
    if not workdir.is_dir():
        raise click.BadParameter(f"{workdir} is not a directory", param_hint="--workdir")
    config = load_config(cwd=Path.cwd())
    from hz.cli.request_options import ceiling_of

    packets = reported_packets(asked, config.highest_ceiling(), ceiling_of(config), config=config)
    if packets is None:
        return 1
    from hz.cli.publish import refuse_undeliverable

    for packet in packets:  # refused now, not after a worker paid for the session
        refuse_undeliverable(config, packet, workdir)
    ledger, settled = open_ledger(config)
    click.get_current_context().call_on_close(ledger.close)
    report_settled(settled)
    receipts = asked.receipts(config)
    ids = []
    for target, packet in zip(asked.targets, packets, strict=True):
        request = asked.request(packet, receipts, target)
        run_id, _ = request.create(ledger, queue=queue, priority=priority, submitted=True)
        ids.append(run_id)
    if fmt == "json":
        click.echo(json.dumps({"kind": "submitted", "runs": ids}))
    else:
        click.echo("".join(f"{run_id}\n" for run_id in ids), nl=False)
    return 0

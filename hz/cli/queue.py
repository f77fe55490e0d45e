"""``hz queue``: the run ledger's backend itself (``[system.queue]``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hz.cli.help import examples
from hz.cli.runs import FORMAT


@click.group(
    short_help="Set up the run ledger's backend ([system.queue]).",
    epilog=examples("hz queue init"),
)
def queue() -> None:
    """The run ledger's backend: SQLite in the state directory, or PostgreSQL with
    procrastinate ([system.queue] backend)."""


@queue.command(epilog=examples("hz queue init", "hz queue init --format json"))
@FORMAT
def init(fmt: str) -> int:
    """Create or migrate the ledger's schema now (every hz command does it on first use, under
    a lock): hz's tables, and on PostgreSQL procrastinate's schema. Idempotent."""
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import backend, ledger_for

    config = load_config(cwd=Path.cwd(), runner_keys=False)
    ledger = ledger_for(config)
    try:
        document = {"kind": "queue", "backend": backend(config), "where": ledger.db.where}
    finally:
        ledger.close()
    if fmt == "json":
        click.echo(json.dumps(document, ensure_ascii=False))
    else:
        click.echo(f"hz: the run ledger is ready: {document['backend']}, {document['where']}")
    return 0

"""The runtime's commands: ``hz doctor``, ``hz config show``, ``hz receipts verify|list|show``."""

from __future__ import annotations

from pathlib import Path

import click

from hz.cli.counts import plural
from hz.cli.help import examples
from hz.cli.params import format_choice, job_name
from hz.cli.transcripts import receipt_directory
from hz.cli.transcripts import show as show_receipt
from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.config.layers import load_config
from hz.runtime.config.show import show_json, show_text
from hz.runtime.execution.doctor import format_check, run_doctor
from hz.runtime.receipts.verify import receipt_rows, verify_chain


@click.command(epilog=examples("hz doctor", "hz doctor --format json"))
@format_choice(
    ("text", "json"), "text", "text: one line per check; json: one JSON document on stdout."
)
def doctor(fmt: str) -> int:
    """Check the configuration files and the bound runner; exit 1 if any check failed."""
    checks = run_doctor()
    failed = any(c.status == "failed" for c in checks)
    if fmt == "json":
        document = {
            "kind": "doctor",
            "ok": not failed,
            "checks": [{"name": c.name, "status": c.status, "detail": c.detail} for c in checks],
        }
        click.echo(printable_json(document, indent=2))
    else:
        for check in checks:
            click.echo(format_check(check))
    return 1 if failed else 0


@click.group(epilog=examples("hz config show"))
def config() -> None:
    """Inspect the configuration."""


@config.command(epilog=examples("hz config show", "hz config show --job review-pr --format json"))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option(
    "--job",
    metavar="NAME",
    callback=lambda ctx, param, value: job_name(value),
    help='The effective configuration of the job NAME: its [jobs."…"] table over the base.',
)
def show(fmt: str, job: str | None) -> int:
    """Print the effective configuration and where each value came from."""
    effective = load_config(cwd=Path.cwd())
    if job is not None:
        effective = effective.for_job(job)
    if fmt == "json":
        click.echo(printable_json(show_json(effective, job), indent=2))
    else:
        click.echo(show_text(effective, job), nl=False)
    return 0


@click.group(epilog=examples("hz receipts verify", "hz receipts show 3 --transcript"))
def receipts() -> None:
    """Inspect and verify run receipts."""


receipts.add_command(show_receipt)


_DIRECTORY = click.argument(
    "directory", type=click.Path(path_type=Path, file_okay=False), required=False
)


@receipts.command(epilog=examples("hz receipts verify", "hz receipts verify build/receipts"))
@_DIRECTORY
def verify(directory: Path | None) -> int:
    """Check the chain of receipts in DIRECTORY (default: where hz run writes them): exit 1
    naming each broken receipt."""
    directory = receipt_directory(directory)
    count, problems = verify_chain(directory)
    for problem in problems:
        click.echo(f"FAILED {printable(problem)}")  # names from the files
    if problems:
        return 1
    click.echo(
        f"ok: {plural(count, 'receipt')} in {printable(str(directory))}, the chain is intact"
    )
    return 0


@receipts.command(
    name="list",
    epilog=examples("hz receipts list", "hz receipts list build/receipts --format json"),
)
@_DIRECTORY
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def list_(directory: Path | None, fmt: str) -> int:
    """One line per receipt in DIRECTORY (default: where hz run writes them): when, which job,
    runner, status, cost."""
    rows = receipt_rows(receipt_directory(directory))
    if fmt == "json":
        click.echo(printable_json(rows, indent=2))
        return 0
    for row in rows:
        # A receipt is a file anyone can edit: every value is shown, never trusted.
        status = _shown(row.get("status"))
        if row.get("failure_kind"):
            status += f" ({_shown(row['failure_kind'])})"
        cost = row.get("cost_usd")
        cells = [row["file"], row.get("started_at"), row.get("runner"), status]
        cells = [_shown(cell) for cell in cells]
        number = isinstance(cost, (int, float)) and not isinstance(cost, bool)
        click.echo("  ".join([*cells, f"${cost:.4f}" if number else _shown(cost)]))
    return 0


def _shown(value: object) -> str:
    """A receipt's value on one line: "?" when absent, control characters escaped."""
    return "?" if value is None else printable(str(value))

"""``hz receipts show``: a receipt, and with ``--transcript`` what the agent did in its run.

``show_receipt`` is the printing function other commands reuse (a run ledger's
``hz runs show ID --transcript`` given the receipt's path).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hz.cli.help import examples
from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.receipts.show import (
    find_receipt,
    format_receipt,
    format_transcript,
    load_json,
    load_transcript,
)


def show_receipt(target: Path, number: int | None, *, transcript: bool, fmt: str) -> int:
    """Print receipt ``number`` of ``target`` (a receipt file or directory) on stdout, its
    transcript too when asked; a transcript that no longer matches its receipt is printed
    with a warning on stderr and exit 1. ``HzError`` when there is nothing to show."""
    path = find_receipt(target, number)
    receipt = load_json(path)
    shown, warning = None, ""
    if transcript:
        shown, warning = load_transcript(path, receipt)
    if fmt == "json":
        document = {"file": str(path), "receipt": receipt}
        if shown is not None:
            document["transcript"] = shown
        click.echo(printable_json(document, indent=2))
    else:
        click.echo(format_receipt(path.name, receipt), nl=False)
        if shown is not None:
            click.echo(format_transcript(str(receipt.get("transcript_file")), shown), nl=False)
    return warn(warning)


def transcript_of(receipt_path: Path) -> tuple[dict[str, Any], str, str]:
    """The transcript beside a receipt: its data, its text as ``hz receipts show
    --transcript`` prints it, and a warning ("" when it matches the receipt's digest)."""
    receipt = load_json(receipt_path)
    shown, warning = load_transcript(receipt_path, receipt)
    return shown, format_transcript(str(receipt.get("transcript_file")), shown), warning


def warn(warning: str) -> int:
    """A transcript's warning on stderr: exit status 1; 0 without one."""
    if warning:
        click.echo(f"hz: warning: {printable(warning)}", err=True)
        return 1
    return 0


@click.command(name="show", epilog=examples("hz receipts show", "hz receipts show 3 --transcript"))
@click.argument("target", type=click.Path(path_type=Path), required=False)
@click.argument("number", type=click.IntRange(min=1), required=False)
@click.option("--transcript", is_flag=True, help="Print the run's transcript too.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def show(target: Path | None, number: int | None, transcript: bool, fmt: str) -> int:
    """Print a receipt: TARGET is a receipt file, or a receipt directory (default: where hz run
    writes them) with the receipt's sequence NUMBER (default: the newest). A lone NUMBER that
    names no file is a receipt of the default directory: hz receipts show 3."""
    if target is not None and number is None and _sequence(target) and not target.exists():
        target, number = None, int(str(target))
    return show_receipt(receipt_directory(target), number, transcript=transcript, fmt=fmt)


def receipt_directory(given: Path | None) -> Path:
    """``given``, else where ``hz run`` chains its receipts (``[system.runner] receipt_dir``,
    else ``receipts/`` in the state directory), which must exist then."""
    if given is not None:
        return given
    from hz.cli.request_options import receipt_home
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.config.layers import load_config

    home, _ = receipt_home(load_config(cwd=Path.cwd(), runner_keys=False))
    if not home.exists():
        raise HzError(
            f"{home}: no receipts yet (hz run chains its receipts there)",
            hint="name the directory to look in another: hz receipts list DIR",
        )
    return home


def _sequence(target: Path) -> bool:
    text = str(target)
    return text.isascii() and text.isdigit() and len(text) <= 18 and int(text) >= 1

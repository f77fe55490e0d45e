"""The options that say what to run, shared by ``hz run`` and ``hz submit``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: The targets of hz run and hz submit.
targets_argument = click.argument(
    "targets",
    nargs=-1,
    required=True,
    metavar="PACKET|JOB|CONTRACT...",
    type=click.Path(dir_okay=False, path_type=Path),
)

_OPTIONS = (
    click.option(
        "--inputs",
        "inputs_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Input values for a job or contract: a JSON or YAML file holding one mapping.",
    ),
    click.option(
        "--input",
        "input_args",
        multiple=True,
        metavar="NAME=VALUE|NAME=@FILE",
        help="One input value (repeatable), as for hz render.",
    ),
    click.option(
        "--workdir",
        type=click.Path(file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help="The directory the agent may read; it must exist.",
    ),
    click.option(
        "--receipt-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where the receipt is chained [default: [system.runner] receipt_dir, else "
        "receipts/ in the operator's state directory ([system] state_dir)].",
    ),
    click.option("--no-receipt", is_flag=True, help="Write no receipt for this run."),
    click.option(
        "--request-key",
        help="Name the request yourself (one target only) [default: the job's digest, the "
        "inputs' digest and the workdir]. A key that has a run already is not run again.",
    ),
    click.option("--force-new", is_flag=True, help="Run even when the request key has a run."),
)


def request_options(function: F) -> F:
    for option in reversed(_OPTIONS):
        function = option(function)
    return function


def receipt_directory(receipt_dir: Path | None, no_receipt: bool, config: Any) -> Path | None:
    """``--receipt-dir``, else ``[system.runner] receipt_dir``, else ``receipts/`` in the
    operator's state directory, beside the run ledger (not in the working tree, where it would
    show in ``git status`` and the repository could plant files in it); None with
    ``--no-receipt``."""
    if no_receipt:
        return None
    if receipt_dir is not None:
        return receipt_dir
    from hz.runtime.runners.settings import SharedSettings

    configured = SharedSettings.from_config(config).receipt_dir
    if configured:
        return Path(configured)
    from hz.runtime.config.keys import SYSTEM
    from hz.runtime.ledger.paths import state_dir
    from hz.runtime.receipts.write import DEFAULT_DIR

    return state_dir(config.table(SYSTEM)) / DEFAULT_DIR

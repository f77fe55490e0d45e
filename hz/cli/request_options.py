"""The targets and options that say what to run, shared by ``hz run`` and ``hz submit``: click
parses them, and the command gets them as one frozen value (``RunTargets``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import click

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class RunTargets:
    """What a command was asked to run: the targets, their input values, the working directory,
    where receipts go and how the request is named."""

    targets: tuple[Path, ...]
    inputs_file: Path | None
    input_args: tuple[str, ...]
    workdir: Path
    receipt_dir: Path | None
    no_receipt: bool
    request_key: str | None
    force_new: bool

    def one(self, target: Path) -> RunTargets:
        """The same request for one of the targets."""
        return replace(self, targets=(target,))

    def receipts(self, config: Any) -> Path | None:
        """``--receipt-dir``, else ``[system.runner] receipt_dir``, else ``receipts/`` in the
        operator's state directory, beside the run ledger (not in the working tree, where it would
        show in ``git status`` and the repository could plant files in it); None with
        ``--no-receipt``."""
        if self.no_receipt:
            return None
        if self.receipt_dir is not None:
            return self.receipt_dir
        from hz.runtime.runners.settings import SharedSettings

        configured = SharedSettings.from_config(config).receipt_dir
        if configured:
            return Path(configured)
        from hz.runtime.config.tables import SystemSettings
        from hz.runtime.ledger.paths import state_dir
        from hz.runtime.ledger.private import private_dir
        from hz.runtime.receipts.write import DEFAULT_DIR

        # Beside the ledger, held to its rule: this user's alone (created 0700 if missing).
        state = state_dir(SystemSettings.from_config(config))
        private_dir(state)
        private_dir(state / DEFAULT_DIR, "the receipt directory")
        return state / DEFAULT_DIR


_FIELDS = tuple(field.name for field in fields(RunTargets))


def _named(ctx: click.Context, param: click.Parameter, key: str | None) -> str | None:
    """A key is checked as it is parsed, before any database is touched. An empty one (an
    unset variable in ``--request-key "$KEY"``) names no request: refused, not taken as none."""
    if key is None:
        return None
    from hz.runtime.ledger.keys import KEY_RULE, key_problem

    problem = key_problem(key)
    if problem is None:
        return key
    source = ctx.get_parameter_source(param.name or "")
    where = "HZ_REQUEST_KEY" if source is click.ParameterSource.ENVIRONMENT else None
    if not key.strip(" "):
        why = f"{problem}; leave the option out to start a new run"
    else:
        why = f"{problem}; a request key is {KEY_RULE}"
    raise click.BadParameter(why, param_hint=where or "--request-key")


_TARGETS = click.argument(
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
        envvar="HZ_REQUEST_KEY",
        callback=_named,
        help="Run this request once (one target only): a key that has a run already, live or "
        "ended, starts nothing; the same key with another request is refused. Without it "
        "(and without HZ_REQUEST_KEY) every invocation starts a new run.",
    ),
    click.option(
        "--force-new",
        is_flag=True,
        help="Run the request again under its --request-key, though the key has a run.",
    ),
)


def request_options(function: Callable[..., R]) -> Callable[..., R]:
    """The targets argument and the options, passed to ``function`` as its first argument, one
    ``RunTargets``; the command's other options follow as keyword arguments."""

    @functools.wraps(function)
    def command(**options: Any) -> R:
        asked = RunTargets(**{name: options.pop(name) for name in _FIELDS})
        return function(asked, **options)

    for decorator in reversed((_TARGETS, *_OPTIONS)):
        command = decorator(command)
    return command

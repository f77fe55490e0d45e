"""Option types the commands share."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from hz.runtime.artifacts.printable import printable
from hz.runtime.process.threads import MAX_PARALLEL

#: A job's name as a contract's hz.name is written: a lowercase slug.
JOB_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")

#: What click.option returns: it decorates a command's function.
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class Number(click.ParamType[float]):
    """A finite number at or above ``minimum`` (above it when ``strict``). click's FloatRange
    lets nan and inf through: a wait that never ends, a budget ceiling switched off."""

    def __init__(self, name: str, *, unit: str, minimum: float, strict: bool, limit: str) -> None:
        self.name = name
        self.unit = unit
        self.minimum = minimum
        self.strict = strict
        #: What the value must be, as the error says it ("a finite number greater than 0").
        self.limit = limit

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            number = float(str(value))
        except ValueError:
            self.fail(f"{printable(repr(value))} is not a number of {self.unit}", param, ctx)
        low = number <= self.minimum if self.strict else number < self.minimum
        if not math.isfinite(number) or low:
            self.fail(f"{printable(str(value))} is not {self.limit}", param, ctx)
        return number


#: A duration in seconds: 0 or more.
SECONDS = Number(
    "seconds",
    unit="seconds",
    minimum=0,
    strict=False,
    limit="a finite number of seconds, 0 or more",
)
#: An amount of US dollars: 0 or more (``hz plan --fail-over``).
USD = Number(
    "float", unit="US dollars", minimum=0, strict=False, limit="a finite number, 0 or more"
)
#: A budget ceiling in US dollars: more than 0.
CEILING = Number(
    "float", unit="US dollars", minimum=0, strict=True, limit="a finite number greater than 0"
)


def format_choice(choices: Sequence[str], default: str, help: str) -> Decorator:
    """The ``--format`` option (into ``fmt``) of a command that can print ``choices``."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(tuple(choices)),
        default=default,
        show_default=True,
        help=help,
    )


def jobs_option(help: str) -> Decorator:
    """The ``-j/--jobs`` option (into ``jobs``): how many runs at once, 1 to ``MAX_PARALLEL``;
    None when not given."""
    return click.option("-j", "--jobs", type=click.IntRange(min=1, max=MAX_PARALLEL), help=help)


def path_option(
    *decls: str, help: str, directory: bool = False, required: bool = False
) -> Decorator:
    """An option naming a file (or a ``directory``) to read or write: an empty name is refused
    (``Path("")`` is the current directory), none is None."""
    flag = next(d for d in decls if d.startswith("--"))

    def checked(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
        if value == "":
            raise click.BadParameter("the path must not be empty", param_hint=f"'{flag}'")
        return None if value is None else Path(value)

    kind = click.Path(file_okay=False) if directory else click.Path(dir_okay=False)
    return click.option(*decls, type=kind, required=required, callback=checked, help=help)


def job_name(value: str | None) -> str | None:
    """The value of an option naming a job: a contract's hz.name, a slug of at most 64."""
    from hz.runtime.artifacts.packet_limits import MAX_NAME
    from hz.runtime.artifacts.printable import cut

    if value is None or (len(value) <= MAX_NAME and JOB_NAME.fullmatch(value)):
        return value
    raise click.BadParameter(
        f"{printable(cut(repr(value), 80))} is not a job name: a contract's hz.name is a "
        f"lowercase slug of at most {MAX_NAME} characters (e.g. review-pr)",
        param_hint="'--job'",
    )

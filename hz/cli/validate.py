"""The authoring commands: ``hz validate``, ``hz schema``, ``hz explain``."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Sequence

    from hz.compiler.diagnostics import Diagnostic

from hz.compiler.report.formats import FORMATS

SCHEMA_KINDS = ("contract", "job", "packet", "receipt", "result")


class Ceiling(click.ParamType[float]):
    """A budget ceiling in US dollars: a finite number greater than 0. (click's FloatRange
    lets nan and inf through, and either would switch the ceiling off.)"""

    name = "float"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            number = float(str(value))
        except ValueError:
            self.fail(f"{value!r} is not a number of US dollars", param, ctx)
        if not math.isfinite(number) or number <= 0:
            self.fail(f"{value} is not a finite number greater than 0", param, ctx)
        return number


CEILING = Ceiling()

#: The report formats of every command that reports diagnostics.
format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text (PATH:LINE:COL: error: MESSAGE [CODE]), json, github annotations or SARIF 2.1.0.",
)


def refuse_empty(paths: tuple[str, ...], what: str = "PATH") -> None:
    """An empty path would mean the current directory to some calls and an error to others."""
    if "" in paths:
        raise click.UsageError(f"a {what} must not be empty")


@click.command(short_help="Check contracts and report every problem with file:line:col.")
@click.argument("paths", nargs=-1, metavar="PATH...")
@format_option
@click.option(
    "--max-usd-ceiling",
    type=CEILING,
    default=None,
    help="The largest hz.agent.max_usd a contract may ask for "
    "[default: [authoring] max_usd_ceiling from the configuration, else 100].",
)
def validate(paths: tuple[str, ...], fmt: str, max_usd_ceiling: float | None) -> int:
    """Validate contracts: files, directories (every *.yaml and *.yml inside) or - for stdin.

    A directory that holds no *.yaml or *.yml file is named in a warning on stderr; it does
    not change the exit status. The project's hz.toml, when there is one, is checked too.

    Exit status: 0 when every contract is valid, 1 when any has an error, 2 on a usage error.
    """
    if not paths:
        raise click.UsageError("give at least one PATH: a contract file, a directory, or -")
    refuse_empty(paths)
    from hz import __version__
    from hz.cli.authoring import authoring
    from hz.compiler.diagnostics import sort_diagnostics
    from hz.compiler.report.formats import write_report
    from hz.compiler.validate import validate_paths

    options = authoring(max_usd_ceiling)
    run = validate_paths(paths, max_usd_ceiling=options.max_usd_ceiling)
    for directory in run.empty_dirs:
        click.echo(f"hz: warning: {directory} holds no *.yaml or *.yml file", err=True)
    write_report(
        sort_diagnostics([*options.diagnostics, *run.diagnostics]),
        fmt=fmt,
        files_checked=run.files_checked + project_files(options.diagnostics),
        out=sys.stdout,
        err=sys.stderr,
        tool_version=__version__,
    )
    return 0 if run.ok and not options.diagnostics else 1


def project_files(problems: Sequence[Diagnostic]) -> int:
    """How many project files (hz.toml) the ``problems`` of the authoring options are in: they
    count among the checked files, so a summary never names more files with errors than it
    checked. (A clean hz.toml is not counted: the summary counts what was given.)"""
    return len({d.file for d in problems})


@click.command(short_help="Print a JSON Schema (contract, job, packet, receipt or result).")
@click.argument("kind", type=click.Choice(SCHEMA_KINDS), default="contract", required=False)
def schema(kind: str) -> int:
    """Print the JSON Schema of a contract (default), a job, a packet, a receipt or a result."""
    if kind == "contract":
        from hz.compiler.checks.structure import schema_text

        text = schema_text()
    else:
        import hz.runtime.schemas

        text = hz.runtime.schemas.schema_text(kind)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


@click.command(short_help="Show the documentation of a rule code.")
@click.argument("code")
def explain(code: str) -> int:
    """Print the documentation of a rule code such as HZ101."""
    from hz.compiler.rules.docs import rule_doc

    sys.stdout.write(rule_doc(code))
    return 0

"""The authoring commands: ``hz validate``, ``hz schema``, ``hz explain``."""

from __future__ import annotations

import sys

import click

from compiler.report import FORMATS

SCHEMA_KINDS = ("contract", "job", "packet", "result")


@click.command(short_help="Check contracts and report every problem with file:line:col.")
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text (PATH:LINE:COL: error: MESSAGE [CODE]), json, github annotations or SARIF 2.1.0.",
)
@click.option(
    "--max-usd-ceiling",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="The largest hz.agent.max_usd a contract may ask for "
    "[default: [authoring] max_usd_ceiling from the configuration, else 100].",
)
def validate(paths: tuple[str, ...], fmt: str, max_usd_ceiling: float | None) -> int:
    """Validate contracts: files, directories (every *.yaml and *.yml inside) or - for stdin.

    Exit status: 0 when every contract is valid, 1 when any has an error, 2 on a usage error.
    """
    if not paths:
        raise click.UsageError("give at least one PATH: a contract file, a directory, or -")
    from compiler.authoring import authoring
    from compiler.diagnostics import sort_diagnostics
    from compiler.report import write_report
    from compiler.validate import validate_paths
    from runtime import __version__

    options = authoring(max_usd_ceiling)
    run = validate_paths(paths, max_usd_ceiling=options.max_usd_ceiling)
    write_report(
        sort_diagnostics([*options.diagnostics, *run.diagnostics]),
        fmt=fmt,
        files_checked=run.files_checked,
        out=sys.stdout,
        err=sys.stderr,
        tool_version=__version__,
    )
    return 0 if run.ok and not options.diagnostics else 1


@click.command(short_help="Print a JSON Schema (contract, job, packet or result).")
@click.argument("kind", type=click.Choice(SCHEMA_KINDS), default="contract", required=False)
def schema(kind: str) -> int:
    """Print the JSON Schema of a contract (default), a job, a packet or a result."""
    if kind == "contract":
        from compiler.checks.structure import schema_text

        text = schema_text()
    else:
        import runtime.schemas

        text = runtime.schemas.schema_text(kind)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


@click.command(short_help="Show the documentation of a rule code.")
@click.argument("code")
def explain(code: str) -> int:
    """Print the documentation of a rule code such as HZ101."""
    from compiler.ruledocs import rule_doc

    sys.stdout.write(rule_doc(code))
    return 0

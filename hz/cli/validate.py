"""The authoring commands: ``hz validate``, ``hz schema``, ``hz explain``."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hz.cli.fetching import AT
from hz.cli.help import examples
from hz.cli.params import CEILING, format_choice

if TYPE_CHECKING:
    from hz.compiler.checks.tools import PolicySource, ToolPolicy
    from hz.compiler.diagnostics import Diagnostic

from hz.compiler.report.formats import FORMATS

SCHEMA_KINDS = ("contract", "job", "packet", "receipt", "result", "runs")


#: The report formats of every command that reports diagnostics.
format_option = format_choice(
    FORMATS,
    "text",
    "text (PATH:LINE:COL: error: MESSAGE [CODE]), json, github annotations or SARIF 2.1.0.",
)


verbose_option = click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="List on stderr the Markdown files skipped as not contracts (no hz: frontmatter), "
    "and the next slots of each scheduled contract.",
)


#: The number of processes ``hz validate`` and ``hz compile`` split many contracts over.
PROCESSES_VARIABLE = "HZ_PROCESSES"


def processes_asked(environ: Mapping[str, str] = os.environ) -> int | None:
    """``HZ_PROCESSES``: a number of processes (1 never forks), or None when unset (hz
    judges by the CPUs and the load average)."""
    from hz.compiler.fanout import MAX_PROCESSES
    from hz.runtime.artifacts.errors import ConfigError

    raw = environ.get(PROCESSES_VARIABLE, "")
    if not raw:
        return None
    if raw not in {str(n) for n in range(1, MAX_PROCESSES + 1)}:
        shown = raw if len(raw) <= 20 else raw[:20] + "..."
        raise ConfigError(
            f"environment variable {PROCESSES_VARIABLE}: {shown!r} is not a number of "
            f"processes from 1 to {MAX_PROCESSES}",
            hint=f"unset {PROCESSES_VARIABLE} to let hz judge by the CPUs and the load average",
        )
    return int(raw)


def list_skipped(skipped: Sequence[str]) -> None:
    from hz.runtime.artifacts.printable import printable

    for path in skipped:
        click.echo(f"hz: skipped {printable(path)}: no hz: frontmatter", err=True)


#: How many next slots ``-v`` and ``hz explain --cron`` show.
NEXT_SLOTS = 3


def list_slots(contracts: Sequence[Any], at: datetime | None = None) -> None:
    """For each valid contract with a schedule, its next slots (stderr)."""
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.schedule import NO_SLOT, describe, next_slots, slot_name

    moment = at or datetime.now(UTC)
    for contract in contracts:
        if contract.schedule is None:
            continue
        found = next_slots(contract.schedule, moment, NEXT_SLOTS)
        slots = ", ".join(slot_name(s) for s in found) or NO_SLOT
        click.echo(
            f"hz: {contract.name} runs {printable(describe(contract.schedule))}; next: {slots}",
            err=True,
        )


def refuse_empty(paths: tuple[str, ...], what: str = "PATH") -> None:
    """An empty path would mean the current directory to some calls and an error to others."""
    if "" in paths:
        raise click.UsageError(f"a {what} must not be empty")


@click.command(
    short_help="Check contracts and report every problem with file:line:col.",
    epilog=examples("hz validate contracts/", "hz validate contracts/ --format github"),
)
@click.argument("paths", nargs=-1, metavar="PATH...")
@format_option
@click.option(
    "--max-usd-ceiling",
    type=CEILING,
    default=None,
    help="The largest hz.agent.max_usd a contract may ask for "
    "[default: [authoring] max_usd_ceiling from the configuration, else 100].",
)
@click.option(
    "--runner",
    metavar="NAME",
    help="Warn about tools this runner does not accept [default: tools no registered runner "
    "accepts].",
)
@verbose_option
def validate(
    paths: tuple[str, ...],
    fmt: str,
    max_usd_ceiling: float | None,
    runner: str | None,
    verbose: bool,
) -> int:
    """Validate contracts: files, directories (every *.yaml, *.yml and *.md with an hz:
    frontmatter inside) or - for stdin.

    A directory that holds no contract is an error (HZ014): a check of nothing fails. A
    Markdown file without an hz: frontmatter (a README) is skipped; -v lists them. The
    project's hz.toml, when there is one, is checked too.

    Exit status: 0 when every contract is valid, 1 when any has an error, 2 on a usage error.
    """
    if not paths:
        raise click.UsageError("give at least one PATH: a contract file, a directory, or -")
    refuse_empty(paths)
    from hz import __version__
    from hz.cli.authoring import authoring
    from hz.compiler.diagnostics import sort_diagnostics
    from hz.compiler.fanout import check_paths
    from hz.compiler.report.formats import write_report

    options = authoring(max_usd_ceiling)
    # With --runner the name is checked now; otherwise the runners are asked only when a
    # contract names a tool.
    policy = tool_policy(runner) if runner else None
    run = check_paths(
        paths,
        max_usd_ceiling=options.max_usd_ceiling,
        tools=(lambda _: policy) if policy is not None else policy_source(),
        operations=options.operations,
        keep=verbose,  # -v lists the slots of scheduled contracts
        targets=options.targets,
        processes=processes_asked(),
    )
    if verbose:
        list_skipped(run.skipped)
        list_slots(run.contracts)
    write_report(
        sort_diagnostics([*options.diagnostics, *run.diagnostics]),
        fmt=fmt,
        files_checked=run.files_checked + project_files(options.diagnostics),
        out=sys.stdout,
        err=sys.stderr,
        tool_version=__version__,
    )
    warn_unmatched_jobs(list(run.names))
    return 0 if run.ok and not options.diagnostics else 1


def warn_unmatched_jobs(names: list[str]) -> None:
    """A ``[jobs."…"]`` table of the operator's files that no validated contract's job
    matches (a misspelt name binds nothing): a warning on stderr, with a did-you-mean."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.config.jobs import unknown_tables
    from hz.runtime.config.layers import load_config

    if not names:
        return
    try:
        tables = load_config(cwd=Path.cwd(), runner_keys=False).jobs
    except HzError:
        return  # a broken configuration is hz doctor's to report, not validate's
    for table, close in unknown_tables(tables, names):
        line = f"hz: warning: {table.header} ({table.where}) matches no job here{close}"
        click.echo(printable(line), err=True)


def policy_source() -> PolicySource:
    """The tool policy of every registered runner, worked out once per process and only as far
    as needed: the core runners first, the plugins (an entry-point scan, and importing them)
    only for a tool no core runner accepts."""
    core = functools.cache(lambda: tool_policy(None, core_only=True))
    every = functools.cache(lambda: tool_policy(None))

    def source(asked: tuple[str, ...]) -> ToolPolicy:
        found = core()
        return found if all(found.accepts(tool) for tool in asked) else every()

    return source


def tool_policy(runner: str | None, *, core_only: bool = False) -> ToolPolicy:
    """The tool names each registered runner that checks names (``accepted_tools``) accepts
    under this machine's configuration; with ``runner``, only that runner's (an unknown name
    is a usage error); with ``core_only``, only the core runners'. Only done when a contract
    names a tool, or ``--runner`` is given. With no ``[system.runner]`` key configured, the
    runners hz ships are not imported: their defaults are declared
    (``hz.runtime.runners.registry.DEFAULT_TOOLS``)."""
    from hz.compiler.checks.tools import ToolPolicy
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.config.layers import load_config
    from hz.runtime.runners import registry
    from hz.runtime.settings.keys import RUNNER

    try:
        config = load_config(cwd=Path.cwd())
    except HzError:
        config = None  # a broken configuration is hz doctor's to report, not validate's
    # Unconfigured, every runner's settings are its defaults (as with a broken configuration).
    defaults = config is None or not config.table(RUNNER)
    if runner:
        names = [runner]
    elif core_only:
        names = list(registry.CORE)
    else:
        names = [name for name, _ in registry.available()]
    accepted: dict[str, tuple[str, ...]] = {}
    for name in names:
        target = registry.target(name)
        if defaults and target in registry.DEFAULT_TOOLS:
            declared = registry.DEFAULT_TOOLS[target]
            if declared is not None:
                accepted[name] = declared
            continue
        try:
            runner_class = registry.resolve(name)
        except HzError as e:
            if runner:
                from hz.runtime.artifacts.printable import printable

                # click prints the message as it is; the name in it is the operator's text.
                raise click.BadParameter(printable(e.message), param_hint="'--runner'") from e
            continue
        accepted_tools = getattr(runner_class, "accepted_tools", None)
        if accepted_tools is None:
            continue  # this runner does not check tool names
        model = runner_class.settings_model
        try:
            settings = model.from_config(config) if config is not None else None
        except (HzError, ValueError):
            settings = None  # its configuration is incomplete: judge by its defaults
        accepted[name] = tuple(accepted_tools(settings or model.model_construct()))
    return ToolPolicy(accepted, runner)


def project_files(problems: Sequence[Diagnostic]) -> int:
    """How many project files (hz.toml) the ``problems`` of the authoring options are in: they
    count among the checked files, so a summary never names more files with errors than it
    checked. (A clean hz.toml is not counted: the summary counts what was given.)"""
    return len({d.file for d in problems})


@click.command(
    short_help="Print a JSON Schema (contract, job, packet, receipt, result, runs).",
    epilog=examples("hz schema > contract.schema.json", "hz schema runs"),
)
@click.argument("kind", type=click.Choice(SCHEMA_KINDS), default="contract", required=False)
def schema(kind: str) -> int:
    """Print the JSON Schema of a contract (default), a job, a packet, a receipt, a result, or
    runs: the documents of hz runs, hz submit and hz worker with --format json."""
    if kind == "contract":
        from hz.compiler.checks.structure import schema_text

        text = schema_text()
    else:
        import hz.runtime.artifacts.schemas

        text = hz.runtime.artifacts.schemas.schema_text(kind)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


@click.command(
    short_help="Show the documentation of a rule code.",
    epilog=examples("hz explain HZ102", "hz explain"),
)
@click.argument("code", required=False)
@click.option(
    "--cron",
    metavar="EXPR",
    help="Instead of a rule: check a five-field cron expression and list its next slots.",
)
@click.option(
    "--timezone", "zone", default="UTC", show_default=True, help="The zone --cron is read in."
)
@click.option("--at", "at", type=AT, default=None, help="List --cron's slots after this time.")
def explain(code: str | None, cron: str | None, zone: str, at: datetime | None) -> int:
    """Print the documentation of a rule code such as HZ101; without CODE, list every code
    with its title. With --cron, the next slots of a schedule, in UTC and in its zone (as
    hz worker fires them: docs/schedules.md)."""
    from hz.compiler.rules.docs import rule_doc
    from hz.compiler.rules.registry import RULES

    if cron is not None:
        return _explain_cron(cron, zone, at)

    if code is None:
        sys.stdout.writelines(f"{rule.code}  {rule.label}\n" for _, rule in sorted(RULES.items()))
        return 0
    sys.stdout.write(rule_doc(code))
    return 0


def _explain_cron(cron: str, zone: str, at: datetime | None) -> int:
    from zoneinfo import ZoneInfo

    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.schedule import (
        NO_SLOT,
        Schedule,
        cron_problem,
        next_slots,
        slot_name,
        zone_problem,
    )

    problem = cron_problem(cron)
    if problem is not None:
        raise HzError(f"{printable(repr(cron[:200]))}: {printable(problem[1])}")
    wrong_zone = zone_problem(zone)
    if wrong_zone is not None:
        raise HzError(printable(wrong_zone))
    schedule = Schedule(cron=" ".join(cron.split()), timezone=zone)
    found = next_slots(schedule, at or datetime.now(UTC), 5)
    for slot in found:  # each a wall time of the zone: within the calendar
        local = slot.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")
        click.echo(f"{slot_name(slot)}  {local}")
    if not found:
        click.echo(f"next slots: {NO_SLOT}")
    return 0

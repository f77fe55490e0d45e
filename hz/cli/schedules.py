"""``hz schedules``, ``hz plan`` and ``hz graph``: the jobs that run by themselves, what they
are forecast to spend, and how they chain. Each reads compiled jobs (``hz compile``'s
directory, ``build/jobs`` by default)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hz.cli.fetching import AT
from hz.cli.help import examples
from hz.cli.params import USD, format_choice
from hz.cli.runs import FORMAT, open_ledger
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Job
from hz.runtime.artifacts.printable import printable, printable_json

if TYPE_CHECKING:
    from collections.abc import Callable

    from hz.runtime.artifacts.problem import Problem

DEFAULT_JOBS = Path("build/jobs")
#: How many of a job's next slots ``hz schedules list`` shows.
SHOWN_SLOTS = 3
#: The forecast's horizon.
PLAN_DAYS = 30
#: The most jobs a directory may hold for these commands.
MAX_JOBS = 10_000

JOBS_DIR = click.argument(
    "directory", required=False, type=click.Path(path_type=Path), default=DEFAULT_JOBS
)
AT_OPTION = click.option(
    "--at", "at", type=AT, default=None, help="Count from this time instead of now (ISO 8601)."
)


def load_jobs(directory: Path) -> tuple[Job, ...]:
    """The jobs compiled into ``directory`` (``*.job.json``), by name. A job file is outside
    input, checked as ``hz compile`` checks contracts: every name a slug (a name becomes a
    file name, a node id, a workflow's text), one file per name (HZ601), every job it
    follows or reads in the directory (HZ610) and no cycle (HZ611: a worker would queue the
    jobs after each other forever). An ``HzError`` says the first problem."""
    from hz.runtime.artifacts.models import read_artifact

    if not directory.is_dir():
        raise HzError(
            f"{printable(str(directory))} is not a directory of compiled jobs",
            hint="compile the contracts first: hz compile contracts/ --out build/jobs",
        )
    jobs: dict[str, Job] = {}
    files: dict[str, Path] = {}
    for path in sorted(directory.glob("*.job.json"))[: MAX_JOBS + 1]:
        found = read_artifact(path)
        if not isinstance(found, Job):
            raise HzError(f"{printable(str(path))} is a packet, not a job")
        _check_names(found, path)
        if found.name in jobs:
            raise HzError(
                f"{printable(str(files[found.name]))} and {printable(str(path))} are both job "
                f"{found.name} [HZ601]",
                hint="two contracts with one name do not compile: keep one of the files",
            )
        jobs[found.name] = found
        files[found.name] = path
    if len(jobs) > MAX_JOBS:
        raise HzError(f"{printable(str(directory))} holds more than {MAX_JOBS:,} jobs")
    _check_chains(jobs, directory)
    return tuple(jobs[name] for name in sorted(jobs))


def _check_names(job: Job, path: Path) -> None:
    from hz.cli.params import JOB_NAME

    names = [job.name, *job.after]
    names += [spec.upstream.job for spec in job.inputs.values() if spec.upstream is not None]
    for name in names:
        if JOB_NAME.fullmatch(name) is None:
            raise HzError(
                f"{printable(str(path))}: {printable(repr(name[:80]))} is not a job name (a "
                "lowercase slug: letters, digits and single hyphens)",
                hint="compile the contracts again: hz compile contracts/ --out build/jobs",
            )


def _check_chains(jobs: dict[str, Job], directory: Path) -> None:
    from hz.compiler.chains import cycles

    graph: dict[str, list[str]] = {}
    for job in jobs.values():
        reads = [spec.upstream.job for spec in job.inputs.values() if spec.upstream is not None]
        for upstream in (*job.after, *reads):
            if upstream not in jobs:
                raise HzError(
                    f"job {job.name} follows or reads job {upstream}, which is not in "
                    f"{printable(str(directory))} [HZ610]",
                    hint="compile the contracts together into one directory of jobs",
                )
        graph[job.name] = sorted(set(job.after) | set(reads))
    found = cycles(graph)
    if found:
        path = " <- ".join([*found[0], found[0][0]])
        raise HzError(
            f"job {found[0][0]} in {printable(str(directory))} depends on itself: {path} [HZ611]",
            hint="a job must not be queued by, or read the draft of, a job that depends on it: "
            "remove one link of the cycle and compile again",
        )


def _now(at: datetime | None) -> datetime:
    return at if at is not None else datetime.now(UTC)


@click.group(
    short_help="List, pause and resume the jobs hz worker fires by schedule.",
    epilog=examples("hz schedules list", "hz schedules pause weekly-status"),
)
def schedules() -> None:
    """The scheduled jobs of a directory of compiled jobs (hz worker --schedules DIR fires
    them; docs/schedules.md)."""


@schedules.command(
    "list",
    epilog=examples("hz schedules list build/jobs", "hz schedules list --format json"),
)
@JOBS_DIR
@AT_OPTION
@FORMAT
def list_(directory: Path, at: datetime | None, fmt: str) -> int:
    """Each scheduled job: its cron and time zone, whether it is paused, its next slots, and
    the newest slot that has a run (with the run's id and state)."""
    from hz.runtime.artifacts.schedule import NO_SLOT, describe, next_slots, slot_name
    from hz.runtime.ledger.schedules import CLOCK_ALLOWANCE

    jobs = [job for job in load_jobs(directory) if job.schedule is not None]
    ledger, _ = open_ledger(fmt)
    now = _now(at)
    paused = ledger.paused_jobs()
    documents: list[dict[str, Any]] = []
    for job in jobs:
        assert job.schedule is not None
        last = ledger.last_slot(job.name, now.timestamp() + CLOCK_ALLOWANCE)
        documents.append(
            {
                "job": job.name,
                "cron": job.schedule.cron,
                "timezone": job.schedule.timezone,
                "catch_up": job.schedule.catch_up,
                "jitter_seconds": job.schedule.jitter_seconds,
                "paused": job.name in paused,
                "next": [slot_name(s) for s in next_slots(job.schedule, now, SHOWN_SLOTS)],
                "last": None
                if last is None
                else {
                    "slot": slot_name(datetime.fromtimestamp(last[0], UTC)),
                    "run": last[1].id,
                    "state": last[1].state,
                },
                "_describe": describe(job.schedule),
            }
        )
    if fmt == "json":
        for document in documents:
            document.pop("_describe")
        click.echo(printable_json({"kind": "schedules", "schedules": documents}))
        return 0
    if not documents:
        click.echo(f"no scheduled jobs in {printable(str(directory))}")
    for document in documents:
        state = " (paused)" if document["paused"] else ""
        click.echo(f"{printable(document['job'])}{state}: {printable(str(document['_describe']))}")
        click.echo(f"  next: {', '.join(document['next']) or NO_SLOT}")
        last = document["last"]
        shown = "never fired" if last is None else f"{last['slot']} {last['run']} {last['state']}"
        click.echo(f"  last: {printable(shown)}")
    return 0


def _pause(job_name: str, directory: Path, paused: bool) -> int:
    jobs = {job.name: job for job in load_jobs(directory)}
    job = jobs.get(job_name)
    if job is None or job.schedule is None:
        from hz.runtime.artifacts.suggest import did_you_mean_suffix

        scheduled = [name for name, each in jobs.items() if each.schedule is not None]
        raise HzError(
            f"no scheduled job {printable(repr(job_name))} in {printable(str(directory))}"
            + did_you_mean_suffix(job_name, scheduled),
            hint="hz schedules list shows the scheduled jobs",
        )
    ledger, _ = open_ledger("text")
    changed = ledger.set_paused(job_name, paused, datetime.now(UTC).timestamp())
    word = "paused" if paused else "resumed"
    if not changed:
        click.echo(f"{job_name}: already {word}")
    elif paused:
        click.echo(f"{job_name}: paused; its slots do not fire until hz schedules resume")
    else:
        click.echo(f"{job_name}: resumed; slots from now on fire (missed ones do not)")
    return 0


@schedules.command(epilog=examples("hz schedules pause weekly-status"))
@click.argument("job")
@click.argument("directory", required=False, type=click.Path(path_type=Path), default=DEFAULT_JOBS)
def pause(job: str, directory: Path) -> int:
    """Stop firing JOB's slots (every worker on this ledger) until resumed."""
    return _pause(job, directory, True)


@schedules.command(epilog=examples("hz schedules resume weekly-status"))
@click.argument("job")
@click.argument("directory", required=False, type=click.Path(path_type=Path), default=DEFAULT_JOBS)
def resume(job: str, directory: Path) -> int:
    """Fire JOB's slots again, from now on (the slots missed while paused are not caught
    up)."""
    return _pause(job, directory, False)


@dataclass(frozen=True, slots=True)
class Forecast:
    job: str
    slots: int
    max_usd: float
    median_usd: float | None
    runs: int
    #: Recorded costs passed over: not a finite amount from 0 to a billion dollars.
    passed_over: int = 0

    @property
    def ceiling(self) -> float:
        return self.slots * self.max_usd

    @property
    def expected(self) -> float | None:
        return None if self.median_usd is None else self.slots * self.median_usd


def forecast(jobs: tuple[Job, ...], ledger: Any, now: datetime) -> list[Forecast]:
    """Each scheduled job's slots in the next ``PLAN_DAYS`` days, its ceiling per run, and
    the median cost of its completed runs in the ledger."""
    from hz.runtime.artifacts.schedule import count_slots

    end = now + timedelta(days=PLAN_DAYS)
    out = []
    for job in jobs:
        if job.schedule is None:
            continue
        count = count_slots(job.schedule, now, end)
        costs, passed_over = ledger.completed_costs(job.name)
        median = statistics.median(costs) if costs else None
        out.append(Forecast(job.name, count, job.budget.max_usd, median, len(costs), passed_over))
    return out


def _usd(amount: float | None) -> str:
    return "-" if amount is None else f"${amount:,.2f}"


@click.command(
    short_help="Forecast 30 days of scheduled spend against the budget.",
    epilog=examples("hz plan build/jobs", "hz plan build/jobs --fail-over 500"),
)
@JOBS_DIR
@AT_OPTION
@click.option(
    "--fail-over",
    "fail_over",
    type=USD,
    default=None,
    metavar="USD",
    help="Exit 1 when the 30-day ceiling (slots x max_usd) is over USD.",
)
@format_choice(
    ("text", "json", "markdown"),
    "text",
    "text for people; json: one JSON document; markdown: a table for a CI step summary.",
)
def plan(directory: Path, at: datetime | None, fail_over: float | None, fmt: str) -> int:
    """For the next 30 days: each scheduled job's slots x its max_usd (the ceiling) and x
    the median cost of its completed runs (the expectation), per job and in total, against
    [system.budget] max_usd_per_day. Jobs queued only by hz.after are not counted.

    \b
    Exit status: 0 within, 1 the ceiling is over --fail-over."""
    from hz.runtime.config.tables import BudgetSettings

    now = _now(at)
    if now > datetime.max.replace(tzinfo=UTC) - timedelta(days=PLAN_DAYS + 1):
        raise click.BadParameter(
            f"the {PLAN_DAYS} days from {now.strftime('%Y-%m-%dT%H:%M:%SZ')} pass the end of the "
            "calendar (9999-12-31)",
            param_hint="--at",
        )
    jobs = load_jobs(directory)
    ledger, config = open_ledger("json" if fmt == "markdown" else fmt)
    rows = forecast(jobs, ledger, now)
    for row in rows:
        if row.passed_over:
            click.echo(
                f"hz: plan: {printable(row.job)}: {row.passed_over} recorded "
                f"cost{'s' if row.passed_over != 1 else ''} passed over (not a finite amount "
                "from $0 to $1,000,000,000: a damaged or hand-edited row)",
                err=True,
            )
    ceiling = sum(row.ceiling for row in rows)
    known = [row.expected for row in rows if row.expected is not None]
    expected = sum(known) if known else None
    per_day = BudgetSettings.from_config(config).max_usd_per_day
    monthly = None if per_day is None else per_day * PLAN_DAYS
    over = fail_over is not None and ceiling > fail_over
    if fmt == "json":
        document = {
            "kind": "plan",
            "from": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "days": PLAN_DAYS,
            "jobs": [
                {
                    "job": row.job,
                    "slots": row.slots,
                    "max_usd": row.max_usd,
                    "ceiling_usd": round(row.ceiling, 6),
                    "median_usd": row.median_usd,
                    "completed_runs": row.runs,
                    "costs_passed_over": row.passed_over,
                    "expected_usd": None if row.expected is None else round(row.expected, 6),
                }
                for row in rows
            ],
            "ceiling_usd": round(ceiling, 6),
            "expected_usd": None if expected is None else round(expected, 6),
            "budget_usd": monthly,
            "fail_over_usd": fail_over,
            "over": over,
        }
        click.echo(json.dumps(document, allow_nan=False))
        return 1 if over else 0
    if fmt == "markdown":
        click.echo(_markdown(rows, now, ceiling, expected, monthly, fail_over))
        return 1 if over else 0
    table = [("job", "slots", "max_usd", "ceiling", "median", "expected")]
    table += [
        (
            printable(row.job),
            str(row.slots),
            _usd(row.max_usd),
            _usd(row.ceiling),
            _usd(row.median_usd),
            _usd(row.expected),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(6)]
    for line in table:
        cells = [line[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)
        ]
        click.echo("  ".join(cells).rstrip())
    click.echo(
        f"{PLAN_DAYS} days from {now.strftime('%Y-%m-%dT%H:%M:%SZ')}: ceiling {_usd(ceiling)}, "
        f"expected {_usd(expected)}"
        + ("" if expected is None or len(known) == len(rows) else " (jobs without runs: -)")
    )
    if monthly is not None:
        within = "within" if ceiling <= monthly else "over"
        click.echo(
            f"[system.budget] max_usd_per_day {_usd(per_day)} x {PLAN_DAYS} = {_usd(monthly)}: "
            f"the ceiling is {within} it"
        )
    if over:
        click.echo(
            f"hz: error: the {PLAN_DAYS}-day ceiling {_usd(ceiling)} is over --fail-over "
            f"{_usd(fail_over)}",
            err=True,
        )
        return 1
    return 0


def _cell(text: str) -> str:
    """``text`` in a Markdown table cell of a step summary (GitHub renders its HTML): shown
    escaped, no ``|`` to end the cell, no tag."""
    import html

    return html.escape(printable(text)).replace("|", "&#124;").replace("\\", "&#92;")


def _markdown(
    rows: list[Forecast],
    now: datetime,
    ceiling: float,
    expected: float | None,
    monthly: float | None,
    fail_over: float | None,
) -> str:
    """The forecast as Markdown (the GitHub Action's step summary)."""
    lines = [
        f"### hz plan: {PLAN_DAYS} days from {now.strftime('%Y-%m-%dT%H:%M:%SZ')}",
        "",
        "| job | slots | max_usd | ceiling | median | expected |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {_cell(row.job)} | {row.slots} | {_usd(row.max_usd)} | {_usd(row.ceiling)} | "
        f"{_usd(row.median_usd)} | {_usd(row.expected)} |"
        for row in rows
    ]
    lines += ["", f"Ceiling **{_usd(ceiling)}**, expected **{_usd(expected)}**."]
    if monthly is not None:
        lines.append(f"Budget ([system.budget] max_usd_per_day x {PLAN_DAYS}): {_usd(monthly)}.")
    if fail_over is not None:
        word = "over" if ceiling > fail_over else "within"
        lines.append(f"The ceiling is {word} --fail-over {_usd(fail_over)}.")
    return "\n".join(lines).replace("$", "\\$")


def firing_maker(
    config: Any,
    workdir: Path,
    directory: Path,
    note: Callable[[str], None],
    ledger: Any | None = None,
) -> Any:
    """The worker's ``Maker``: renders an occasion's job, fetching its read inputs with
    windows resolved at the slot (or now, for a follower), and refuses (``HzError``, an
    occasion that could not be made) a packet whose publishes the ``[publish]`` policy does
    not allow, before any session is spent on it. The warnings of a packet made
    (HZ728: a since-last-success window passed over a run, or is empty) are lines for
    ``note``, the worker's log, as ``hz render`` says them on stderr. ``since-last-success``
    reads ``ledger``, the worker's: a ledger opened per slot would never be closed there (no
    command ends between slots)."""
    from hz.cli.fetching import job_fetch
    from hz.cli.publish import refuse_undeliverable
    from hz.compiler.render.packet import TemplatePlace, render_job
    from hz.runtime.ledger.schedules import Occasion

    def make(occasion: Occasion) -> Any:
        where = str(directory / f"{occasion.job.name}.job.json")
        fetch = job_fetch(
            config, workdir, where=where, at=occasion.slot, ledger=ledger, pinned=occasion.pinned()
        )
        packet, problems = render_job(occasion.job, place=TemplatePlace(where), fetch=fetch)
        if packet is None:
            shown = "; ".join(f"[{p.code}] {p.message}" for p in problems[:3])
            raise HzError(f"{occasion.key}: cannot render {occasion.job.name}: {shown}")
        for problem in problems:  # beside a packet, only warnings
            note(_warning_line(occasion.key, problem))
        try:  # as hz run and hz submit: no session for a draft that could not be delivered
            refuse_undeliverable(config, packet, workdir)
        except HzError as e:
            raise HzError(f"{occasion.key}: {e.message}") from e
        return packet

    return make


def _warning_line(key: str, problem: Problem) -> str:
    """One warning of a fired occasion, with its hint on a second line (one write, so that
    another thread's line never falls between them)."""
    said = f"hz: worker: {printable(key)}: warning: {printable(problem.message)} [{problem.code}]"
    return said if not problem.hint else f"{said}\n  hint: {printable(problem.hint)}"


@schedules.command(
    epilog=examples(
        "hz schedules export --github --uses acme/hz@v0.1.0",
        "hz schedules export --github --uses acme/hz@v0.1.0 build/jobs --out .github/workflows",
    )
)
@JOBS_DIR
@click.option(
    "--github", "github", is_flag=True, required=True, help="Write GitHub Actions workflows."
)
@click.option(
    "--uses",
    required=True,
    metavar="OWNER/REPO@REF",
    help="The hz action each workflow runs (your copy of hz's repository and a release tag).",
)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path(".github/workflows"),
    show_default=True,
    help="Where the workflow files go (hz-NAME.yml).",
)
def export(directory: Path, github: bool, uses: str, out: Path) -> int:
    """Write one GitHub Actions workflow per scheduled job (on: schedule, and
    workflow_dispatch to run it by hand) that runs the job through hz's action: for teams
    without a worker. GitHub reads cron in UTC only and may start a scheduled workflow late or
    not at all under load; a job whose schedule is in another time zone is not exported
    (stderr says which). The operator configuration comes from the secret HZ_CONFIG."""
    import re

    import yaml

    from hz.runtime.artifacts.files import write_file

    if not github:
        raise click.UsageError("say what to export: --github")
    if not re.fullmatch(
        r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[A-Za-z0-9_./-]+", uses
    ):
        raise click.BadParameter(
            f"{printable(repr(uses[:80]))} is not OWNER/REPO@REF", param_hint="--uses"
        )
    jobs_dir = directory.as_posix()
    # The directory lands in the head comment and in the action's jobs-dir, where GitHub
    # evaluates ${{ }}: only a plain path (each name is a checked slug, the cron croniter's).
    if not re.fullmatch(r"[A-Za-z0-9_.@+/-]+", jobs_dir):
        raise click.BadParameter(
            f"{printable(repr(jobs_dir[:80]))}: a directory to export from is a plain path "
            "(letters, digits and _ . @ + / -)",
            param_hint="DIRECTORY",
        )
    written = 0
    for job in load_jobs(directory):
        if job.schedule is None:
            continue
        if job.schedule.timezone != "UTC":
            click.echo(
                f"hz: {job.name}: not exported: its schedule is in {job.schedule.timezone}, "
                "and GitHub reads cron in UTC only",
                err=True,
            )
            continue
        workflow = {
            "name": f"hz: {job.name}",
            "on": {"schedule": [{"cron": job.schedule.cron}], "workflow_dispatch": None},
            "permissions": {"contents": "read"},
            "concurrency": {"group": f"hz-{job.name}", "cancel-in-progress": False},
            "jobs": {
                "run": {
                    "runs-on": "ubuntu-latest",
                    "timeout-minutes": job.timeout_seconds // 60 + 10,
                    "steps": [
                        {"uses": "actions/checkout@v4"},
                        {
                            "uses": uses,
                            "with": {
                                "jobs-dir": jobs_dir,
                                "run": job.name,
                                "compile": "check",
                                "config": "${{ secrets.HZ_CONFIG }}",
                            },
                        },
                    ],
                }
            },
        }
        head = (
            f"# Written by hz schedules export --github from {jobs_dir}/"
            f"{job.name}.job.json:\n# change the contract's hz.schedule, compile, and export "
            "again.\n"
        )
        text = head + yaml.safe_dump(workflow, sort_keys=False, width=100)
        out.mkdir(parents=True, exist_ok=True)
        write_file(out / f"hz-{job.name}.yml", text)
        click.echo(str(out / f"hz-{job.name}.yml"))
        written += 1
    if not written:
        click.echo(f"hz: no scheduled job in {printable(str(directory))} was exported", err=True)
    return 0

"""``hz graph``: the compiled jobs, their schedules and their chains (``hz.after``)."""

from __future__ import annotations

from pathlib import Path

import click

from hz.cli.help import examples
from hz.cli.params import format_choice
from hz.runtime.artifacts.models import Job
from hz.runtime.artifacts.printable import printable, printable_json


def _edges(jobs: tuple[Job, ...]) -> list[tuple[str, str]]:
    names = {job.name for job in jobs}
    return sorted(
        (upstream, job.name) for job in jobs for upstream in job.after if upstream in names
    )


@click.command(
    short_help="Draw the jobs, their schedules and their chains.",
    epilog=examples("hz graph build/jobs", "hz graph build/jobs --format mermaid"),
)
@click.argument(
    "directory", required=False, type=click.Path(path_type=Path), default=Path("build/jobs")
)
@format_choice(
    ("text", "mermaid", "dot", "json"),
    "text",
    "text for people; mermaid or dot to draw; json: one JSON document.",
)
def graph(directory: Path, fmt: str) -> int:
    """Each compiled job with its schedule, and an edge from each job to the jobs queued
    after it completes (hz.after)."""
    from hz.cli.schedules import load_jobs

    jobs = load_jobs(directory)
    edges = _edges(jobs)
    crons = {job.name: job.schedule.cron for job in jobs if job.schedule is not None}
    # Node ids by position (n0, n1, ...): one per job whatever its name (a name such as
    # ``end`` or ``click`` is a Mermaid keyword); names appear only in escaped labels.
    ids = {job.name: f"n{index}" for index, job in enumerate(jobs)}
    if fmt == "json":
        document = {
            "kind": "graph",
            "jobs": [
                {
                    "job": job.name,
                    "schedule": None if job.schedule is None else job.schedule.model_dump(),
                    "after": list(job.after),
                }
                for job in jobs
            ],
            "edges": [{"from": a, "to": b, "kind": "after"} for a, b in edges],
        }
        click.echo(printable_json(document))
    elif fmt == "mermaid":
        lines = ["flowchart LR"]
        for job in jobs:
            label = _mermaid(job.name) + (
                f"<br/>{_mermaid(crons[job.name])}" if job.name in crons else ""
            )
            lines.append(f'  {ids[job.name]}["{label}"]')
        lines += [f"  {ids[a]} -->|after| {ids[b]}" for a, b in edges]
        click.echo("\n".join(lines))
    elif fmt == "dot":
        lines = ["digraph hz {", "  rankdir=LR;"]
        for job in jobs:
            label = _dot(job.name) + (f"\\n{_dot(crons[job.name])}" if job.name in crons else "")
            lines.append(f'  {ids[job.name]} [label="{label}"];')
        lines += [f'  {ids[a]} -> {ids[b]} [label="after"];' for a, b in edges]
        lines.append("}")
        click.echo("\n".join(lines))
    else:
        for job in jobs:
            when = f" [{printable(crons[job.name])}]" if job.name in crons else ""
            followers = [printable(b) for a, b in edges if a == job.name]
            then = f" -> {', '.join(followers)}" if followers else ""
            click.echo(f"{printable(job.name)}{when}{then}")
    return 0


#: What a Mermaid label shows as itself; any other character is written as its entity code.
_MERMAID_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,*/")


def _mermaid(text: str) -> str:
    """``text`` for a quoted Mermaid label: every other character as ``#NNN;``."""
    return "".join(c if c in _MERMAID_PLAIN else f"#{ord(c)};" for c in text)


def _dot(text: str) -> str:
    """``text`` for a quoted DOT string: backslashes and quotes escaped, control characters
    shown as escapes."""
    return printable(text).replace("\\", "\\\\").replace('"', '\\"')

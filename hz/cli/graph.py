"""``hz graph``: the compiled jobs, their schedules and their chains (``hz.after``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hz.cli.help import examples
from hz.cli.params import format_choice
from hz.runtime.artifacts.models import Job
from hz.runtime.artifacts.printable import printable


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
        click.echo(json.dumps(document))
    elif fmt == "mermaid":
        lines = ["flowchart LR"]
        for job in jobs:
            label = job.name + (f"<br/>{crons[job.name]}" if job.name in crons else "")
            lines.append(f'  {_id(job.name)}["{label}"]')
        lines += [f"  {_id(a)} -->|after| {_id(b)}" for a, b in edges]
        click.echo("\n".join(lines))
    elif fmt == "dot":
        lines = ["digraph hz {", "  rankdir=LR;"]
        for job in jobs:
            label = job.name + (f"\\n{crons[job.name]}" if job.name in crons else "")
            lines.append(f'  "{job.name}" [label="{label}"];')
        lines += [f'  "{a}" -> "{b}" [label="after"];' for a, b in edges]
        lines.append("}")
        click.echo("\n".join(lines))
    else:
        for job in jobs:
            when = f" [{printable(crons[job.name])}]" if job.name in crons else ""
            followers = [b for a, b in edges if a == job.name]
            then = f" -> {', '.join(followers)}" if followers else ""
            click.echo(f"{job.name}{when}{then}")
    return 0


def _id(name: str) -> str:
    """A job's node id: its name with hyphens as underscores (a slug otherwise)."""
    return name.replace("-", "_")

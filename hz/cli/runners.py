"""``hz runners``: every registered runner (core and plugins), where it comes from, and which
limits it enforces and how (its ``Capabilities`` given the effective ``[system.runner]``
settings, e.g. ``turns`` hard for claude-code with a ``max_turns``).

Below that, each runner's capability descriptor (``hz.runtime.runners.capabilities``): every
capability ``supported``, ``unsupported`` or ``unverified`` for its pinned CLI; ``--format json``
adds the evidence (the tests that prove it) and the reasons.

A runner that fails to load is listed with the reason instead of its capabilities, and makes
the exit status 1, so a broken plugin shows up here before a run needs it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import click

from hz.cli.help import examples
from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.config.layers import Config, load_config
from hz.runtime.runners import registry
from hz.runtime.runners.capabilities import NAMES, Descriptor, descriptor_of
from hz.runtime.runners.protocol import LIMITS, Capabilities

LEGEND = (
    "hard         the session is stopped at the limit",
    "advisory     passed on to the agent, not guaranteed",
    "unsupported  not enforced by this runner (each result's limits_unenforced names "
    "those that applied to its run)",
)


@dataclass(frozen=True, slots=True)
class RunnerRow:
    name: str
    source: str
    capabilities: Capabilities | None
    error: str | None = None
    descriptor: Descriptor | None = None

    def to_json(self) -> dict[str, object]:
        caps = None if self.capabilities is None else asdict(self.capabilities)
        return {
            "name": self.name,
            "source": self.source,
            "capabilities": caps,
            "descriptor": None if self.descriptor is None else self.descriptor.to_json(),
            "error": self.error,
        }


def collect(config: Config) -> list[RunnerRow]:
    """Each runner's capabilities with the effective settings; a runner those settings do not
    configure (e.g. ``command`` without a command) shows what it enforces when configured."""
    rows = []
    for name, source in registry.available():
        try:
            runner_class = registry.resolve(name)
        except ConfigError as e:
            rows.append(RunnerRow(name, source, None, e.message))
            continue
        try:
            settings = runner_class.settings_model.from_config(config)
        except ConfigError:
            settings = None
        rows.append(
            RunnerRow(
                name,
                source,
                runner_class.capabilities(settings),
                descriptor=descriptor_of(runner_class, settings),
            )
        )
    return rows


def format_text(rows: list[RunnerRow]) -> str:
    header = ("runner", "source", *LIMITS)
    table: list[tuple[str, ...]] = [header]
    for row in rows:
        if row.capabilities is None:
            table.append((row.name, row.source, *("-" for _ in LIMITS)))
        else:
            table.append((row.name, row.source, *(getattr(row.capabilities, n) for n in LIMITS)))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    lines += [f"{row.name}: cannot be loaded: {row.error}" for row in rows if row.error]
    lines += ["", *LEGEND, "", *descriptor_lines(rows)]
    return "\n".join(lines) + "\n"


def descriptor_lines(rows: list[RunnerRow]) -> list[str]:
    """One line per capability, one column per runner that loaded."""
    described = [row for row in rows if row.descriptor is not None]
    header = ("capability", *(row.name for row in described))
    table: list[tuple[str, ...]] = [header]
    for name in NAMES:
        cells = (row.descriptor.mark(name).support for row in described if row.descriptor)
        table.append((name, *cells))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    return [
        *lines,
        "",
        "evidence (the tests that prove each) and reasons: hz runners --format json",
    ]


@click.command(epilog=examples("hz runners", "hz runners --format json"))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def runners(fmt: str) -> int:
    """List the registered runners, their source and the limits each enforces."""
    rows = collect(load_config(cwd=Path.cwd()))
    if fmt == "json":
        click.echo(json.dumps({"runners": [r.to_json() for r in rows]}, indent=2))
    else:
        click.echo(format_text(rows), nl=False)
    return 1 if any(row.error for row in rows) else 0

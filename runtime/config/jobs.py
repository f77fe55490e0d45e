"""Per-job tables: ``[jobs."NAME"]`` in an operator file binds another runner, other runner
settings or another budget ceiling for the jobs whose name matches ``NAME``.

A jobs table may set ``agent_runner`` (as ``[capabilities]``), ``max_usd_ceiling`` (as
``[authoring]``) and every ``[system.runner]`` key; each value is checked by the same model as
in its base table. ``NAME`` is a job's name or an ``fnmatch`` glob (``"review-*"``), matched
case-sensitively. When several tables match a job, one applies, the most specific
(``specificity``): an exact name before any glob, then the glob with more characters that are
not wildcards, then the table defined last (a higher layer, or later in one file). A table
named in several layers is one table, merged key by key as the base tables are.

The effective configuration of a job (``for_job``) is the base configuration with the applying
table's keys over it, whatever layer set the base key: the job's table is the more specific
rule. Only operator files hold jobs tables; a project ``hz.toml`` never does (HZ801), and no
``HZ_*`` variable names one.
"""

from __future__ import annotations

import fnmatch
import functools
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.settings.keys import AUTHORING, CAPABILITIES, RUNNER

JOBS = "jobs"
#: A job's name has at most 64 characters; a glob for names may take more, not thousands.
MAX_PATTERN = 128
#: The keys a jobs table takes from tables other than ``[system.runner]``.
BASE_TABLE = {"agent_runner": CAPABILITIES, "max_usd_ceiling": AUTHORING}
_WILDCARDS = frozenset("*?[]!")


@dataclass(frozen=True, slots=True)
class JobEntry:
    """One key of one jobs table as a file sets it: the base table it overrides, and where."""

    pattern: str
    table: str
    key: str
    value: Any
    where: str


@dataclass(frozen=True, slots=True)
class JobTable:
    """``[jobs."PATTERN"]`` merged over the layers: its settings (base table names, origins in
    the files) and when it was defined last (``order``: later wins a tie)."""

    pattern: str
    settings: tuple[Any, ...]  # ``hz.runtime.config.layers.Setting``
    order: int

    @property
    def header(self) -> str:
        return f"[{JOBS}.{quoted(self.pattern)}]"

    @property
    def where(self) -> str:
        """Where the table's first key was set (``path:line:col``)."""
        return self.settings[0].origin.where if self.settings else ""

    def matches(self, job: str) -> bool:
        return fnmatch.fnmatchcase(job, self.pattern)

    def specificity(self) -> tuple[bool, int, int]:
        literal = sum(c not in _WILDCARDS for c in self.pattern)
        return (not is_glob(self.pattern), literal, self.order)


def quoted(pattern: str) -> str:
    return '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'


def is_glob(pattern: str) -> bool:
    return any(c in "*?[" for c in pattern)


def key_table(key: str) -> str:
    return BASE_TABLE.get(key, RUNNER)


def check_pattern(pattern: str, where: str) -> None:
    """A job name or glob an operator can read back: bounded, without control characters."""
    from hz.runtime.artifacts.printable import printable

    if not pattern:
        raise ConfigError(f'{where}: a jobs table needs a job name or glob, got ""')
    if len(pattern) > MAX_PATTERN:
        raise ConfigError(
            f"{where}: the job name or glob of a jobs table has {len(pattern)} characters, "
            f"more than {MAX_PATTERN}",
            hint='a job\'s name has at most 64 characters; a glob such as "review-*" names many',
        )
    if any(unicodedata.category(c).startswith("C") for c in pattern):
        raise ConfigError(
            f"{where}: the job name or glob {printable(quoted(pattern))} holds control characters",
            hint="job names are printable text",
        )


def first_jobs_line(text: str) -> tuple[int, int]:
    """Where the first jobs table starts: a ``[jobs.…]`` header or a ``jobs`` key."""
    for number, line in enumerate(text.splitlines(), start=1):
        bare = line.strip().replace(" ", "").replace("\t", "")
        for quote in "\"'":  # "jobs" and 'jobs' are the same key
            bare = bare.replace(f"{quote}{JOBS}{quote}", JOBS, 1)
        if bare.startswith((f"[{JOBS}.", f"[{JOBS}]", f"{JOBS}=", f"{JOBS}.")):
            return number, line.index(line.strip()[0]) + 1
    return 0, 0


def at(path: Path, line: int, column: int) -> str:
    return f"{path}:{line}:{column}" if line else str(path)


def _spellings(pattern: str) -> tuple[str, ...]:
    return (f"{JOBS}.{quoted(pattern)}", f"{JOBS}.'{pattern}'", f"{JOBS}.{pattern}")


def header_position(text: str, pattern: str) -> tuple[int, int]:
    """Where ``[jobs."PATTERN"]`` starts (its header, or a dotted key or inline table)."""
    lines = text.splitlines()
    for spelling in _spellings(pattern):
        target = spelling.replace(" ", "")
        for number, line in enumerate(lines, start=1):
            stripped = line.strip()
            if stripped.startswith("[") and stripped.replace(" ", "").startswith(f"[{target}]"):
                return number, line.index("[") + 1
    for number, line in enumerate(lines, start=1):
        if pattern in line:
            return number, len(line) - len(line.lstrip()) + 1
    return _escaped_positions(text).get(pattern, (0, 0))


@functools.lru_cache(maxsize=4)
def _escaped_positions(text: str) -> dict[str, tuple[int, int]]:
    """Where each jobs table starts, for a table whose name the file writes with escapes
    (``[jobs."\\u202e"]``), in one pass: each header, and each line holding a backslash, is
    read as TOML on its own (a header, a dotted key under ``jobs``, or a key of a ``[jobs]``
    table)."""
    found: dict[str, tuple[int, int]] = {}
    section: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped.startswith("[") and "\\" not in stripped:
            continue
        try:
            path = _key_path(tomllib.loads(stripped))
        except tomllib.TOMLDecodeError:
            continue
        if stripped.startswith("["):
            section = path
        elif section:
            path = (*section, *path)
        if len(path) >= 2 and path[0] == JOBS:
            found.setdefault(path[1], (number, len(line) - len(stripped) + 1))
    return found


def _key_path(document: dict[str, Any]) -> tuple[str, ...]:
    """The keys of a one-line document down its first branch: ``jobs.x.model = 1`` gives
    ("jobs", "x", "model")."""
    path: list[str] = []
    node: Any = document
    while isinstance(node, dict) and node:
        key = next(iter(node))
        path.append(key)
        node = node[key]
    return tuple(path)


def key_position(text: str, pattern: str, key: str) -> tuple[int, int]:
    from hz.runtime.config.toml_file import locate

    for spelling in _spellings(pattern):
        found = locate(text, spelling.replace(" ", ""), key)
        if found != (0, 0):
            return found
    return 0, 0


def applying(tables: Iterable[JobTable], job: str) -> JobTable | None:
    """The jobs table that applies to ``job``: the most specific that matches, or None."""
    found = [table for table in tables if table.matches(job)]
    return max(found, key=JobTable.specificity) if found else None


def unknown_tables(tables: Iterable[JobTable], jobs: list[str]) -> list[tuple[JobTable, str]]:
    """The jobs tables no job of ``jobs`` matches, each with a did-you-mean suffix (the
    closest job name) or ``""``."""
    return [
        (table, did_you_mean_suffix(table.pattern, jobs))
        for table in tables
        if not any(table.matches(job) for job in jobs)
    ]

"""A project's ``hz.toml``: authoring options only, never what runs.

A repository is untrusted input. Its ``hz.toml`` may tune the authoring commands
(``[authoring] max_usd_ceiling``); any key that would choose the runner, the model, an
executable, a command or the environment is refused (HZ801), so cloning a hostile repository
and running ``hz`` in it cannot change what runs. Problems are data with rule codes, for the
authoring commands to report as diagnostics; ``load_config`` raises them as a ``ConfigError``.
"""

from __future__ import annotations

import itertools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.problem import Problem
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.config.jobs import JOBS, first_jobs_line
from hz.runtime.config.toml_file import TomlEntry, flatten, read_toml
from hz.runtime.settings.keys import AUTHORING, is_execution_key

PROJECT_FILE = "hz.toml"
_OPERATOR_FILES = "the site or user configuration file, HZ_CONFIG or HZ_* variables"


@dataclass(frozen=True, slots=True)
class ProjectFile:
    path: Path
    entries: tuple[TomlEntry, ...]
    problems: tuple[Problem, ...]


def find_project_file(start: Path) -> Path | None:
    """``hz.toml`` in ``start`` or a parent up to the repository root (a directory with ``.git``).

    Outside a repository only ``start`` itself is looked at, so a stray ``hz.toml`` in a
    shared parent such as ``/tmp`` never applies. Nor is any directory that others may have
    planted a ``.git`` and ``hz.toml`` in: the search stops below the first directory that is
    writable by all users (``/tmp``, a shared scratch space) or owned by another user than
    the one running hz (or root).
    """
    start = start.resolve()
    chain = list(itertools.takewhile(_ours, [start, *start.parents]))
    root = next((d for d in chain if (d / ".git").exists()), None)
    for directory in chain if root else [start]:
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
        if directory == root:
            break
    return None


def _ours(directory: Path) -> bool:
    try:
        info = directory.stat()
    except OSError:
        return False
    return info.st_uid in (os.getuid(), 0) and not info.st_mode & stat.S_IWOTH


def read_project_file(path: Path) -> ProjectFile:
    """The file's authoring entries and every problem in it (unreadable, bad TOML, bad keys)."""
    try:
        data, text = read_toml(path)
    except FileNotFoundError:
        missing = Problem("HZ803", "cannot read: no such file", str(path))
        return ProjectFile(path, (), (missing,))
    except ConfigError as e:
        return ProjectFile(path, (), (_toml_problem(path, e.message, e.hint),))
    entries: list[TomlEntry] = []
    problems: list[Problem] = []
    if JOBS in data:
        del data[JOBS]
        line, column = first_jobs_line(text)
        problems.append(
            Problem(
                "HZ801",
                f"[{JOBS}.…] tables choose the runner per job and are not allowed in a project "
                "hz.toml",
                str(path),
                line,
                column,
                hint="they belong in the operator's files: the site or user configuration file "
                "or HZ_CONFIG (no HZ_* variable sets one)",
            )
        )
    for entry in flatten(data, text):
        problem = _problem(path, entry)
        if problem is None:
            entries.append(entry)
        else:
            problems.append(problem)
    return ProjectFile(path, tuple(entries), tuple(problems))


def _toml_problem(path: Path, message: str, hint: str | None) -> Problem:
    # read_toml's message is "<file>[:line:col]: <detail>"; keep the position as data.
    location, _, detail = message.partition(": ")
    parts = location[len(str(path)) :].lstrip(":").split(":")
    line, column = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, 0)
    return Problem("HZ803", detail, str(path), line, column, hint=hint)


def _problem(path: Path, entry: TomlEntry) -> Problem | None:
    dotted = f"{entry.table}.{entry.key}" if entry.table else entry.key

    def problem(code: str, message: str, hint: str | None = None) -> Problem:
        return Problem(code, message, str(path), entry.line, entry.column, hint=hint)

    if is_execution_key(entry.table, entry.key):
        return problem(
            "HZ801",
            f"'{dotted}' configures execution and is not allowed in a project hz.toml",
            f"execution is configured by the operator: {_OPERATOR_FILES}",
        )
    from hz.runtime.config.tables import model_of, value_error  # pydantic: only now

    accepted = model_of(AUTHORING).keys()
    if entry.table != AUTHORING or entry.key not in accepted:
        known = [f"{AUTHORING}.{k}" for k in sorted(accepted)]
        return problem(
            "HZ802",
            f"unknown key '{dotted}' in a project hz.toml{did_you_mean_suffix(dotted, known)}",
            f"a project hz.toml may set: {', '.join(known)}",
        )
    wrong = value_error(entry.table, entry.key, entry.value)
    return None if wrong is None else problem("HZ804", wrong.message, wrong.hint)


def raise_problems(problems: tuple[Problem, ...]) -> None:
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(f"{problems[0]}{more}", hint=problems[0].hint)


def project_values(project: ProjectFile) -> dict[tuple[str, str], Any]:
    return {(e.table, e.key): e.value for e in project.entries}

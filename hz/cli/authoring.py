"""The authoring options every authoring command shares (``hz validate``, ``compile``, ...).

An explicit command-line value wins; otherwise the layered configuration decides, including a
project's ``hz.toml``, and an operator's jobs tables give the jobs they match a ceiling of their
own (as ``hz run`` holds them). Problems in that project file are the user's files, so they
come back as diagnostics (HZ801-HZ804) beside the contracts' own; operator configuration
problems raise ``ConfigError`` (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hz.compiler.diagnostics import Diagnostic

if TYPE_CHECKING:
    from hz.compiler.validate import Ceiling


@dataclass(frozen=True, slots=True)
class Authoring:
    #: The ceiling every contract is held to, or one per contract name when the operator's
    #: jobs tables give some jobs a ceiling of their own.
    max_usd_ceiling: Ceiling
    diagnostics: tuple[Diagnostic, ...] = ()


def authoring(max_usd_ceiling: float | None, *, cwd: Path | None = None) -> Authoring:
    from hz.runtime.config.layers import load_config
    from hz.runtime.config.project import find_project_file, read_project_file

    start = Path.cwd() if cwd is None else cwd
    project = find_project_file(start)
    problems = read_project_file(project).problems if project is not None else ()
    diagnostics: tuple[Diagnostic, ...] = problems
    if max_usd_ceiling is not None:
        return Authoring(max_usd_ceiling, diagnostics)
    # A project file with problems is reported, not applied: the operator layers still count.
    config = load_config(project=None if problems else project, runner_keys=False)
    if not config.jobs:
        return Authoring(config.max_usd_ceiling, diagnostics)

    def per_job(name: str | None) -> float:
        # A contract without a name of text is refused for that; the base ceiling holds it.
        chosen = config if name is None else config.for_job(name)
        return float(chosen.max_usd_ceiling)

    return Authoring(per_job, diagnostics)

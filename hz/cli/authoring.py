"""The authoring options every authoring command shares (``hz validate``, ``compile``, ...).

An explicit command-line value wins; otherwise the layered configuration decides, including a
project's ``hz.toml``. Problems in that project file are the user's files, so they come back
as diagnostics (HZ801-HZ804) beside the contracts' own; operator configuration problems raise
``ConfigError`` (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hz.compiler.diagnostics import Diagnostic


@dataclass(frozen=True, slots=True)
class Authoring:
    max_usd_ceiling: float
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
    return Authoring(config.max_usd_ceiling, diagnostics)

"""The authoring options every authoring command shares (``hz validate``, ``compile``, ...).

An explicit command-line value wins; otherwise the layered configuration decides, including a
project's ``hz.toml``, and an operator's jobs tables give the jobs they match a ceiling of their
own (as ``hz run`` holds them). Problems in that project file are the user's files, so they
come back as diagnostics (HZ801-HZ804) beside the contracts' own; operator configuration
problems raise ``ConfigError`` (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hz.compiler.diagnostics import Diagnostic
from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.publish_targets import TARGETS, Target

if TYPE_CHECKING:
    from hz.compiler.validate import Ceiling


@dataclass(frozen=True, slots=True)
class Authoring:
    #: The ceiling every contract is held to, or one per contract name when the operator's
    #: jobs tables give some jobs a ceiling of their own.
    max_usd_ceiling: Ceiling
    diagnostics: tuple[Diagnostic, ...] = ()
    #: What an input may ``read``: the catalog and the operator's own operations
    #: (``hz.cli.fetching.read_operations``).
    operations: Mapping[str, Operation] = field(default_factory=lambda: CATALOG)
    #: What a contract may ``publish`` to: hz's targets and the bound plugins'
    #: (``hz.cli.fetching.publish_targets``).
    targets: Mapping[str, Target] = field(default_factory=lambda: TARGETS)


def authoring(max_usd_ceiling: float | None, *, cwd: Path | None = None) -> Authoring:
    from hz.cli.fetching import publish_targets, read_operations
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.config.layers import load_config
    from hz.runtime.config.project import find_project_file, read_project_file

    start = Path.cwd() if cwd is None else cwd
    project = find_project_file(start)
    problems = read_project_file(project).problems if project is not None else ()
    diagnostics: tuple[Diagnostic, ...] = problems
    if max_usd_ceiling is not None:
        try:
            config = load_config(project=None if problems else project, runner_keys=False)
        except HzError:
            # The ceiling given is all this command needs of a configuration: a broken one is
            # hz doctor's to report, and the contracts are checked against the catalog.
            return Authoring(max_usd_ceiling, diagnostics)
        return Authoring(
            max_usd_ceiling, diagnostics, read_operations(config), publish_targets(config)
        )
    # A project file with problems is reported, not applied: the operator layers still count.
    config = load_config(project=None if problems else project, runner_keys=False)
    operations = read_operations(config)
    targets = publish_targets(config)
    if not config.jobs:
        return Authoring(config.max_usd_ceiling, diagnostics, operations, targets)

    def per_job(name: str | None) -> float:
        # A contract without a name of text is refused for that; the base ceiling holds it.
        chosen = config if name is None else config.for_job(name)
        return float(chosen.max_usd_ceiling)

    return Authoring(per_job, diagnostics, operations, targets)

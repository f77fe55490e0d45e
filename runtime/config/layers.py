"""The effective configuration: layers merged in an order that is data, each value with its origin.

Layers, lowest first (``sources``): built-in defaults < site file (``HZ_SITE_CONFIG``, default
``/etc/hz/config.toml``) < user file (``$XDG_CONFIG_HOME/hz/config.toml``, default
``~/.config/hz/config.toml``) < the project's ``hz.toml`` (authoring options only) < the
``HZ_CONFIG`` file < ``HZ_*`` environment variables (``hz.runtime.config.env``). Missing default
files are skipped; a missing ``HZ_CONFIG`` file is an error.

A repository is untrusted: its ``hz.toml`` may tighten a limit the operator's layers set
(``PROJECT_ONLY_LOWERS``), never loosen it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.config.env import read_environment
from hz.runtime.config.file import Located, read_operator
from hz.runtime.config.jobs import JobEntry, JobTable, applying
from hz.runtime.config.project import (
    find_project_file,
    project_values,
    raise_problems,
    read_project_file,
)
from hz.runtime.settings.keys import AUTHORING, CAPABILITIES, DEFAULTS, provider_table

CEILING = "max_usd_ceiling"

Layer = Literal["default", "site", "user", "project", "HZ_CONFIG", "environment"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a value came from: a layer and its file (``path:line:col``) or variable name."""

    layer: Layer
    where: str = ""

    def __str__(self) -> str:
        return f"{self.layer} {self.where}".strip()


@dataclass(frozen=True, slots=True)
class Setting:
    table: str
    key: str
    value: Any
    origin: Origin


@dataclass(frozen=True, slots=True)
class LayerState:
    """One source as it was consulted: ``loaded``, ``missing`` (a default file that does not
    exist) or ``unset`` (``HZ_CONFIG`` not set, no project file found, no ``HZ_*`` setting).
    For the environment, ``where`` lists the variables that set something."""

    layer: Layer
    where: str
    state: Literal["loaded", "missing", "unset"]


@dataclass(frozen=True, slots=True)
class Source:
    layer: Layer
    path: Path | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class Config:
    settings: tuple[Setting, ...]
    layers: tuple[LayerState, ...]
    #: The ``[jobs."NAME"]`` tables of the operator files (``hz.runtime.config.jobs``).
    jobs: tuple[JobTable, ...] = ()
    #: In a job's effective configuration (``for_job``): the jobs table that applied.
    applied: JobTable | None = None

    def for_job(self, job: str) -> Config:
        """The effective configuration of the job named ``job``: the applying jobs table's keys
        over the base ones, whatever layer set those (the job's table is the more specific
        rule; ``applied`` names it). Without a jobs table that matches, this configuration."""
        table = applying(self.jobs, job)
        return self if table is None else self.for_job_table(table)

    def for_job_table(self, table: JobTable) -> Config:
        """The effective configuration of the jobs ``table`` applies to."""
        own = {(s.table, s.key): s for s in table.settings}
        settings = [s for s in self.settings if (s.table, s.key) not in own]
        ordered = tuple(sorted([*settings, *own.values()], key=lambda s: (s.table, s.key)))
        return replace(self, settings=ordered, jobs=(), applied=table)

    def highest_ceiling(self) -> float:
        """The largest ``max_usd_ceiling`` any job may have: what a contract is compiled
        against before its name is known (each job is then held to its own)."""
        values = [self.max_usd_ceiling]
        values += [float(s.value) for t in self.jobs for s in t.settings if s.key == CEILING]
        return max(values)

    def get(self, table: str, key: str, default: Any = None) -> Any:
        for setting in self.settings:
            if (setting.table, setting.key) == (table, key):
                return setting.value
        return default

    def table(self, table: str) -> dict[str, Any]:
        """A fresh dict of one table's effective values."""
        return {s.key: s.value for s in self.settings if s.table == table}

    def provider_tables(self) -> dict[str, dict[str, Any]]:
        """Each ``[providers.NAME]`` table some layer set, by provider name."""
        found: dict[str, dict[str, Any]] = {}
        for s in self.settings:
            name = provider_table(s.table)
            if name is not None:
                found.setdefault(name, {})[s.key] = s.value
        return found

    @property
    def agent_runner(self) -> str:
        return str(self.get(CAPABILITIES, "agent_runner"))

    @property
    def max_usd_ceiling(self) -> float:
        return float(self.get(AUTHORING, "max_usd_ceiling"))


#: Limits a project's ``hz.toml`` can only lower (the smaller value of it and the layers below
#: wins); the ``HZ_CONFIG`` file and ``HZ_*`` variables above it still set them freely.
PROJECT_ONLY_LOWERS = frozenset({(AUTHORING, "max_usd_ceiling")})

#: How an ``unset`` layer is described.
UNSET = {"project": "none found", "environment": "no HZ_* settings"}


def user_config_path(environ: Mapping[str, str]) -> Path:
    xdg = environ.get("XDG_CONFIG_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "hz" / "config.toml"


def sources(environ: Mapping[str, str], project: Path | None) -> tuple[Source, ...]:
    """The configuration sources in precedence order, lowest first (the environment last)."""
    explicit = environ.get("HZ_CONFIG", "")
    return (
        Source("default"),
        Source("site", Path(environ.get("HZ_SITE_CONFIG") or "/etc/hz/config.toml")),
        Source("user", user_config_path(environ)),
        Source("project", project),
        Source("HZ_CONFIG", Path(explicit) if explicit else None, required=True),
        Source("environment"),
    )


def load_config(
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    project: Path | None = None,
    runner_keys: bool = True,
) -> Config:
    """Merge every source; ``project`` names the project file, else it is searched from ``cwd``
    (no search when neither is given)."""
    env = os.environ if environ is None else environ
    if project is None and cwd is not None:
        project = find_project_file(cwd)
    merged: dict[tuple[str, str], Setting] = {}
    states: list[LayerState] = []
    jobs: list[tuple[Layer, list[JobEntry]]] = []
    for source in sources(env, project):
        values, state, job_entries = read_layer(source, env, runner_keys=runner_keys)
        states.append(state)
        jobs.append((source.layer, job_entries))
        for (table, key), (value, where) in values.items():
            below = merged.get((table, key))
            if (
                source.layer == "project"
                and (table, key) in PROJECT_ONLY_LOWERS
                and below is not None
                and value > below.value
            ):
                continue  # a repository cannot raise what the operator allows
            merged[table, key] = Setting(table, key, value, Origin(source.layer, where))
    ordered = tuple(sorted(merged.values(), key=lambda s: (s.table, s.key)))
    config = Config(ordered, tuple(states), merge_jobs(jobs))
    check_publish_credentials(config)
    return config


def check_publish_credentials(config: Config) -> None:
    """``ConfigError`` when a child hz starts would be given a credential publishing holds:
    a ``[publish.webhooks.NAME] url_env``, or the token of the GitHub provider bound to
    ``code-host``/``tracker``, named in a runner's passthrough (``command_env``,
    ``claude_env``, ...) or a command provider operation's ``env``. Those live in hz's
    environment only: an agent given one could print it into its draft."""
    held: dict[str, str] = {}
    webhooks = config.get("publish", "webhooks", {})
    for name, hook in (webhooks if isinstance(webhooks, dict) else {}).items():
        if isinstance(hook, dict) and isinstance(hook.get("url_env"), str):
            held[hook["url_env"]] = f"[publish.webhooks.{name}] url_env"
    capabilities = config.table("capabilities")
    if "github" in (capabilities.get("code-host"), capabilities.get("tracker")):
        token = config.provider_tables().get("github", {}).get("token_env", "GITHUB_TOKEN")
        if isinstance(token, str):
            held.setdefault(token, "[providers.github] token_env")
    if not held:
        return
    # Imported here: the transcript's module imports pydantic, which the authoring commands
    # reading a configuration that declares no secret must not pay for.
    from hz.runtime.transcript.record import declare_secret_names

    declare_secret_names(held)  # their values redacted by value, as a token's are
    passed: list[tuple[str, str]] = []
    for key, value in config.table("system.runner").items():
        if key.endswith("_env") and isinstance(value, list | tuple):
            passed += [(str(name), f"[system.runner] {key}") for name in value]
    operations = config.provider_tables().get("command", {}).get("operations", {})
    for op, table in (operations if isinstance(operations, dict) else {}).items():
        names = table.get("env", ()) if isinstance(table, dict) else ()
        where = f'[providers.command.operations."{op}"] env'
        passed += [(str(name), where) for name in names if isinstance(names, list | tuple)]
    for name, where in passed:
        if name in held:
            raise ConfigError(
                f"{where} passes {name} to a child process, but {name} holds a credential "
                f"hz publishes with ({held[name]}): it never leaves hz's environment",
                hint="give the agent its own variable, or name another one for publishing",
            )


def merge_jobs(layers: list[tuple[Layer, list[JobEntry]]]) -> tuple[JobTable, ...]:
    """The jobs tables of every layer (lowest first), one per name or glob, key by key; a
    table's ``order`` is when it was last defined (a later one wins a tie)."""
    tables: dict[str, dict[tuple[str, str], Setting]] = {}
    order: dict[str, int] = {}
    count = 0
    for layer, entries in layers:
        for entry in entries:
            count += 1
            table = tables.setdefault(entry.pattern, {})
            origin = Origin(layer, entry.where)
            table[entry.table, entry.key] = Setting(entry.table, entry.key, entry.value, origin)
            order[entry.pattern] = count
    return tuple(
        JobTable(pattern, tuple(settings.values()), order[pattern])
        for pattern, settings in tables.items()
    )


def read_source(
    source: Source, environ: Mapping[str, str], *, runner_keys: bool = True
) -> tuple[Located, LayerState]:
    values, state, _ = read_layer(source, environ, runner_keys=runner_keys)
    return values, state


def read_layer(
    source: Source, environ: Mapping[str, str], *, runner_keys: bool = True
) -> tuple[Located, LayerState, list[JobEntry]]:
    """One source's settings, how it was consulted, and its jobs tables (operator files)."""
    if source.layer == "default":
        defaults = {k: (v, "") for k, v in DEFAULTS.items()}
        return defaults, LayerState("default", "", "loaded"), []
    if source.layer == "environment":
        values = read_environment(environ, runner_keys=runner_keys)
        names = ", ".join(sorted({where for _, where in values.values()}))
        return values, LayerState("environment", names, "loaded" if names else "unset"), []
    if source.path is None:
        return {}, LayerState(source.layer, "", "unset"), []
    where = str(source.path)
    if source.layer == "project":
        project = read_project_file(source.path)
        raise_problems(project.problems)
        lines = {(e.table, e.key): e for e in project.entries}
        located = {
            k: (v, f"{where}:{lines[k].line}:{lines[k].column}" if lines[k].line else where)
            for k, v in project_values(project).items()
        }
        return located, LayerState("project", where, "loaded"), []
    try:
        located, jobs = read_operator(source.path, runner_keys=runner_keys)
        return located, LayerState(source.layer, where, "loaded"), jobs
    except FileNotFoundError as e:
        if source.required:
            raise ConfigError(
                f"{where}: configuration file named by HZ_CONFIG does not exist"
            ) from e
        return {}, LayerState(source.layer, where, "missing"), []

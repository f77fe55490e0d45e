"""Checking operator settings (site, user and ``HZ_CONFIG`` files, ``HZ_*`` variables).

Every key must be known: a table hz has, a key of its settings model, a ``[system.runner]``
key some registered runner declares, a key of a registered provider's ``[providers.NAME]``
table, or in ``[capabilities]`` a capability (the catalog's, or one an operator's ``command``
operation declares: any capability name that is not a misspelling of a known key). A typo is
an error with a did-you-mean, never a silent default.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.config.jobs import (
    BASE_TABLE,
    JOBS,
    JobEntry,
    at,
    check_pattern,
    first_jobs_line,
    header_position,
    key_position,
    key_table,
    quoted,
)
from hz.runtime.config.toml_file import flatten, read_toml
from hz.runtime.settings.keys import (
    CAPABILITIES,
    PROVIDERS,
    RUNNER,
    TABLES,
    is_table,
    provider_table,
)

#: What a capability's name may be (``hz.runtime.artifacts.operations.OPERATION_PATTERN``'s
#: first part).
_CAPABILITY = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def _operator_capability(key: str, known: frozenset[str]) -> bool:
    """Whether a key of ``[capabilities]`` outside the model's is a capability an operator's
    ``command`` operation may declare: a capability's name, and no misspelling of a known key
    (``trakcer`` is refused with a did-you-mean, ``meetings`` is taken)."""
    from hz.runtime.artifacts.suggest import closest

    return _CAPABILITY.fullmatch(key) is not None and closest(key, known) is None


#: Settings by (table, key): the value and where it was set (``path:line:col`` or a variable).
Located = dict[tuple[str, str], tuple[Any, str]]


def known_keys(table: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The keys ``table`` accepts (its settings model's), and the runners whose keys are
    unknown (failed to load)."""
    from hz.runtime.config.tables import model_of  # pydantic: only when a key is looked at

    if table != RUNNER:
        return model_of(table).keys(), ()  # a provider's table: ConfigError when unknown
    # The registry names the core runners' modules: imported only when a runner key is checked.
    from hz.runtime.runners import registry

    runner_keys, broken = registry.all_settings_keys()
    return model_of(RUNNER).keys() | runner_keys, broken


def _declared_runner_key(table: str, key: str) -> bool:
    """A ``[system.runner]`` key a runner hz ships declares: known without loading every
    runner (``registry.DECLARED_KEYS``)."""
    if table != RUNNER:
        return False
    from hz.runtime.runners import registry

    return registry.declared_key(key)


def check_setting(
    table: str, key: str, value: Any, where: str, *, runner_keys: bool = True
) -> None:
    """Raise ``ConfigError`` naming ``where`` when the table, key or value is not acceptable.

    With ``runner_keys=False`` a ``[system.runner]`` key is not looked up among the runners'
    keys (the authoring commands read configuration without loading any runner).
    """
    if not is_table(table):
        if not table:
            home = next((t for t in TABLES if key in known_keys(t)[0]), None)
            hint = f"'{key}' belongs in [{home}]" if home else None
            raise ConfigError(f"{where}: unknown top-level key '{key}'", hint=hint)
        raise ConfigError(
            f"{where}: unknown table [{table}]{did_you_mean_suffix(table, TABLES)}",
            hint=f"tables: {', '.join(f'[{t}]' for t in TABLES)}, [{PROVIDERS}.NAME]",
        )
    provider = provider_table(table)
    try:
        keys, broken = (
            known_keys(table)
            if (runner_keys or table != RUNNER) and not _declared_runner_key(table, key)
            else (frozenset([key]), ())
        )
    except ConfigError as e:  # [providers.NAME] of a provider unknown or that cannot load
        raise ConfigError(f"{where}: [{table}]: {e.message}", hint=e.hint) from e
    if table == CAPABILITIES and key not in keys and _operator_capability(key, keys):
        keys = keys | {key}  # bound to the provider that declares it (checked when bound)
    if key not in keys:
        whose = "" if provider is None else f" of provider '{provider}'"
        hint = f"known keys{whose}: {', '.join(sorted(keys))}"
        if broken:
            hint += f"; not known because they fail to load: the keys of {', '.join(broken)}"
        raise ConfigError(
            f"{where}: unknown key '{key}' in [{table}]{did_you_mean_suffix(key, keys)}",
            hint=hint,
        )
    from hz.runtime.config.tables import value_error  # pydantic: only when a key is set

    problem = value_error(table, key, value)
    if problem is not None:
        raise ConfigError(f"{where}: {problem.message}", hint=problem.hint)


def read_operator(path: Path, *, runner_keys: bool = True) -> tuple[Located, list[JobEntry]]:
    """A file's settings with their ``path:line:col``, and its jobs tables
    (``hz.runtime.config.jobs``); ``FileNotFoundError`` passes through."""
    data, text = read_toml(path)
    jobs = read_jobs(path, data.pop(JOBS), text, runner_keys=runner_keys) if JOBS in data else []
    located: Located = {}
    for entry in flatten(data, text):
        where = f"{path}:{entry.line}:{entry.column}" if entry.line else str(path)
        check_setting(entry.table, entry.key, entry.value, where, runner_keys=runner_keys)
        located[entry.table, entry.key] = (entry.value, where)
    return located, jobs


def known_job_keys() -> tuple[frozenset[str], tuple[str, ...]]:
    """The keys a jobs table takes, and the runners whose keys are unknown (fail to load)."""
    runner, broken = known_keys(RUNNER)
    return runner | frozenset(BASE_TABLE), broken


def read_jobs(path: Path, data: Any, text: str, *, runner_keys: bool = True) -> list[JobEntry]:
    """The jobs tables of one operator file, every key checked (``ConfigError`` naming the
    file and line); ``data`` is the document's ``jobs`` value. With ``runner_keys=False`` a
    key is not looked up among the runners' (as ``check_setting``)."""
    if not isinstance(data, dict):
        line, column = first_jobs_line(text)
        raise ConfigError(
            f"{at(path, line, column)}: [{JOBS}] must be a table of job names to tables, got "
            f"{type(data).__name__}",
            hint='e.g. [jobs."review-*"] with agent_runner = "command"',
        )
    entries: list[JobEntry] = []
    for pattern, table in data.items():
        line, column = header_position(text, pattern)
        where = at(path, line, column)
        check_pattern(pattern, where)
        if not isinstance(table, dict):
            raise ConfigError(
                f"{where}: [{JOBS}.{quoted(pattern)}] must be a table of settings, got "
                f"{type(table).__name__}",
                hint=f'e.g. [jobs.{quoted(pattern)}] with agent_runner = "command"',
            )
        for key, value in table.items():
            key_line, key_column = key_position(text, pattern, key)
            set_at = at(path, key_line, key_column) if key_line else where
            keys, broken = known_job_keys() if runner_keys else (frozenset([key]), ())
            if key not in keys:
                hint = f"a jobs table takes: {', '.join(sorted(keys))}"
                if broken:
                    hint += (
                        f"; not known because they fail to load: the keys of {', '.join(broken)}"
                    )
                raise ConfigError(
                    f"{set_at}: unknown key '{key}' in [{JOBS}.{quoted(pattern)}]"
                    f"{did_you_mean_suffix(key, keys)}",
                    hint=hint,
                )
            base = key_table(key)
            # The same checks as in the base table; a message names the jobs table.
            try:
                check_setting(base, key, value, set_at, runner_keys=runner_keys)
            except ConfigError as e:
                raise ConfigError(
                    e.message.replace(f"[{base}]", f"[{JOBS}.{quoted(pattern)}]", 1), hint=e.hint
                ) from e
            entries.append(JobEntry(pattern, base, key, value, set_at))
    return entries

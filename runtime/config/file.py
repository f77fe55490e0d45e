"""Checking operator settings (site, user and ``HZ_CONFIG`` files, ``HZ_*`` variables).

Every key must be known: a table hz has, a key of its settings model, or a ``[system.runner]``
key some registered runner declares. A typo is an error with a did-you-mean, never a silent
default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.config.toml_file import flatten, read_toml
from hz.runtime.settings.keys import RUNNER, TABLES

#: Settings by (table, key): the value and where it was set (``path:line:col`` or a variable).
Located = dict[tuple[str, str], tuple[Any, str]]


def known_keys(table: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The keys ``table`` accepts (its settings model's), and the runners whose keys are
    unknown (failed to load)."""
    from hz.runtime.config.tables import model_of  # pydantic: only when a key is looked at

    if table != RUNNER:
        return model_of(table).keys(), ()
    # The registry names the core runners' modules: imported only when a runner key is checked.
    from hz.runtime.runners import registry

    runner_keys, broken = registry.all_settings_keys()
    return model_of(RUNNER).keys() | runner_keys, broken


def check_setting(
    table: str, key: str, value: Any, where: str, *, runner_keys: bool = True
) -> None:
    """Raise ``ConfigError`` naming ``where`` when the table, key or value is not acceptable.

    With ``runner_keys=False`` a ``[system.runner]`` key is not looked up among the runners'
    keys (the authoring commands read configuration without loading any runner).
    """
    if table not in TABLES:
        if not table:
            home = next((t for t in TABLES if key in known_keys(t)[0]), None)
            hint = f"'{key}' belongs in [{home}]" if home else None
            raise ConfigError(f"{where}: unknown top-level key '{key}'", hint=hint)
        raise ConfigError(
            f"{where}: unknown table [{table}]{did_you_mean_suffix(table, TABLES)}",
            hint=f"tables: {', '.join(f'[{t}]' for t in TABLES)}",
        )
    keys, broken = known_keys(table) if runner_keys or table != RUNNER else (frozenset([key]), ())
    if key not in keys:
        hint = f"known keys: {', '.join(sorted(keys))}"
        if broken:
            hint += f"; not known because they fail to load: the keys of {', '.join(broken)}"
        raise ConfigError(
            f"{where}: unknown key '{key}' in [{table}]{did_you_mean_suffix(key, keys)}", hint=hint
        )
    from hz.runtime.config.tables import value_error  # pydantic: only when a key is set

    problem = value_error(table, key, value)
    if problem is not None:
        raise ConfigError(f"{where}: {problem.message}", hint=problem.hint)


def read_operator_file(path: Path, *, runner_keys: bool = True) -> Located:
    """A file's settings with their ``path:line:col``; ``FileNotFoundError`` passes through."""
    data, text = read_toml(path)
    located: Located = {}
    for entry in flatten(data, text):
        where = f"{path}:{entry.line}:{entry.column}" if entry.line else str(path)
        check_setting(entry.table, entry.key, entry.value, where, runner_keys=runner_keys)
        located[entry.table, entry.key] = (entry.value, where)
    return located

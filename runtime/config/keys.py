"""What the configuration may contain: its tables, and where each table's keys are declared.

Six tables exist: ``[capabilities]`` (which runner is bound), ``[system.runner]`` (how the
bound runner runs: the shared keys of ``SharedSettings`` plus every key some registered runner
declares in its ``settings_model``), ``[system.policy]`` (the pre-run gate), ``[system]`` and
``[system.budget]`` (the run ledger: where it lives, how many attempts and parallel runs, spend
ceilings across runs) and ``[authoring]`` (options of the authoring commands). Only
``[authoring]`` may appear in a project's ``hz.toml``.

The keys of each table, the checks of their values and how a bad one is worded, their
defaults and their docs tables come from the table's settings model (``model_of``:
``hz.runtime.config.tables``, ``hz.runtime.runners.settings``): nothing here lists a key by
hand. This module itself imports no pydantic, so that reading a configuration that sets
nothing (``hz validate`` in a fresh checkout) does not either.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hz.runtime.errors import ConfigError

if TYPE_CHECKING:
    from hz.runtime.config.model import TableSettings

CAPABILITIES = "capabilities"
RUNNER = "system.runner"
AUTHORING = "authoring"
SYSTEM = "system"
BUDGET = "system.budget"
POLICY = "system.policy"
QUEUE = "system.queue"
TABLES: tuple[str, ...] = (CAPABILITIES, RUNNER, AUTHORING, SYSTEM, BUDGET, POLICY, QUEUE)

#: The built-in layer, which the models of these tables take their defaults from. Only the
#: values hz reads through the layers are here: the other keys' defaults apply where they are
#: read, so a runner's settings digest and ``hz config show`` name only what was set.
DEFAULTS: dict[tuple[str, str], Any] = {
    (CAPABILITIES, "agent_runner"): "claude-code",
    (AUTHORING, "max_usd_ceiling"): 100,
}


def model_of(table: str) -> type[TableSettings]:
    """The settings model of a table: for ``[system.runner]`` its shared keys."""
    if table == RUNNER:
        from hz.runtime.runners.settings import SharedSettings  # imports this module

        return SharedSettings
    from hz.runtime.config.tables import MODELS  # imports this module

    return MODELS[table]


def value_problem(table: str, key: str, value: Any) -> str | None:
    """What the value should have been (``value_error``'s message), or None."""
    error = value_error(table, key, value)
    return None if error is None else error.message


def value_error(table: str, key: str, value: Any) -> ConfigError | None:
    """What the value should have been, with a hint, or None when it is acceptable (or ``key``
    is no key of the table's model: a runner's own keys are checked by the runner). No
    configured string may hold a password: ``hz config show`` prints the configuration, and
    PostgreSQL's password comes the libpq way (``PGPASSWORD``, ``~/.pgpass``, the DSN
    ``dsn_env`` names)."""
    if _holds_password(value):
        return ConfigError(
            f"[{table}] {key} holds a password; a password is never configured here: give it "
            "the libpq way (PGPASSWORD, ~/.pgpass, or the DSN in the environment variable "
            "[system.queue] dsn_env names)"
        )
    model = model_of(table)
    accepted = model.keys()
    if key not in accepted:
        return None
    try:
        model.from_table({key: value})
    except ConfigError as e:
        return e
    return None


_PASSWORD = re.compile(r"password\s*=|://[^/@\s]*:[^/@\s]*@", re.IGNORECASE)


def _holds_password(value: Any) -> bool:
    if isinstance(value, str):
        return _PASSWORD.search(value) is not None
    if isinstance(value, list | tuple):
        return any(_holds_password(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_password(v) for v in value.values())
    return False


_EXECUTION_WORDS = ("runner", "model", "executable", "command", "env", "argv", "shell")


def is_execution_key(table: str, key: str) -> bool:
    """Whether a project file setting this key would choose what runs (refused: HZ801)."""
    if table == CAPABILITIES or table == "system" or table.startswith("system."):
        return True
    return any(word in part for part in key.lower().split("_") for word in _EXECUTION_WORDS)

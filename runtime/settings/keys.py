"""What the configuration may contain: its tables, and where each table's keys are declared.

Six tables exist: ``[capabilities]`` (which runner is bound, and which provider serves each
capability an input reads through), ``[system.runner]`` (how the
bound runner runs: the shared keys of ``SharedSettings`` plus every key some registered runner
declares in its ``settings_model``), ``[system.policy]`` (the pre-run gate), ``[system]`` and
``[system.budget]`` (the run ledger: where it lives, how many attempts and parallel runs, spend
ceilings across runs) and ``[authoring]`` (options of the authoring commands). Only
``[authoring]`` may appear in a project's ``hz.toml``. Beside them, one table per provider,
``[providers.NAME]``, holds that provider's settings (its ``settings_model``'s keys).

The keys of each table, the checks of their values and how a bad one is worded, their
defaults and their docs tables come from the table's settings model
(``hz.runtime.config.tables.model_of``): nothing here lists a key by hand. This module imports
nothing of pydantic nor of hz (the models import it for their tables' names), so that
reading a configuration that sets nothing (``hz validate`` in a fresh checkout) does not
import pydantic either.
"""

from __future__ import annotations

import re
from typing import Any

CAPABILITIES = "capabilities"
RUNNER = "system.runner"
AUTHORING = "authoring"
SYSTEM = "system"
BUDGET = "system.budget"
POLICY = "system.policy"
QUEUE = "system.queue"
SCHEDULES = "system.schedules"
#: Where contracts may publish their drafts (``hz.runtime.config.publish``).
PUBLISH = "publish"
TABLES: tuple[str, ...] = (
    CAPABILITIES,
    RUNNER,
    AUTHORING,
    SYSTEM,
    BUDGET,
    POLICY,
    QUEUE,
    SCHEDULES,
    PUBLISH,
)
#: ``[providers.NAME]``: a provider's settings (``provider_table``).
PROVIDERS = "providers"
_PROVIDER_TABLE = re.compile(r"providers\.([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")

#: The built-in layer, which the models of these tables take their defaults from. Only the
#: values hz reads through the layers are here: the other keys' defaults apply where they are
#: read, so a runner's settings digest and ``hz config show`` name only what was set.
DEFAULTS: dict[tuple[str, str], Any] = {
    (CAPABILITIES, "agent_runner"): "claude-code",
    (AUTHORING, "max_usd_ceiling"): 100,
}


def provider_table(table: str) -> str | None:
    """The provider a ``[providers.NAME]`` table configures (``NAME``), or None for any other
    table."""
    match = _PROVIDER_TABLE.fullmatch(table)
    return None if match is None else match[1]


def is_table(table: str) -> bool:
    """Whether ``table`` is one hz reads: one of ``TABLES`` or a provider's."""
    return table in TABLES or provider_table(table) is not None


_EXECUTION_WORDS = ("runner", "model", "executable", "command", "env", "argv", "shell")


def is_execution_key(table: str, key: str) -> bool:
    """Whether a project file setting this key would choose what runs (refused: HZ801)."""
    if table in (CAPABILITIES, SYSTEM, PROVIDERS, PUBLISH) or table.startswith(
        ("system.", "providers.", "publish.")
    ):
        return True
    return any(word in part for part in key.lower().split("_") for word in _EXECUTION_WORDS)

"""What the configuration may contain: its tables, and the settings model of each.

Six tables exist: ``[capabilities]`` (which runner is bound), ``[system.runner]`` (how the
bound runner runs: the shared keys of ``SharedSettings`` plus every key some registered runner
declares in its ``settings_model``), ``[system.policy]`` (the pre-run gate), ``[system]`` and
``[system.budget]`` (the run ledger: where it lives, how many attempts and parallel runs, spend
ceilings across runs) and ``[authoring]`` (options of the authoring commands). Only
``[authoring]`` may appear in a project's ``hz.toml``.

The keys of each table, the checks of their values and how a bad one is worded, their
defaults and their docs tables come from the table's model (``hz.runtime.config.model``):
nothing here lists a key by hand.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from hz.runtime.capabilities import NAMES
from hz.runtime.config.model import (
    Amount,
    Dollars,
    Expect,
    NonEmptyString,
    PathString,
    PositiveInteger,
    TableSettings,
)
from hz.runtime.errors import ConfigError

CAPABILITIES = "capabilities"
RUNNER = "system.runner"
AUTHORING = "authoring"
SYSTEM = "system"
BUDGET = "system.budget"
POLICY = "system.policy"
TABLES: tuple[str, ...] = (CAPABILITIES, RUNNER, AUTHORING, SYSTEM, BUDGET, POLICY)


class CapabilitiesSettings(TableSettings):
    table = CAPABILITIES

    agent_runner: Annotated[
        NonEmptyString,
        Field(
            description="the runner that executes jobs: a core runner (`claude-code`, "
            "`command`, `echo`) or a plugin (`hz runners` lists them)"
        ),
    ] = "claude-code"


class AuthoringSettings(TableSettings):
    table = AUTHORING

    max_usd_ceiling: Annotated[
        Dollars,
        Field(description="the largest `hz.agent.max_usd` a contract may ask for (HZ304)"),
    ] = 100


class SystemSettings(TableSettings):
    table = SYSTEM

    state_dir: Annotated[
        PathString | None,
        Field(
            description="where the run ledger lives (`HZ_STATE_DIR` overrides it); unset: the "
            "platform's user state directory"
        ),
    ] = None
    max_attempts: Annotated[
        PositiveInteger,
        Field(
            description="how many attempts the ledger makes at a run that ended before it "
            "was dispatched or failed in a way that may be retried"
        ),
    ] = 3
    max_parallel: Annotated[
        PositiveInteger,
        Field(description="how many runs `hz worker` runs at once (`-j N` overrides it)"),
    ] = 1


class BudgetSettings(TableSettings):
    table = BUDGET

    max_usd_per_day: Annotated[
        Dollars | None,
        Field(description="the spend ceiling of the current UTC day, every runner; unset: none"),
    ] = None
    per_runner: Annotated[
        dict[str, Amount],
        Field(
            strict=True,
            description="the spend ceilings of the current UTC day per bound runner, by name",
        ),
        Expect("must be a table of runner names to finite numbers greater than 0, got {value!r}"),
    ] = Field(default_factory=dict)


def _capability_names(value: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [name for name in value if name not in NAMES]
    if unknown:
        raise ValueError(f"not capability names: {', '.join(unknown)}")
    return value


CapabilityNames = Annotated[
    tuple[Annotated[str, Field(strict=True)], ...],
    AfterValidator(_capability_names),
    Expect(f"must be a list of capability names ({', '.join(NAMES)}), got {{value!r}}"),
]


class PolicySettings(TableSettings):
    table = POLICY

    require: Annotated[
        CapabilityNames,
        Field(description="capabilities the runner must mark `supported` for every run"),
    ] = ("timeout", "file_writes", "network", "sub_agents")
    allow_unenforced: Annotated[
        CapabilityNames,
        Field(
            description="a job's needs a run may have although the runner does not enforce "
            "them (named in `limits_unenforced`); `require_enforced_budget = true` removes "
            "`budget`"
        ),
    ] = ("budget", "tools", "turns", "structured_output")


#: The model of each table but ``[system.runner]``, whose keys are the shared ones
#: (``hz.runtime.runners.settings.SharedSettings``) and those of the registered runners.
MODELS: dict[str, type[TableSettings]] = {
    model.table: model
    for model in (
        CapabilitiesSettings,
        AuthoringSettings,
        SystemSettings,
        BudgetSettings,
        PolicySettings,
    )
}

#: The built-in layer: the defaults of the tables whose values hz reads through the layers
#: (the other tables' defaults apply where they are read, so a runner's settings digest and
#: ``hz config show`` name only what was set).
DEFAULTS: dict[tuple[str, str], Any] = {
    (model.table, key): value
    for model in (CapabilitiesSettings, AuthoringSettings)
    for key, value in model.defaults().items()
}


def model_of(table: str) -> type[TableSettings]:
    """The settings model of a table: for ``[system.runner]`` its shared keys."""
    if table == RUNNER:
        from hz.runtime.runners.settings import SharedSettings  # imports this module

        return SharedSettings
    return MODELS[table]


def value_problem(table: str, key: str, value: Any) -> str | None:
    """What the value should have been, or None when it is acceptable (or ``key`` is no key of
    the table's model: a runner's own keys are checked by the runner)."""
    model = model_of(table)
    accepted = model.keys()
    if key not in accepted:
        return None
    try:
        model.from_table({key: value})
    except ConfigError as e:
        return e.message
    return None


_EXECUTION_WORDS = ("runner", "model", "executable", "command", "env", "argv", "shell")


def is_execution_key(table: str, key: str) -> bool:
    """Whether a project file setting this key would choose what runs (refused: HZ801)."""
    if table == CAPABILITIES or table == "system" or table.startswith("system."):
        return True
    return any(word in part for part in key.lower().split("_") for word in _EXECUTION_WORDS)

"""The settings model of each configuration table but ``[system.runner]`` (whose shared keys are
``hz.runtime.runners.settings.SharedSettings`` and whose other keys belong to the registered
runners): the keys each table accepts, the checks of their values and how a bad one is worded,
their defaults and their docs tables.

``model_of`` names the model of any table, ``value_error`` checks one value by it. This module
is imported only when a key is looked at: the authoring commands read a configuration that
sets nothing without importing pydantic.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import BUILT_IN_BINDINGS
from hz.runtime.artifacts.schedule import MAX_FOLLOWERS, MOST_FOLLOWERS
from hz.runtime.config.publish import PublishSettings
from hz.runtime.process.threads import MAX_PARALLEL
from hz.runtime.runners.capabilities import NAMES
from hz.runtime.runners.settings import SharedSettings
from hz.runtime.settings.keys import (
    AUTHORING,
    BUDGET,
    CAPABILITIES,
    DEFAULTS,
    POLICY,
    QUEUE,
    RUNNER,
    SCHEDULES,
    SYSTEM,
    provider_table,
)
from hz.runtime.settings.model import (
    DOLLARS_HINT,
    Amount,
    Dollars,
    Expect,
    NonEmptyString,
    PathString,
    PositiveInteger,
    TableSettings,
    TableSource,
)

#: A provider's name as a capability's value (whether one is registered under it is checked
#: when the capability is bound, with a did-you-mean).
ProviderName = Annotated[
    str,
    Field(strict=True, pattern=r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$", max_length=64),
    Expect(
        "must be a provider's name, got {value!r}",
        hint="a core provider (files, git, github, command) or a plugin (hz providers lists them)",
    ),
]


class CapabilitiesSettings(TableSettings):
    """The runner, and the provider of each capability an input may read through
    (``hz.runtime.artifacts.operations``). A capability an operator's ``command`` operation
    declares outside the catalog is bound the same way (``[capabilities] meetings =
    "command"``): ``hz.runtime.config.file`` accepts such a key."""

    table = CAPABILITIES

    agent_runner: Annotated[
        NonEmptyString,
        Field(
            description="the runner that executes jobs: a core runner (`claude-code`, "
            "`command`, `echo`) or a plugin (`hz runners` lists them)"
        ),
    ] = DEFAULTS[CAPABILITIES, "agent_runner"]
    files: Annotated[
        ProviderName,
        Field(description="the provider of `files.*` inputs: the working directory's files"),
    ] = BUILT_IN_BINDINGS["files"]
    git: Annotated[
        ProviderName,
        Field(description="the provider of `git.*` inputs: the working directory's repository"),
    ] = BUILT_IN_BINDINGS["git"]
    code_host: Annotated[
        ProviderName | None,
        Field(
            alias="code-host",
            description="the provider of `code-host.*` inputs (pull requests), e.g. `github`; "
            "unset: such an input cannot be fetched",
        ),
    ] = None
    tracker: Annotated[
        ProviderName | None,
        Field(
            description="the provider of `tracker.*` inputs (issues), e.g. `github`; unset: "
            "such an input cannot be fetched"
        ),
    ] = None


class AuthoringSettings(TableSettings):
    table = AUTHORING

    max_usd_ceiling: Annotated[
        Dollars,
        Field(description="the largest `hz.agent.max_usd` a contract may ask for (HZ304)"),
    ] = DEFAULTS[AUTHORING, "max_usd_ceiling"]


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
        int,
        Field(
            strict=True,
            ge=1,
            le=MAX_PARALLEL,
            description=f"how many runs `hz worker` runs at once, 1 to {MAX_PARALLEL} (`-j N` "
            "overrides it)",
        ),
        Expect(
            f"must be an integer from 1 to {MAX_PARALLEL}, got {{value!r}}",
            hint="each run holds two threads and an agent: a machine takes a few hundred",
        ),
    ] = 1


#: Seconds between a worker's looks at a run held for a spend ceiling: fractions are fine, zero
#: would look without pause, more than an hour would leave a run waiting long after its room.
HoldWait = Annotated[
    Annotated[int, Field(strict=True, ge=1, le=3600)]
    | Annotated[float, Field(strict=True, ge=0.1, le=3600, allow_inf_nan=False)],
    Expect(
        "must be a number of seconds from 0.1 to 3600, got {value!r}",
        hint="e.g. 1 for the shortest wait, 30 for the longest",
    ),
]


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
        Expect(
            "must be a table of runner names to finite numbers greater than 0, got {value!r}",
            hint=f"e.g. per_runner = {{ claude-code = 20 }}: {DOLLARS_HINT} per runner",
        ),
    ] = Field(default_factory=dict)
    hold_wait_min_seconds: Annotated[
        HoldWait,
        Field(
            description="the shortest wait, in seconds, before a worker looks again at a run "
            "a ceiling holds (the wait is half the time held so far)"
        ),
    ] = 1
    hold_wait_max_seconds: Annotated[
        HoldWait,
        Field(
            description="the longest such wait, in seconds (never past the next UTC day, when "
            "a per-day ceiling's window opens again)"
        ),
    ] = 30

    @classmethod
    def from_config(cls, config: TableSource) -> Self:
        """The effective settings; the shortest wait may not be longer than the longest (the
        two may be set in different layers, so each key alone cannot say)."""
        settings = super().from_config(config)
        if settings.hold_wait_min_seconds > settings.hold_wait_max_seconds:
            raise ConfigError(
                f"[{cls.table}] hold_wait_min_seconds ({settings.hold_wait_min_seconds:g}) is "
                f"more than hold_wait_max_seconds ({settings.hold_wait_max_seconds:g})",
                hint="the wait between two looks at a held run grows from the first to the second",
            )
        return settings


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


class QueueSettings(TableSettings):
    table = QUEUE

    backend: Annotated[
        Literal["sqlite", "postgres"],
        Field(
            description='`"sqlite"`: one file in the state directory; `"postgres"`: a shared '
            "PostgreSQL database with procrastinate as the dispatcher (needs the extra "
            "`hz-contracts[postgres]`)"
        ),
        Expect("must be one of 'sqlite', 'postgres', got {value!r}"),
    ] = "sqlite"
    dsn_env: Annotated[
        str | None,
        Field(
            strict=True,
            pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$",
            description="the name of the environment variable that holds the PostgreSQL DSN "
            "(libpq `key=value` or a `postgresql://` URI); unset: libpq's `PGHOST`, "
            "`PGDATABASE`, `PGUSER`… apply",
        ),
        # Never echoed: a DSN put here by mistake may hold a password.
        Expect("must be the name of an environment variable that holds the DSN"),
    ] = None
    lease_seconds: Annotated[
        float,
        Field(
            strict=False,
            ge=1,
            le=3600,
            description="how long a run's owner holds it without renewing; another machine "
            "turns its run `uncertain` only after this",
        ),
        Expect(
            "must be a number of seconds from 1 to 3600, got {value!r}",
            hint="the default is 15: an owner renews its lease every third of it",
        ),
    ] = 15.0
    poll_seconds: Annotated[
        float | None,
        Field(
            strict=False,
            ge=0.01,
            le=60,
            description="how often an idle worker looks at the queue when nothing woke it (a "
            "change of the SQLite ledger, a PostgreSQL notification): a held run's next look, "
            "a lost notification; unset: 0.2 on SQLite, 1 on PostgreSQL",
        ),
        Expect("must be a number of seconds from 0.01 to 60, got {value!r}"),
    ] = None


class SchedulesSettings(TableSettings):
    table = SCHEDULES

    jobs: Annotated[
        str | None,
        Field(
            strict=True,
            min_length=1,
            max_length=4096,
            description="the directory of compiled jobs whose schedules and chains `hz worker` "
            "fires (`--schedules DIR` overrides it); unset: none",
        ),
        Expect("must be the path of a directory of compiled jobs, got {value!r}"),
    ] = None
    max_followers: Annotated[
        int,
        Field(
            strict=True,
            ge=1,
            le=MOST_FOLLOWERS,
            description="the most runs of followers (`hz.after`) queued or running at once "
            "over the ledger; at the limit a worker queues no more until some end",
        ),
        Expect(
            f"must be an integer from 1 to {MOST_FOLLOWERS}, got {{value!r}}",
            hint="each follower run may spend its job's max_usd",
        ),
    ] = MAX_FOLLOWERS


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
        QueueSettings,
        SchedulesSettings,
        PublishSettings,
    )
}


def model_of(table: str) -> type[TableSettings]:
    """The settings model of a table: for ``[system.runner]`` its shared keys, for
    ``[providers.NAME]`` the provider's (``ConfigError`` when it is unknown or cannot be
    loaded)."""
    provider = provider_table(table)
    if provider is not None:
        from hz.runtime.providers import registry

        return registry.resolve(provider).settings_model
    return SharedSettings if table == RUNNER else MODELS[table]


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
    try:
        model = model_of(table)
    except ConfigError as e:
        return e
    accepted = model.keys()
    if table == CAPABILITIES and key not in accepted:
        # A capability an operator's command operation declares: its value is a provider's
        # name, as a catalog capability's is (``tracker`` stands for any of them).
        error = value_error(table, "tracker", value)
        if error is None:
            return None
        return ConfigError(error.message.replace("] tracker ", f"] {key} ", 1), hint=error.hint)
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

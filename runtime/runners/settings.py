"""A runner's settings: a frozen pydantic model of the ``[system.runner]`` keys it reads.

A runner's model is a table's settings model (``hz.runtime.settings.model``): each field is one
key (its alias when the attribute has another name), with a ``description`` for the runner's
docs table (``docs_table``) and an ``Expect`` naming what a bad value should have been, in
hz's words: ``[system.runner] KEY`` followed by the ``Expect`` text. Checks beyond a value's
type (a tool that can write, a refused override) raise ``ConfigError`` from a validator.
``from_table`` picks the runner's own keys from the table (the table holds every runner's
keys) and turns the first pydantic error into a ``ConfigError``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from hz.runtime.process.environment import check_passthrough
from hz.runtime.settings.keys import RUNNER
from hz.runtime.settings.model import (
    Expect,
    Flag,
    NonEmptyString,
    PathString,
    PositiveInteger,
    TableSettings,
)

__all__ = [
    "Expect",
    "MaxTurns",
    "ModelName",
    "RunnerSettings",
    "SharedSettings",
    "key_name",
    "model_key",
    "passed_names",
]


def key_name(key: str) -> str:
    """How messages name a key: ``[system.runner] KEY``."""
    return f"[{RUNNER}] {key}"


class RunnerSettings(TableSettings):
    """Base of every runner's settings model (and of ``SharedSettings``)."""

    table = RUNNER


def passed_names(key: str) -> BeforeValidator:
    """Validates a key listing environment variable names to pass to the agent."""
    return BeforeValidator(lambda value: check_passthrough(value, key_name(key)))


#: ``max_turns``: one definition, whoever declares it (the shared keys, a runner that reads it
#: with its own description).
MaxTurns = PositiveInteger | None

#: ``model``: the model a runner asks for, a non-empty string or unset. One type and one
#: wording whoever declares it; declare it with ``model_key``.
ModelName = NonEmptyString | None


def model_key(description: str, *, default: str | None = None, blank: bool = True) -> Any:
    """The ``model`` key, for the shared keys and every runner that reads it (``model: ModelName =
    model_key(...)``). What differs from runner to runner is data: the ``description`` (where
    the name goes, the runner's docs row), the ``default``, and ``blank=False`` for a runner
    that also refuses a name of white space only (claude-code, as it always has)."""
    if blank:
        return Field(default, description=description)
    return Field(default, description=description, pattern=r"\S")


class SharedSettings(RunnerSettings):
    """The shared ``[system.runner]`` keys, valid whatever runner is bound. hz reads
    ``require_enforced_budget`` and ``receipt_dir`` itself; a runner that reads ``model`` or
    ``max_turns`` declares them in its own model too. The configuration checks their values
    with this model as it reads them (``hz.runtime.settings.keys``)."""

    model: ModelName = model_key("the model the runner asks for; unset: the runner's default")
    max_turns: Annotated[
        MaxTurns,
        Field(description="an operator's circuit breaker for runners that support a turn limit"),
    ] = None
    require_enforced_budget: Annotated[
        Flag,
        Field(
            description="refuse to start a run when the bound runner cannot enforce a budget "
            "(`budget` capability not `hard`); nothing starts",
        ),
    ] = False
    receipt_dir: Annotated[
        PathString | None,
        Field(
            description="where `hz run` chains receipts (`--receipt-dir` overrides it); unset: "
            "`receipts/` in the state directory (`[system] state_dir`)",
        ),
    ] = None

"""A runner's settings: a frozen pydantic model of the ``[system.runner]`` keys it reads.

Each field is one key (its alias when the attribute has another name), with a
``description`` for the runner's docs table (``docs_table``) and an ``Expect`` naming what a
bad value should have been, in hz's words: ``[system.runner] KEY`` followed by the
``Expect`` text, formatted with the value given (``{value!r}``). Checks beyond a value's type
(a tool that can write, a refused override) raise ``ConfigError`` from a validator; it passes
through pydantic unchanged. ``from_table`` picks the runner's own keys from the table (the
table holds every runner's keys) and turns the first pydantic error into a ``ConfigError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from hz.runtime.config.keys import RUNNER
from hz.runtime.errors import ConfigError
from hz.runtime.process.environment import check_passthrough

if TYPE_CHECKING:
    from hz.runtime.config.layers import Config


def key_name(key: str) -> str:
    """How messages name a key: ``[system.runner] KEY``."""
    return f"[{RUNNER}] {key}"


@dataclass(frozen=True, slots=True)
class Expect:
    """What a key's value must be, as hz words it: e.g. ``must be true or false, not {value!r}``."""

    problem: str


class RunnerSettings(BaseModel):
    """Base of every runner's settings model (and of ``SharedSettings``)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_alias=True, validate_by_name=True
    )

    @classmethod
    def keys(cls) -> frozenset[str]:
        """The ``[system.runner]`` keys this model reads."""
        return frozenset(_key(name, field) for name, field in cls.model_fields.items())

    @classmethod
    def from_table(cls, table: Mapping[str, object]) -> Self:
        """Validate this model's keys of a ``[system.runner]`` table (other keys are left to the
        runners that read them); ``ConfigError`` names the first bad key."""
        keys = cls.keys()
        mine = {key: value for key, value in table.items() if key in keys}
        try:
            return cls.model_validate(mine)
        except ValidationError as e:
            raise ConfigError(cls._problem(e.errors()[0], mine)) from e

    @classmethod
    def from_config(cls, config: Config) -> Self:
        """This model's settings in the effective configuration."""
        return cls.from_table(config.table(RUNNER))

    @classmethod
    def _problem(cls, error: ErrorDetails, given: Mapping[str, object]) -> str:
        key = str(error["loc"][0]) if error["loc"] else ""
        field = next((f for n, f in cls.model_fields.items() if _key(n, f) == key), None)
        expect = (
            None
            if field is None
            else next((m for m in field.metadata if isinstance(m, Expect)), None)
        )
        if expect is None:
            return f"{key_name(key)}: {error['msg']}"
        return f"{key_name(key)} {expect.problem.format(value=given.get(key))}"

    @classmethod
    def docs_table(cls) -> str:
        """The Markdown table of the keys, their defaults and meaning, for the runner's docs."""
        rows = ["| key | default | meaning |", "|---|---|---|"]
        for name, field in cls.model_fields.items():
            rows.append(f"| `{_key(name, field)}` | {_default(field)} | {field.description} |")
        return "\n".join(rows) + "\n"


def _key(name: str, field: FieldInfo) -> str:
    return field.alias or name


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "— (required)"
    default = field.get_default(call_default_factory=True)
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, tuple):
        default = list(default)
    return f"`{json.dumps(default)}`"


def passed_names(key: str) -> BeforeValidator:
    """Validates a key listing environment variable names to pass to the agent."""
    return BeforeValidator(lambda value: check_passthrough(value, key_name(key)))


#: The shared ``max_turns`` as a runner that reads it declares it (with its own description).
MaxTurns = Annotated[
    int | None, Field(strict=True, ge=1), Expect("must be an integer >= 1, got {value!r}")
]

_STRING = Expect("must be a non-empty string, got {value!r}")


class SharedSettings(RunnerSettings):
    """The shared ``[system.runner]`` keys, valid whatever runner is bound. hz reads
    ``require_enforced_budget`` and ``receipt_dir`` itself; a runner that reads ``model`` or
    ``max_turns`` declares them in its own model too. Their values are also checked where the
    configuration is read (``hz.runtime.config.keys``), in the same words."""

    model: Annotated[
        str | None,
        Field(
            strict=True,
            min_length=1,
            description="the model the runner asks for; unset: the runner's default",
        ),
        _STRING,
    ] = None
    # Worded as the configuration words it, unlike ``MaxTurns``.
    max_turns: Annotated[
        int | None,
        Field(
            strict=True,
            ge=1,
            description="an operator's circuit breaker for runners that support a turn limit",
        ),
        Expect("must be a positive integer, got {value!r}"),
    ] = None
    require_enforced_budget: Annotated[
        bool,
        Field(
            strict=True,
            description="refuse to start a run when the bound runner cannot enforce a budget "
            "(`budget` capability not `hard`); nothing starts",
        ),
        Expect("must be true or false, got {value!r}"),
    ] = False
    receipt_dir: Annotated[
        str | None,
        Field(
            strict=True,
            min_length=1,
            pattern=r"^[^\x00]*$",
            description="where `hz run` chains receipts (`--receipt-dir` overrides it); unset: "
            "`receipts/` in the state directory (`[system] state_dir`)",
        ),
        Expect("must be a path (a non-empty string without a NUL character), got {value!r}"),
    ] = None

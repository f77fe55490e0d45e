"""A configuration table's settings: a frozen pydantic model of the keys it accepts.

Each field is one key (its alias when the attribute has another name), with a
``description`` for the table's docs (``docs_table``) and an ``Expect`` naming what a bad value
should have been, in hz's words: ``[TABLE] KEY`` followed by the ``Expect`` text, formatted
with the value given (``{value!r}``). Checks beyond a value's type raise ``ConfigError`` from
a validator; it passes through pydantic unchanged. ``from_table`` picks the model's own keys
from a table and turns the first pydantic error into a ``ConfigError``. The keys the
configuration accepts, its did-you-mean, its docs tables and ``hz config show`` come from
these models (``hz.runtime.config.tables.model_of``); a runner's model is one too
(``hz.runtime.runners.settings``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Protocol, Self, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, to_jsonable_python

from hz.runtime.artifacts.errors import ConfigError


class TableSource(Protocol):
    """Where ``from_config`` reads a table: the effective configuration
    (``hz.runtime.config.layers.Config``), which this module does not import."""

    def table(self, table: str) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Expect:
    """What a key's value must be, as hz words it: e.g. ``must be true or false, got {value!r}``,
    and a ``hint`` saying what would do."""

    problem: str
    hint: str | None = None


#: The largest integer a setting takes: what the ledger's integers (SQLite's, PostgreSQL's
#: ``bigint``) hold. TOML's own integers stop there too.
MAX_INTEGER = 2**63 - 1
#: The largest integer that is a finite float: a larger one is no amount (``float()`` raises).
_MAX_FLOAT_INTEGER = int(sys.float_info.max)
_SHOWN_CHARS = 60


class _Shown:
    """A value for a message: its ``repr``, cut to a readable length (a 400-digit number says
    how many digits it has)."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        value = self.value
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
            digits = len(str(abs(value)))  # under the int-to-str limit: TOML could read it
            return f"{str(value)[:20]}… (a number of {digits} digits)"
        text = repr(value)
        return (
            text
            if len(text) <= _SHOWN_CHARS
            else f"{text[:_SHOWN_CHARS]}… ({len(text)} characters)"
        )

    __str__ = __repr__


#: The value types several tables share, each with its one wording.
NonEmptyString = Annotated[
    str, Field(strict=True, min_length=1), Expect("must be a non-empty string, got {value!r}")
]
#: A NUL cannot be in a file name: the first use of the path would be a ValueError.
PathString = Annotated[
    str,
    Field(strict=True, min_length=1, pattern=r"^[^\x00]*$"),
    Expect("must be a path (a non-empty string without a NUL character), got {value!r}"),
]
PositiveInteger = Annotated[
    int,
    Field(strict=True, ge=1, le=MAX_INTEGER),
    Expect(
        "must be a positive integer, got {value!r}",
        hint=f"a whole number from 1 to {MAX_INTEGER}",
    ),
]
#: An amount of US dollars: ``inf`` (TOML has it) would be no ceiling at all, ``nan`` none, and
#: an integer past what a float holds no number hz can compare a spend with.
Amount = (
    Annotated[int, Field(strict=True, gt=0, le=_MAX_FLOAT_INTEGER)]
    | Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
)
DOLLARS_HINT = "an amount of US dollars such as 25 or 0.5"
Dollars = Annotated[
    Amount, Expect("must be a finite number greater than 0, got {value!r}", hint=DOLLARS_HINT)
]
Flag = Annotated[bool, Field(strict=True), Expect("must be true or false, got {value!r}")]


class TableSettings(BaseModel):
    """Base of every table's settings model; ``table`` names the table in messages."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_alias=True, validate_by_name=True
    )

    table: ClassVar[str]

    @classmethod
    def keys(cls) -> frozenset[str]:
        """The keys of the table this model reads."""
        return frozenset(key_of(name, field) for name, field in cls.model_fields.items())

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Each key's default as JSON data, ``None`` where it has none (unset or required)."""
        return {
            key_of(name, field): None
            if field.is_required()
            else to_jsonable_python(field.get_default(call_default_factory=True))
            for name, field in cls.model_fields.items()
        }

    @classmethod
    def from_table(cls, table: Mapping[str, object]) -> Self:
        """Validate this model's keys of a table (other keys are left to whoever reads them);
        ``ConfigError`` names the first bad key."""
        keys = cls.keys()
        mine = {key: value for key, value in table.items() if key in keys}
        try:
            return cls.model_validate(mine)
        except ValidationError as e:
            message, hint = cls._problem(e.errors()[0], mine)
            raise ConfigError(message, hint=hint) from e

    @classmethod
    def from_config(cls, config: TableSource) -> Self:
        """This model's settings in the effective configuration."""
        return cls.from_table(config.table(cls.table))

    @classmethod
    def _problem(cls, error: ErrorDetails, given: Mapping[str, object]) -> tuple[str, str | None]:
        key = str(error["loc"][0]) if error["loc"] else ""
        field = next((f for n, f in cls.model_fields.items() if key_of(n, f) == key), None)
        expect = None if field is None else _expect(field.metadata, field.annotation)
        if expect is None:
            return f"[{cls.table}] {key}: {error['msg']}", None
        problem = expect.problem.format(value=_Shown(given.get(key)))
        return f"[{cls.table}] {key} {problem}", expect.hint

    @classmethod
    def docs_table(cls) -> str:
        """The Markdown table of the keys, their defaults and meaning, for the docs."""
        rows = ["| key | default | meaning |", "|---|---|---|"]
        for name, field in cls.model_fields.items():
            rows.append(f"| `{key_of(name, field)}` | {_default(field)} | {field.description} |")
        return "\n".join(rows) + "\n"


def _expect(metadata: list[Any], annotation: Any) -> Expect | None:
    """The field's ``Expect``, or that of a type it may be (``NonEmptyString | None``)."""
    found = next((m for m in metadata if isinstance(m, Expect)), None)
    if found is not None:
        return found
    for arg in get_args(annotation):
        if get_origin(arg) is Annotated:
            found = _expect(list(arg.__metadata__), None)
        elif get_args(arg):
            found = _expect([], arg)
        if found is not None:
            return found
    return None


def key_of(name: str, field: FieldInfo) -> str:
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

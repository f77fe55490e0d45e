"""The ``command`` provider: operations the operator defines as a program that prints JSON.

``[providers.command.operations."tracker.issues_updated"]`` declares one operation: ``argv``
(run without a shell), its argument schema ``args`` (a JSON Schema of an object; default: no
arguments), its ``result`` schema (required), whether it takes a ``window``, its
``timeout_seconds`` and ``max_bytes``, and the names of hz's environment variables it gets
(``env``; besides them only PATH, HOME, TMPDIR and the locale; ``HZ_CREDENTIAL_*`` never).

A name may be outside the catalog (``hz.runtime.artifacts.operations.CATALOG``): that is how a
company wires its own tracker. A name *in* the catalog takes the catalog's schemas and window
as they are, so a contract checked against the catalog means the same whoever serves it: such
a table may not set ``args``, ``result`` or ``window`` (refused when the settings are read).

A fetch writes ``{"operation", "args", "window": {"since", "until"} | null}`` as JSON to the
program's stdin and reads one JSON document from its stdout: at most ``max_bytes`` (more is
``HZ725``, and is never held in memory), then parsed strictly (``HZ724`` when it is not JSON).
A non-zero exit is ``HZ722`` with the status and the last lines of stderr; the timeout is
``HZ726`` (the program's whole process group is stopped). hz then checks the value against the
result schema, as for every provider.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, field_validator

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import CATALOG, OPERATION_PATTERN, Operation
from hz.runtime.artifacts.printable import printable
from hz.runtime.artifacts.strict_json import JsonError, loads
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.jsonschema import SchemaProblem, metaschema_errors
from hz.runtime.process.bounded import search_path
from hz.runtime.process.environment import check_passthrough, child_environment
from hz.runtime.providers import child
from hz.runtime.providers.protocol import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    HZ721,
    HZ724,
    HZ725,
    FetchRequest,
    ProviderError,
    ProviderSettings,
    Readiness,
)
from hz.runtime.settings.model import Expect, Flag, TableSettings

TABLE = "providers.command"
#: The argument schema of an operation that declares none: an object with no keys.
NO_ARGUMENTS: Mapping[str, Any] = {"type": "object", "additionalProperties": False}
_OPERATION = re.compile(OPERATION_PATTERN)


def _argv(value: object) -> tuple[str, ...]:
    if (
        not isinstance(value, list | tuple)
        or not value
        or not all(isinstance(a, str) and "\0" not in a for a in value)
    ):
        raise ValueError("argv")
    program = value[0]
    if not program or ("/" in program and not os.path.isabs(os.path.expanduser(program))):
        raise ValueError("argv")
    return (os.path.expanduser(program), *value[1:])


def _schema(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("schema")
    try:  # TOML has dates and times; JSON does not.
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError("schema") from e
    try:
        if metaschema_errors(value):
            raise ValueError("schema")
    except SchemaProblem as e:
        raise ValueError("schema") from e
    return value


JsonSchema = Annotated[
    dict[str, Any],
    BeforeValidator(_schema),
    Expect("must be a JSON Schema (a table that is valid JSON Schema 2020-12), got {value!r}"),
]


class OperationSettings(TableSettings):
    """One ``[providers.command.operations."NAME"]`` table."""

    table = f'{TABLE}.operations."CAPABILITY.OPERATION"'

    argv: Annotated[
        tuple[str, ...],
        BeforeValidator(_argv),
        Field(
            description="the program and its arguments, run **without a shell** in the run's "
            "working directory. Item 0 is a name found on `PATH` or an absolute path (`~` "
            "expanded): a relative path would be looked up in the working directory."
        ),
        Expect(
            "must be a non-empty list of strings whose first item is a program name or an "
            "absolute path, got {value!r}",
            hint='e.g. argv = ["/opt/acme/bin/issues-json", "--since-window"]',
        ),
    ]
    args: Annotated[
        JsonSchema | None,
        Field(
            description="the JSON Schema of the arguments (`type` must be `object`); unset: "
            "no arguments. Not for an operation of the catalog."
        ),
    ] = None
    result: Annotated[
        JsonSchema | None,
        Field(
            description="the JSON Schema of what the program prints; required, except for an "
            "operation of the catalog (which has its own)."
        ),
    ] = None
    window: Annotated[
        Flag | None,
        Field(description="whether the operation takes a window. Not for the catalog's."),
    ] = None
    summary: Annotated[
        str,
        Field(strict=True, max_length=200, description="one line saying what it fetches"),
        Expect("must be a string of at most 200 characters, got {value!r}"),
    ] = ""
    timeout_seconds: Annotated[
        child.TimeoutSeconds,
        Field(description="how long the program may run; then its process group is stopped"),
    ] = DEFAULT_TIMEOUT_SECONDS
    max_bytes: Annotated[
        child.MaxBytes,
        Field(description="the most the program may print (the fetch's own cap applies too)"),
    ] = DEFAULT_MAX_BYTES
    env: Annotated[
        tuple[str, ...],
        Expect("must be a list of environment variable names, got {value!r}"),
        Field(
            description="names of hz's environment variables the program gets (its own token, "
            "say); `HZ_CREDENTIAL_*` names are refused"
        ),
    ] = ()


@functools.cache
def _model_for(name: str) -> type[OperationSettings]:
    """``OperationSettings`` whose messages name the operation's own table."""
    return type(
        "OperationSettings", (OperationSettings,), {"table": f'{TABLE}.operations."{name}"'}
    )


def _operation(name: object, table: object) -> OperationSettings:
    if not isinstance(name, str) or not _OPERATION.match(name):
        raise ConfigError(
            f"[{TABLE}.operations] {printable(repr(name))} is not an operation name",
            hint='a capability and an operation such as "tracker.issues_updated"',
        )
    where = f'[{TABLE}.operations."{name}"]'
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table, got {printable(repr(table))}")
    model = _model_for(name)
    unknown = sorted(set(table) - model.keys())
    if unknown:
        suggestion = did_you_mean_suffix(unknown[0], model.keys())
        raise ConfigError(f"{where} has no key {printable(repr(unknown[0]))}{suggestion}")
    settings = model.from_table(table)
    check_passthrough(list(settings.env), f"{where} env")
    _declared(name, settings)
    return settings


def _declared(name: str, settings: OperationSettings) -> Operation:
    """The operation a table declares (``ConfigError`` when it cannot be one)."""
    where = f'[{TABLE}.operations."{name}"]'
    catalog = CATALOG.get(name)
    if catalog is not None:
        given = [k for k in ("args", "result", "window") if getattr(settings, k) is not None]
        if given:
            raise ConfigError(
                f"{where} sets {given[0]}, but {name} is an operation of the catalog: its "
                "arguments, result and window are the catalog's",
                hint="leave out args, result and window (`hz providers` shows the catalog's)",
            )
        return catalog
    if settings.result is None:
        raise ConfigError(
            f"{where} needs a result: the JSON Schema of what the program prints",
            hint='e.g. result = { type = "array" }',
        )
    args = NO_ARGUMENTS if settings.args is None else settings.args
    if args.get("type") != "object":
        raise ConfigError(
            f'{where} args must be the schema of an object (type = "object"), '
            f"got {printable(repr(dict(args)))}"
        )
    return Operation(
        name,
        settings.summary or f"the output of {printable(settings.argv[0])}",
        args,
        settings.result,
        window=bool(settings.window),
    )


class CommandProviderSettings(ProviderSettings):
    table = TABLE

    operations: Annotated[
        dict[str, OperationSettings],
        Field(
            description='the operations, one table each: `[providers.command.operations."NAME"]`'
        ),
    ] = Field(default_factory=dict)

    @field_validator("operations", mode="before")
    @classmethod
    def _operations(cls, value: object) -> dict[str, OperationSettings]:
        if not isinstance(value, dict):
            raise ConfigError(
                f"[{TABLE}] operations must be a table of operations, got {printable(repr(value))}"
            )
        return {name: _operation(name, table) for name, table in value.items()}


class CommandProvider:
    """Each operation runs the operator's program. ``capabilities`` is empty: it serves the
    capabilities of the operations its settings declare (``operations``)."""

    name: ClassVar[str] = "command"
    capabilities: ClassVar[tuple[str, ...]] = ()
    settings_model: ClassVar[type[CommandProviderSettings]] = CommandProviderSettings

    def __init__(self, settings: CommandProviderSettings) -> None:
        self.settings = settings
        self._operations = {
            name: _declared(name, table) for name, table in settings.operations.items()
        }

    def operations(self) -> Mapping[str, Operation]:
        return dict(self._operations)

    def ready(self, *, online: bool = False) -> Readiness:
        """Whether every operation's program can be found. ``online`` changes nothing: hz does
        not run the programs to check them."""
        try:
            ops = self.settings.operations
            if not ops:
                return Readiness(False, f"no operation is declared in [{TABLE}.operations]")
            missing = [name for name, table in ops.items() if not _found(table)]
            if missing:
                return Readiness(False, f"the program of {printable(missing[0])} is not found")
            return Readiness(True, f"{len(ops)} operation(s), each program found")
        except Exception as e:  # ready never raises: a failure is a reason
            return Readiness(False, f"could not check the programs: {printable(str(e))}")

    def fetch(self, request: FetchRequest) -> Any:
        name = request.operation.name
        settings = self.settings.operations.get(name)
        if settings is None:
            raise ProviderError(
                HZ721,
                f"no operation {printable(name)!r} is declared in [{TABLE}.operations]",
            )
        cap = min(settings.max_bytes, request.max_bytes)
        window = None if request.window is None else request.window.to_json()
        stdin = json.dumps(
            {"operation": name, "args": dict(request.args), "window": window},
            ensure_ascii=False,
        ).encode()
        outcome = child.run(
            settings.argv,
            request=request,
            stdin=stdin,
            env=child_environment(passthrough=settings.env),
            timeout=settings.timeout_seconds,
            max_bytes=cap,
            program="the command",
        )
        if outcome.stdout_truncated:
            raise ProviderError(
                HZ725,
                f"the command printed more than {cap} bytes",
                hint=f'raise max_bytes in [{TABLE}.operations."{name}"], or ask for less',
            )
        child.check_exit(outcome, "the command")
        try:
            return loads(outcome.stdout)
        except JsonError as e:
            where = f" (line {e.lineno}, column {e.colno})" if e.located else ""
            said = "printed nothing" if not outcome.stdout.strip() else "printed no JSON"
            raise ProviderError(
                HZ724,
                f"the command {said}: {printable(e.msg)}{where}",
                hint="it must print one JSON document on stdout (and anything else on stderr)",
            ) from e


def _found(settings: OperationSettings) -> bool:
    program = settings.argv[0]
    if os.path.isabs(program):
        return os.access(program, os.X_OK) and os.path.isfile(program)
    return shutil.which(program, path=search_path(os.environ)) is not None

"""Inputs read through a capability operation (HZ410-HZ417): the operation is known, its
arguments and window fit it, the input's own schema can hold what it returns, and a job reads
no more than ``MAX_READ_INPUTS`` inputs that way.

The checks run against a catalog of operations passed in (``operations``: hz's own
``hz.runtime.artifacts.operations.CATALOG`` by default, to which the command line adds the
operator's ``command`` operations), never against a provider: validating a contract imports
no provider, reads no credential and asks no server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hz.compiler.checks.common import at, dotted, flow, get, quoted, short
from hz.compiler.checks.messages import describe, expected_types
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import (
    HZ410,
    HZ411,
    HZ412,
    HZ413,
    HZ414,
    HZ415,
    HZ416,
    HZ417,
)
from hz.compiler.source import JsonPath, SourceDoc
from hz.runtime.artifacts.operations import (
    MAX_READ_INPUTS,
    OPERATION_PATTERN,
    SINCE_LAST_SUCCESS,
    Operation,
    WindowError,
    window_length,
)
from hz.runtime.artifacts.suggest import closest, did_you_mean

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

Operations = Mapping[str, Operation]

#: Where `hz providers` is named: the one place that lists every operation an hz can read.
_LISTS_THEM = "`hz providers` lists every operation with its arguments"
#: The JSON types a schema's ``type`` may name; an integer is a number too.
_TYPES = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})
#: A window is at most this long as written (``since-last-success``): a longer text is shown cut.
_WINDOW_SHOWN = 40


def known(name: str, operations: Operations) -> Operation | None:
    """The operation ``name`` names, when the catalog has it under a well-formed name."""
    op = operations.get(name)
    return op if op is not None and re.match(OPERATION_PATTERN, name) else None


def check_reads(doc: SourceDoc, operations: Operations) -> list[Diagnostic]:
    """Every problem of the ``read``, ``args`` and ``window`` of every input."""
    inputs = get(doc.data, "hz", "inputs")
    if not isinstance(inputs, dict):
        return []
    out: list[Diagnostic] = []
    reading: list[str] = []
    for name, spec in inputs.items():
        if isinstance(spec, dict):
            out += _input(doc, ("hz", "inputs", name), spec, operations)
            read = spec.get("read")
            if isinstance(read, str) and not _contract_read(read):
                reading.append(name)
    if len(reading) > MAX_READ_INPUTS:
        out.append(_too_many(doc, reading))
    return out


def _contract_read(read: str) -> bool:
    """``read: contract:NAME``. The pattern lives with the job models, which build pydantic
    models as they are imported: only for an input that reads (``hz validate`` of a contract
    without one must not pay for them)."""
    from hz.runtime.artifacts.models import CONTRACT_READ

    return CONTRACT_READ.match(read) is not None


def _too_many(doc: SourceDoc, reading: list[str]) -> Diagnostic:
    """HZ417, at the first input past the cap."""
    first = reading[MAX_READ_INPUTS]
    return at(
        doc,
        ("hz", "inputs", first),
        HZ417,
        f"hz.inputs: {len(reading)} inputs are read through an operation, more than the "
        f"{MAX_READ_INPUTS} a job may read (the first past them: {short(first)})",
        key=True,
        hint="read fewer inputs: split the contract, or read a whole directory with one files.glob",
    )


def _input(
    doc: SourceDoc, base: JsonPath, spec: dict[str, Any], operations: Operations
) -> list[Diagnostic]:
    read = spec.get("read")
    upstream = isinstance(read, str) and _contract_read(read)
    out: list[Diagnostic] = []
    if "max_age" in spec and not upstream:
        out.append(_not_fitting(doc, base, "max_age", "an input that reads contract:NAME"))
    if "read" not in spec:
        return out + [_without_read(doc, base, key) for key in ("args", "window") if key in spec]
    if not isinstance(read, str) or len(read) > 128:
        return out  # the contract schema says what it should be (HZ103, HZ104)
    if "default" in spec:
        out.append(_default(doc, base, read))
    if upstream:
        if "max_age" in spec:
            out += _window_text(doc, (*base, "max_age"), spec["max_age"])
        return out + [
            _not_fitting(doc, base, key, "an input read through a capability operation")
            for key in ("args", "window")
            if key in spec
        ]
    op = known(read, operations)
    if op is None:
        out.append(_unknown(doc, base, read, operations))
        if "window" in spec:
            out += _window_text(doc, (*base, "window"), spec["window"])
        return out
    out += _args(doc, base, spec, op)
    if "window" in spec:
        out += _window(doc, base, spec["window"], op, operations)
    out += _result(doc, base, spec.get("schema", True), op)
    return out


def _not_fitting(doc: SourceDoc, base: JsonPath, key: str, which: str) -> Diagnostic:
    """HZ416: ``key`` belongs to the other kind of read."""
    hint = (
        "remove max_age, or read another job's draft with read: contract:NAME"
        if key == "max_age"
        else f"remove {key}: another job's draft is taken whole (max_age bounds its age)"
    )
    return at(
        doc,
        (*base, key),
        HZ416,
        f"{dotted((*base, key))}: only {which} has {key}",
        key=True,
        hint=hint,
    )


def _without_read(doc: SourceDoc, base: JsonPath, key: str) -> Diagnostic:
    what = "arguments" if key == "args" else "a window"
    return at(
        doc,
        (*base, key),
        HZ415,
        f"{dotted((*base, key))} needs read: only an input read through an operation has {what}",
        key=True,
        hint=f"add read: CAPABILITY.OPERATION ({_LISTS_THEM}), or remove {key}",
    )


def _default(doc: SourceDoc, base: JsonPath, read: str) -> Diagnostic:
    return at(
        doc,
        (*base, "default"),
        HZ413,
        f"{dotted(base)} reads {short(read)} and cannot also have a default",
        key=True,
        hint="remove the default: the value is fetched before every run; to give one by hand "
        f"(a preview, a test), pass --input {base[-1]}=VALUE, which is used instead of the fetch",
    )


def _unknown(doc: SourceDoc, base: JsonPath, read: str, operations: Operations) -> Diagnostic:
    names = sorted(operations)
    suggestion = did_you_mean(read, names)
    capability = read.partition(".")[0]
    siblings = [name for name in names if name.partition(".")[0] == capability]
    listing = f"{capability}'s operations: {', '.join(siblings)}; " if siblings else ""
    hint = f"{listing}{_LISTS_THEM}"
    return at(
        doc,
        (*base, "read"),
        HZ410,
        f"{dotted((*base, 'read'))}: unknown operation {short(read)}",
        hint=f"{suggestion} ({hint})" if suggestion else hint,
    )


def _args(doc: SourceDoc, base: JsonPath, spec: dict[str, Any], op: Operation) -> list[Diagnostic]:
    from hz.runtime.jsonschema import SchemaProblem, errors

    args = spec.get("args", {})
    if not isinstance(args, dict):
        return []  # the contract schema: HZ103
    where = (*base, "args")
    # A missing argument is said at `args`, or at `read` when the input has no `args`.
    holder = where if "args" in spec else (*base, "read")
    try:
        found = errors(dict(op.args), args)
    except SchemaProblem as problem:  # an operator's command operation with a broken schema
        message = f"{dotted(where)}: {op.name}'s argument schema cannot be used: {problem.message}"
        return [at(doc, holder, HZ411, message, key=True)]
    # A misspelt argument (`repo`) is said once, with the name it should have: the required
    # argument it stands for is not said missing as well.
    meant = {_meant(str(name), op) for name in args if name not in _properties(op)}
    out: list[Diagnostic] = []
    for e in found:
        if not (e.validator == "required" and not e.absolute_path and _key(e) in meant):
            out += _argument_problem(doc, where, holder, e, op)
    return out


def _properties(op: Operation) -> dict[str, Any]:
    properties: dict[str, Any] = op.args.get("properties", {})
    return properties


def _key(e: ValidationError) -> str | None:
    from hz.compiler.checks.validator import MissingKey

    return e.key if isinstance(e, MissingKey) else None


def _meant(name: str, op: Operation) -> str | None:
    """The argument of ``op`` an unknown ``name`` most likely means: the closest, or the one
    it is the start of (``repo`` for ``repository``)."""
    takes = list(_properties(op))
    found = closest(name, takes)
    if found is None and len(name) >= 3:
        starting = [each for each in takes if each.startswith(name)]
        found = starting[0] if len(starting) == 1 else None
    return found


def _argument_problem(
    doc: SourceDoc, where: JsonPath, holder: JsonPath, e: ValidationError, op: Operation
) -> list[Diagnostic]:
    from hz.compiler.checks.validator import MissingKey

    properties = _properties(op)
    if not e.absolute_path and isinstance(e, MissingKey):
        example = op.examples.get(e.key)
        add = "add it" if example is None else f"add it, as in args: {{{e.key}: {flow(example)}}}"
        about = properties.get(e.key, {}).get("description")
        message = f"{dotted(where)}: {op.name} needs the argument {e.key!r}"
        return [at(doc, holder, HZ411, message, key=True, hint=f"{about}; {add}" if about else add)]
    schema = e.schema if isinstance(e.schema, dict) else {}
    if (
        not e.absolute_path
        and e.validator == "additionalProperties"
        and e.validator_value is False
        and "patternProperties" not in schema
        and isinstance(e.instance, dict)
    ):
        takes = list(properties)
        listing = f"its arguments: {', '.join(takes)}" if takes else "it takes no arguments"
        out = []
        for name in e.instance:
            if name in properties:
                continue
            meant = _meant(str(name), op)
            suggestion = f"did you mean {meant!r}?" if meant else None
            out.append(
                at(
                    doc,
                    (*where, name),
                    HZ411,
                    f"{dotted(where)}: {op.name} takes no argument {short(name)}",
                    key=True,
                    hint=f"{suggestion} ({listing})" if suggestion else listing,
                )
            )
        return out
    path = (*where, *e.absolute_path)
    _, message, hint = describe(e, dotted(path), quote=quoted(doc, where))
    return [at(doc, path, HZ411, message, hint=hint or _unquote(e))]


def _unquote(e: ValidationError) -> str | None:
    """A number written in quotes (``number: "42"``) where the argument is a number."""
    expected: Any = e.validator_value if e.validator == "type" else ()
    names = {expected} if isinstance(expected, str) else set(expected)
    if not {"integer", "number"} & names or not isinstance(e.instance, str):
        return None
    try:
        number = json.loads(e.instance)
    except ValueError:
        return None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return None
    key = e.absolute_path[-1] if e.absolute_path else None
    return f"write it without quotes, as in {key}: {e.instance}" if isinstance(key, str) else None


def _window(
    doc: SourceDoc, base: JsonPath, window: Any, op: Operation, operations: Operations
) -> list[Diagnostic]:
    path = (*base, "window")
    if op.window:
        return _window_text(doc, path, window)
    takers = sorted(name for name, each in operations.items() if each.window)
    listing = "no operation does"
    if takers:
        listing = f"the operations that take one: {', '.join(takers)}"
    return [
        at(
            doc,
            path,
            HZ412,
            f"{dotted(path)}: {op.name} takes no window",
            key=True,
            hint=f"remove it ({listing})",
        )
    ]


def _window_text(doc: SourceDoc, path: JsonPath, window: Any) -> list[Diagnostic]:
    if not isinstance(window, str):
        return []  # the contract schema: HZ103
    # A window as written is at most 18 characters: a longer text is named cut short (and so
    # stays no window).
    text = window if len(window) <= _WINDOW_SHOWN else window[: _WINDOW_SHOWN - 3] + "..."
    try:
        window_length(text)
    except WindowError as e:
        hint = did_you_mean(text, [SINCE_LAST_SUCCESS])
        return [at(doc, path, HZ412, f"{dotted(path)}: {e}", hint=hint)]
    return []


def _types(value: Any) -> set[str] | None:
    """A schema's ``type`` as a set, with ``integer`` under ``number``; None when it names no
    JSON type it could be checked by (an invalid schema is HZ401's)."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(n in _TYPES for n in names):
        return None
    found = set(names)
    return found | {"integer"} if "number" in found else found


def _result(doc: SourceDoc, base: JsonPath, schema: Any, op: Operation) -> list[Diagnostic]:
    """HZ414 when the input's schema and the operation's result schema hold no value in common
    by their top-level ``type``: only that is compared (and a schema that is ``false``);
    everything else of the declared schema is checked against the fetched value."""
    where = (*base, "schema")
    returned = op.result.get("type")
    gives = _types(returned)
    if gives is None:
        return []
    answer = expected_types(returned)
    fix = _type_line(returned)
    hint = f"declare {fix}, or leave the schema out to take {op.name}'s result schema"
    if schema is False:
        message = f"{dotted(where)} is false, which allows no value; {op.name} gives {answer}"
        return [at(doc, where, HZ414, message, hint=hint)]
    if not isinstance(schema, dict) or "type" not in schema:
        return []
    declared = _types(schema["type"])
    if declared is None or declared & gives:
        return []
    message = (
        f"{dotted(where)} declares {expected_types(schema['type'])}, but {op.name} gives {answer}"
    )
    return [at(doc, (*where, "type"), HZ414, message, hint=hint)]


def _type_line(value: Any) -> str:
    return f"type: {value}" if isinstance(value, str) else f"type: [{', '.join(value)}]"

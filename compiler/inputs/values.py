"""Input values for rendering, checked against the job's declarations, defaults applied.

Values come from an inputs file and ``--input`` arguments (``hz.compiler.inputs.sources``); a
value given with ``--input`` replaces the inputs file's value of that name. An input the job
reads through a provider (``read``) that was not given by hand is fetched by the caller's
``fetch`` (the CLI composes the runtime's fetch; the compiler never imports a provider); its
value comes back already checked against its schema, with its source. Every problem is a
located diagnostic (HZ701–HZ706, HZ711, and the fetch's HZ72x).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hz.compiler.diagnostics import Diagnostic, sort_diagnostics
from hz.compiler.inputs.sources import (
    Allowance,
    Supplied,
    located,
    parse_input_arg,
    read_inputs_file,
    shorten,
    shown_name,
)
from hz.compiler.rules.registry import HZ702, HZ703, HZ704, HZ705, HZ711
from hz.compiler.source import JsonPath
from hz.runtime.artifacts.canonical import digest_of
from hz.runtime.artifacts.models import InputSource, InputSpec
from hz.runtime.artifacts.packet_limits import MAX_INPUT_BYTES, inputs_size
from hz.runtime.artifacts.suggest import did_you_mean

__all__ = ["MAX_INPUT_BYTES", "Fetch", "Inputs", "apply_inputs", "collect_inputs", "gather_inputs"]


@dataclass(frozen=True, slots=True)
class Fetched:
    """What a ``Fetch`` answers: the values fetched and their sources, or the problems; and
    the warnings, said either way."""

    values: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, InputSource] = field(default_factory=dict)
    problems: Sequence[Diagnostic] = ()
    warnings: Sequence[Diagnostic] = ()


#: Fetches the ``read`` inputs not given by hand; it is told the names given
#: (``hz.runtime.providers.fetch.fetch_inputs`` behind it, composed by the CLI).
Fetch = Callable[[frozenset[str]], Fetched]


@dataclass(frozen=True, slots=True)
class Inputs:
    """The values of one render and, per ``read`` input, where its value came from; or the
    diagnostics that prevent the render (``values`` None). ``warnings``: the fetch's, with the
    values (among the diagnostics without them)."""

    values: dict[str, Any] | None
    sources: dict[str, InputSource]
    diagnostics: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...] = ()


#: Errors shown per input before the rest are summed up in one line.
MAX_ERRORS_PER_INPUT = 20


def _dotted(name: str, path: Sequence[str | int]) -> str:
    return name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _non_finite(value: Any) -> JsonPath | None:
    """The path of a NaN or infinity in ``value`` (YAML has them; JSON does not)."""
    stack: list[tuple[JsonPath, Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        if isinstance(item, dict):
            stack.extend(((*path, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))
    return None


def _schema_errors(name: str, spec: InputSpec, supplied: Supplied) -> list[Diagnostic]:
    origin = supplied.origin
    bad = _non_finite(supplied.value)
    if bad is not None:
        message = f"input '{_dotted(name, bad)}': NaN and infinity are not JSON values"
        return [located(origin, (*supplied.at, *bad), HZ702, message)]
    from hz.compiler.checks.common import json_short
    from hz.compiler.checks.messages import describe
    from hz.runtime.jsonschema import SchemaProblem
    from hz.runtime.jsonschema import errors as schema_errors

    try:
        failures = schema_errors(spec.schema_, supplied.value)
    except SchemaProblem as problem:
        message = f"input '{name}': cannot be checked against its schema: {problem.message}"
        return [located(origin, supplied.at, HZ702, message)]
    errors = sorted(
        failures,
        key=lambda e: (
            tuple((str(p), 0) if isinstance(p, str) else ("", p) for p in e.absolute_path),
            e.message,
        ),
    )
    found = []
    for error in errors[:MAX_ERRORS_PER_INPUT]:
        # The contract's wording, with values written as JSON: the inputs are JSON data.
        where = f"input '{_dotted(name, error.absolute_path)}'"
        _, message, hint = describe(error, where, json_short)
        at = (*supplied.at, *error.absolute_path)
        found.append(located(origin, at, HZ702, shorten(message), hint=hint))
    if len(errors) > MAX_ERRORS_PER_INPUT:
        more = f"input '{name}': {len(errors) - MAX_ERRORS_PER_INPUT} more errors not shown"
        found.append(located(origin, supplied.at, HZ702, more))
    return found


def apply_inputs(
    specs: Mapping[str, InputSpec],
    supplied: Mapping[str, Supplied],
    *,
    missing_at: str,
    unknown: Collection[str] | None = (),
    fetched: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Check supplied values against the declarations; fill defaults. ``missing_at`` names
    the file a missing required input is reported at; ``unknown`` names inputs whose value
    could not be read (``None``: possibly any of them), which are not reported missing.
    ``fetched``: the values of ``read`` inputs a provider gave (checked by the fetch)."""
    applied: dict[str, Any] = {}
    diagnostics: list[Diagnostic] = []
    fetched = fetched or {}
    for name, spec in sorted(specs.items()):
        if name in supplied:
            diagnostics.extend(_schema_errors(name, spec, supplied[name]))
            applied[name] = supplied[name].value
        elif name in fetched:
            applied[name] = fetched[name]
        elif not spec.required:
            applied[name] = spec.default
        elif unknown is not None and name not in unknown:
            diagnostics.append(
                Diagnostic(
                    HZ703,
                    f"required input {name!r} has no value",
                    missing_at,
                    hint=f"set it in the inputs file or pass --input {name}=…",
                )
            )
    for name in sorted(supplied.keys() - specs.keys()):
        item = supplied[name]
        declared = ", ".join(sorted(specs)) or "none"
        hint = did_you_mean(name, specs) or f"declared inputs: {declared}"
        message = f"input {shown_name(name)!r} is not declared by the job"
        diagnostics.append(located(item.origin, item.at, HZ704, message, key=True, hint=hint))
    return (None if diagnostics else applied), diagnostics


def collect_inputs(
    specs: Mapping[str, InputSpec],
    *,
    inputs_file: Path | None,
    input_args: Sequence[str],
    target: str,
) -> tuple[dict[str, Any] | None, tuple[Diagnostic, ...]]:
    """All input values for one render, or the diagnostics that prevent it. ``target`` is the
    job or contract being rendered (where a missing input is reported without inputs file)."""
    found = gather_inputs(specs, inputs_file=inputs_file, input_args=input_args, target=target)
    return found.values, found.diagnostics


def _not_fetched(name: str, spec: InputSpec, target: str) -> Diagnostic:
    read = (
        f"reads the draft of contract:{spec.upstream.job}"
        if spec.upstream is not None
        else f"is read through {spec.read.operation if spec.read else '?'}"
    )
    return Diagnostic(
        HZ711,
        f"input {name!r} {read}, and nothing fetched it",
        target,
        hint=f"pass --fetch to fetch it, or give it by hand with --input {name}=…",
    )


def gather_inputs(
    specs: Mapping[str, InputSpec],
    *,
    inputs_file: Path | None,
    input_args: Sequence[str],
    target: str,
    fetch: Fetch | None = None,
) -> Inputs:
    """``collect_inputs`` with the ``read`` inputs: those not given by hand are fetched by
    ``fetch`` (when the given values have no problem: nothing is fetched for a render that
    cannot happen), or, without ``fetch``, each is an HZ711 diagnostic. The sources name each
    read input's provider, or say it was given."""
    allowance = Allowance()
    supplied: dict[str, Supplied] = {}
    diagnostics: list[Diagnostic] = []
    unknown: set[str] | None = set()
    if inputs_file is not None:
        from_file, problems = read_inputs_file(inputs_file, allowance)
        supplied.update(from_file)
        diagnostics.extend(problems)
        if problems:
            unknown = None  # the file did not load: any input may have been in it
    for arg in input_args:
        name, item, problems = parse_input_arg(arg, specs, allowance)
        diagnostics.extend(problems)
        if name is not None and item is not None:
            supplied[name] = item
        elif name is not None and unknown is not None:
            unknown.add(name)
            supplied.pop(name, None)
    missing_at = str(inputs_file) if inputs_file is not None else target
    reads = {
        name: spec
        for name, spec in specs.items()
        if spec.read is not None or spec.upstream is not None
    }
    # Without the inputs file's values (``unknown`` None) what was given is not known.
    wanted = [] if unknown is None else sorted(reads.keys() - supplied.keys() - unknown)
    fetched = Fetched()
    if wanted and fetch is None:
        diagnostics.extend(_not_fetched(name, reads[name], target) for name in wanted)
    elif wanted and fetch is not None and not diagnostics:
        fetched = fetch(frozenset(supplied.keys() & reads.keys()))
        diagnostics.extend(fetched.problems)
    if unknown is not None:  # reported above, or not fetched: not "missing" as well
        unknown |= {name for name in wanted if name not in fetched.values}
    values, problems = apply_inputs(
        specs, supplied, missing_at=missing_at, unknown=unknown, fetched=fetched.values
    )
    diagnostics.extend(problems)
    if values is not None and not diagnostics:
        # What a packet holds is the values as JSON (``1E5`` is ``100000.0`` there, a control
        # character six bytes): held to the cap a packet is read with.
        size = inputs_size(values)
        if size > MAX_INPUT_BYTES:
            message = (
                f"the input values are larger than 8 MiB ({MAX_INPUT_BYTES:,} bytes) as JSON "
                f"({size:,} bytes)"
            )
            hint = "pass a smaller extract of the data; the prompt is capped at 1 MiB anyway"
            diagnostics.append(Diagnostic(HZ705, message, missing_at, hint=hint))
    if values is None or diagnostics:
        return Inputs(None, {}, sort_diagnostics([*diagnostics, *fetched.warnings]))
    sources = dict(fetched.sources)
    for name in sorted(reads.keys() & supplied.keys()):
        sources[name] = InputSource(given=True, sha256=digest_of(values[name]))
    return Inputs(values, dict(sorted(sources.items())), (), tuple(fetched.warnings))

"""Input and output declarations: their schemas are JSON Schema, defaults satisfy them."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from hz.compiler.checks.common import at, dotted, get
from hz.compiler.checks.messages import describe
from hz.compiler.checks.refs import ref_problems
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ401, HZ402, HZ403, HZ404
from hz.compiler.source import JsonPath, SourceDoc

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator


@functools.cache
def _metaschema_validator() -> Validator:
    from hz.compiler.checks.validator import Draft202012

    # The format checker makes "format": "regex" count, so a broken pattern is caught here
    # and not as a crash when a value is validated later.
    return Draft202012(Draft202012.META_SCHEMA, format_checker=Draft202012.FORMAT_CHECKER)


@functools.lru_cache(maxsize=256)
def _metaschema_errors(canonical: str) -> tuple[ValidationError, ...]:
    # Contracts in one repository repeat the same small schemas; check each once.
    return tuple(_metaschema_validator().iter_errors(json.loads(canonical)))


def schema_problems(doc: SourceDoc, path: JsonPath, code: str) -> list[Diagnostic]:
    """Where the schema at ``path`` breaks the 2020-12 metaschema, at the offending node."""
    schema = get(doc.data, *[str(p) for p in path])
    if not isinstance(schema, dict):
        return []  # the contract schema reports the wrong type
    out = []
    for e in _metaschema_errors(json.dumps(schema, sort_keys=True)):
        where = (*path, *e.absolute_path)
        _, message, hint = describe(e, dotted(where))
        out.append(at(doc, where, code, f"not a valid JSON Schema: {message}", hint=hint))
    return out or ref_problems(doc, path, schema, code)


def value_format_checker() -> FormatChecker:
    """The format assertions input values are checked with, defaults (HZ402) and values
    given at render time (HZ702) alike."""
    from jsonschema.validators import Draft202012Validator

    checker: FormatChecker = Draft202012Validator.FORMAT_CHECKER
    return checker


def default_problems(doc: SourceDoc, name: str, spec: dict[str, Any]) -> list[Diagnostic]:
    """Where an input's default fails the input's own schema."""
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    from hz.compiler.checks.validator import Draft202012

    path = ("hz", "inputs", name, "default")
    out = []
    try:
        # An explicit empty registry: a remote $ref is an error, never a download.
        # The format checker render uses for values given at render time (HZ702): a default
        # is a value too, and "format: email" must hold for it as much as for those.
        validator = Draft202012(
            spec["schema"], registry=Registry(), format_checker=value_format_checker()
        )
        errors = list(validator.iter_errors(spec["default"]))
    except Unresolvable as problem:
        where = ("hz", "inputs", name, "schema")
        msg = f"not a valid JSON Schema: {dotted(where)}: cannot resolve the reference {problem}"
        return [at(doc, where, HZ401, msg, hint="only references within the schema work")]
    for e in errors:
        where = (*path, *e.absolute_path)
        _, message, hint = describe(e, dotted(where))
        out.append(
            at(doc, where, HZ402, f"the default does not match its schema: {message}", hint=hint)
        )
    return out


def check_inputs(doc: SourceDoc) -> list[Diagnostic]:
    inputs = get(doc.data, "hz", "inputs")
    if not isinstance(inputs, dict):
        return []
    out: list[Diagnostic] = []
    for name, spec in inputs.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            continue
        bad = schema_problems(doc, ("hz", "inputs", name, "schema"), HZ401)
        out.extend(bad)
        if not bad and "default" in spec:
            out.extend(default_problems(doc, name, spec))
    return out


def check_output(doc: SourceDoc) -> list[Diagnostic]:
    output = get(doc.data, "hz", "output")
    if not isinstance(output, dict) or "schema" not in output:
        return []
    out: list[Diagnostic] = []
    fmt = output.get("format", "markdown")
    if fmt in ("markdown", "text"):  # any other value is the schema's HZ104
        out.append(
            at(
                doc,
                ("hz", "output", "schema"),
                HZ404,
                f"hz.output.schema needs format json, but the format is {fmt!r}",
                key=True,
                hint="set `format: json`, or remove the schema (a schema only applies to a "
                "JSON draft)",
            )
        )
    out.extend(schema_problems(doc, ("hz", "output", "schema"), HZ403))
    return out

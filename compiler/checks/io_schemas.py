"""Input and output declarations: their schemas are JSON Schema, defaults satisfy them."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from hz.compiler.checks.common import at, dotted, get, quoted
from hz.compiler.checks.messages import describe
from hz.compiler.checks.refs import ref_problems
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ401, HZ402, HZ403, HZ404
from hz.compiler.source import JsonPath, SourceDoc
from hz.runtime.jsonschema.fast import certainly_conforms, certainly_valid_schema

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


@functools.lru_cache(maxsize=256)
def _metaschema_errors(canonical: str) -> tuple[ValidationError, ...] | str:
    # Contracts in one repository repeat the same small schemas; check each once.
    from hz.runtime.jsonschema import SchemaProblem, metaschema_errors

    try:
        return tuple(metaschema_errors(json.loads(canonical)))
    except SchemaProblem as problem:
        return problem.message


def schema_problems(doc: SourceDoc, path: JsonPath, code: str) -> list[Diagnostic]:
    """Where the schema at ``path`` breaks the 2020-12 metaschema, at the offending node."""
    schema = get(doc.data, *[str(p) for p in path])
    if not isinstance(schema, (dict, bool)):
        return []  # the contract schema reports the wrong type
    if certainly_valid_schema(schema):
        return []  # the common case, without importing jsonschema (it holds no reference)
    found = _metaschema_errors(json.dumps(schema, sort_keys=True))
    if isinstance(found, str):
        return [at(doc, path, code, f"not a valid JSON Schema: {dotted(path)}: {found}")]
    out = []
    for e in found:
        where = (*path, *e.absolute_path)
        _, message, hint = describe(e, dotted(where), quote=quoted(doc, path))
        out.append(at(doc, where, code, f"not a valid JSON Schema: {message}", hint=hint))
    return out or ref_problems(doc, path, schema, code)


def default_problems(doc: SourceDoc, name: str, spec: dict[str, Any]) -> list[Diagnostic]:
    """Where an input's default fails the input's own schema (checked as render checks the
    values given then, HZ702: same validator, formats and regex engine)."""
    if certainly_valid_schema(spec["schema"]) and certainly_conforms(
        spec["schema"], spec["default"]
    ):
        return []
    from hz.runtime.jsonschema import SchemaProblem, errors

    path = ("hz", "inputs", name, "default")
    try:
        found = errors(spec["schema"], spec["default"])
    except SchemaProblem as problem:
        schema_at = ("hz", "inputs", name, "schema")
        msg = f"not a valid JSON Schema: {dotted(schema_at)}: {problem.message}"
        return [at(doc, schema_at, HZ401, msg)]
    out = []
    for e in found:
        where = (*path, *e.absolute_path)
        _, message, hint = describe(e, dotted(where), quote=quoted(doc, path))
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
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), (dict, bool)):
            continue
        bad = schema_problems(doc, ("hz", "inputs", name, "schema"), HZ401)
        out.extend(bad)
        if not bad and "default" in spec and "read" not in spec:  # with read: HZ413
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

"""A contract's ``publishes``: each target exists, its arguments fit the target's argument
schema (a string holding a template is checked as a template over the declared inputs, and
its rendered value against the schema when the packet is rendered: HZ711), and the draft is
one the target can take (a JSON body needs ``output.format: json``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hz.compiler.checks.common import at, get
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ420, HZ421, HZ422, HZ423
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.publish_targets import TARGETS, Target
from hz.runtime.artifacts.suggest import did_you_mean

_TEMPLATE = re.compile(r"\{\{|\{%|\{#")
_INPUT_REF = re.compile(r"""inputs\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([^'"]+)['"])""")


def is_template(value: Any) -> bool:
    return isinstance(value, str) and _TEMPLATE.search(value) is not None


def inputs_used(doc: SourceDoc) -> frozenset[str]:
    """The inputs the publishes' argument templates name (an input used only there is used)."""
    found: set[str] = set()
    for _, spec in _publishes(doc):
        args = spec.get("args")
        for value in args.values() if isinstance(args, dict) else ():
            if is_template(value):
                found |= {a or b for a, b in _INPUT_REF.findall(value)}
    return frozenset(found)


def _publishes(doc: SourceDoc) -> list[tuple[int, dict[str, Any]]]:
    items = get(doc.data, "hz", "publishes")
    if not isinstance(items, list):
        return []
    return [(i, spec) for i, spec in enumerate(items) if isinstance(spec, dict)]


def check_publishes(doc: SourceDoc, targets: Mapping[str, Target] = TARGETS) -> list[Diagnostic]:
    """The problems of ``hz.publishes``; ``targets`` are those a contract may name (hz's own,
    and those of the operator's bound plugins)."""
    out: list[Diagnostic] = []
    output = get(doc.data, "hz", "output")
    fmt = output.get("format", "markdown") if isinstance(output, dict) else "markdown"
    inputs = get(doc.data, "hz", "inputs")
    declared = tuple(str(k) for k in inputs) if isinstance(inputs, dict) else ()
    for index, spec in _publishes(doc):
        name = spec.get("to")
        if not isinstance(name, str):
            continue  # the contract schema reports it
        target = targets.get(name)
        here = ("hz", "publishes", index)
        if target is None:
            hint = did_you_mean(name, targets) or "targets: " + ", ".join(sorted(targets))
            out.append(at(doc, (*here, "to"), HZ420, f"unknown publish target {name!r}", hint=hint))
            continue
        args = spec.get("args", {})
        if not isinstance(args, dict):
            continue
        out += _arg_problems(doc, here, target, args, declared)
        if target.needs_json(args) and fmt != "json":
            out.append(
                at(
                    doc,
                    (*here, "to"),
                    HZ422,
                    f"{name} sends the draft as JSON data, but the draft is {fmt}",
                    hint="set hz.output.format: json (with a schema), or send text",
                )
            )
    return out


def _arg_problems(
    doc: SourceDoc,
    here: tuple[str | int, ...],
    target: Target,
    args: dict[str, Any],
    declared: tuple[str, ...],
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    properties: dict[str, Any] = target.args["properties"]
    for key in target.args["required"]:
        if key not in args:
            out.append(
                at(
                    doc,
                    (*here, "to"),
                    HZ421,
                    f"{target.name} needs the argument {key!r}",
                    hint=f"add args.{key}",
                )
            )
    for key, value in args.items():
        where = (*here, "args", key)
        if key not in properties:
            hint = did_you_mean(key, properties) or "arguments: " + ", ".join(sorted(properties))
            out.append(
                at(
                    doc,
                    where,
                    HZ421,
                    f"{target.name} takes no argument {key!r}",
                    key=True,
                    hint=hint,
                )
            )
            continue
        if is_template(value):
            out += _template_problems(doc, where, value, declared)
            continue
        problem = argument_problem(properties[key], value)
        if problem is not None:
            out.append(at(doc, where, HZ421, f"{target.name}: args.{key}: {problem}"))
    return out


def argument_problem(schema: Any, value: Any) -> str | None:
    """What is wrong with one argument's value by its schema (the validator's first message;
    a pattern the catalog describes in words, in those words rather than as a regex)."""
    from hz.compiler.checks.common import short
    from hz.runtime.jsonschema import errors

    found = errors(schema, value)
    if not found:
        return None
    first = found[0]
    about = first.schema.get("description") if isinstance(first.schema, dict) else None
    if first.validator == "pattern" and isinstance(about, str):
        return f"{short(first.instance)} is not in the expected form ({about})"
    return first.message


def _template_problems(
    doc: SourceDoc, where: tuple[str | int, ...], source: str, declared: tuple[str, ...]
) -> list[Diagnostic]:
    from jinja2 import TemplateSyntaxError

    from hz.compiler.checks.template import environment
    from hz.compiler.checks.template_walk import UNUSED, analyse

    try:
        tree = environment().parse(source)
    except TemplateSyntaxError as e:
        return [at(doc, where, HZ423, f"template syntax error: {e.message}")]
    return [
        at(doc, where, HZ423, message.removeprefix("prompt: "), hint=hint)
        for code, _, _, message, hint in analyse(tree, environment(), declared)
        if code != UNUSED
    ]

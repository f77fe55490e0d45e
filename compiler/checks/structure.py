"""The contract's shape, checked against the published JSON Schema and mapped to positions.

The schema in ``compiler/data`` is the one editors use; this module compiles it once per
process and turns each ``jsonschema`` error into a located diagnostic with hz's own code.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from importlib import resources
from typing import TYPE_CHECKING, Any

from hz.compiler.checks.common import at, dotted, flow, quoted, short
from hz.compiler.checks.messages import describe
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ101, HZ102, HZ104, HZ201, HZ202, HZ203, HZ204
from hz.compiler.source import JsonPath, SourceDoc
from hz.runtime.artifacts.suggest import did_you_mean

if TYPE_CHECKING:
    from collections.abc import Callable

    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

SCHEMA_FILE = "workflow-contract.schema.json"

#: Agent hints the contract refuses, each with its own code (the schema marks them ``not: {}``).
REFUSED: dict[str, str] = {
    "runner": HZ201,
    "model": HZ202,
    "effort": HZ203,
    "max_turns": HZ204,
}

#: Why, in the author's terms: what hz does with the line (nothing) and who decides instead.
_WHY = {
    "runner": "which agent runs a job is chosen by whoever runs it; a contract must not "
    "choose what runs on their machine",
    "model": "which model runs a job is chosen by whoever runs it; hz never passes a "
    "contract's model to the agent, so this line would be ignored while looking like it works",
    "effort": "how much effort the agent spends is chosen by whoever runs the job; hz never "
    "passes a contract's effort to the agent, so this line would be ignored while looking "
    "like it works",
    "max_turns": "a session is bounded by hz.timeout and hz.agent.max_usd, which every "
    "runner enforces; hz never passes a contract's turn limit to the agent, so this line "
    "would be ignored while looking like it works",
}

#: Where each refused choice lives instead.
_WHERE = {
    "runner": "the runner is chosen by [capabilities] agent_runner",
    "model": "the model is set by [system.runner] model",
    "effort": "an effort, where a runner supports one, is a [system.runner] setting",
    "max_turns": "a turn limit, where a runner supports one, is [system.runner] max_turns",
}

#: Paths whose every problem a dedicated rule reports (with its own code), not the schema.
RULE_OWNED: frozenset[JsonPath] = frozenset({("hz", "timeout"), ("hz", "agent", "max_usd")})
#: An input's key whose pattern a rule of its own reports: an operation name not in the form is
#: an unknown operation (HZ410, with a did-you-mean), a window not in it a bad window (HZ412).
READ_PATTERNS = frozenset({"read", "window"})


def rule_owned(e: ValidationError) -> bool:
    path = tuple(e.absolute_path)
    if path in RULE_OWNED:
        return True
    return (
        e.validator == "pattern"
        and len(path) == 4
        and path[:2] == ("hz", "inputs")
        and path[3] in READ_PATTERNS
    )


def schema_text() -> str:
    """The contract schema exactly as shipped (``hz schema`` prints this)."""
    return (resources.files("hz.compiler") / "data" / SCHEMA_FILE).read_text(encoding="utf-8")


@functools.cache
def contract_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_text())
    return data


@functools.cache
def contract_validator() -> Validator:
    """Compiled once per process and reused for every file."""
    from hz.compiler.checks.validator import Draft202012

    return Draft202012(contract_schema())


@functools.cache
def _fast_validator() -> Callable[[Any], object]:
    """The contract schema compiled to Python code by fastjsonschema: a quick yes for a valid
    document. It says only valid or not; jsonschema locates and explains the errors."""
    import fastjsonschema

    # A schema of its own: fastjsonschema rewrites the $refs of the one it is given.
    # use_default=False: the validator must not write defaults into the document.
    validate: Callable[[Any], object] = fastjsonschema.compile(
        json.loads(schema_text()), use_default=False, use_formats=False, detailed_exceptions=False
    )
    return validate


def certainly_valid(data: Any) -> bool:
    """True when ``data`` is valid against the contract schema. A test holds this to
    jsonschema's verdict; where the two could differ (fastjsonschema reads ``$`` in a pattern
    as the end of the text, jsonschema also before a final newline), False only sends the
    document on to jsonschema, which decides."""
    from fastjsonschema import JsonSchemaException

    try:
        _fast_validator()(data)
    except JsonSchemaException:
        return False
    return True


def check_structure(doc: SourceDoc) -> list[Diagnostic]:
    """Every schema problem of the document, one diagnostic each."""
    if certainly_valid(doc.data):
        return []  # the common case, without building (or importing) jsonschema
    errors = [e for e in contract_validator().iter_errors(doc.data) if not rule_owned(e)]
    # A value of the wrong type fails other keywords too (enum, const); the type is the news.
    typed = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    out: list[Diagnostic] = []
    for e in errors:
        path = tuple(e.absolute_path)
        if e.validator != "type" and path in typed:
            continue
        out.extend(map_error(doc, e))
    return out


def map_error(doc: SourceDoc, e: ValidationError) -> Iterable[Diagnostic]:
    """One jsonschema error -> located diagnostics (several for several unknown keys)."""
    path: JsonPath = tuple(e.absolute_path)
    kind = e.validator
    if kind == "additionalProperties" and e.validator_value is False:
        yield from _unknown_keys(doc, path, e)
    elif kind == "required":
        yield from _missing_keys(doc, path, e)
    elif kind == "not" and len(path) == 3 and path[:2] == ("hz", "agent") and path[2] in REFUSED:
        yield _refused(doc, path)
    elif "propertyNames" in e.relative_schema_path and path[-1:] == ("args",):
        yield at(
            doc,
            (*path, str(e.instance)),
            HZ104,
            f"{dotted(path)}: {short(e.instance)} is not a valid argument name",
            key=True,
            hint="an argument name has 1 to 64 characters",
        )
    elif "propertyNames" in e.relative_schema_path:
        name = str(e.instance)
        yield at(
            doc,
            (*path, name),
            HZ104,
            f"{dotted(path)}: {name!r} is not a valid input name",
            key=True,
            hint="an input name is an identifier (a letter or underscore, then letters, "
            "digits or underscores) so the template can say inputs.<name>",
        )
    else:
        code, message, hint = describe(e, dotted(path), quote=quoted(doc))
        yield at(doc, path, code, message, hint=hint)


def _allowed(schema: Any) -> list[str]:
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    return [name for name in props if not (name in REFUSED and "not" in props[name])]


def _unknown_keys(doc: SourceDoc, path: JsonPath, e: ValidationError) -> Iterable[Diagnostic]:
    allowed = _allowed(e.schema)
    offered = allowed
    if doc.body is not None and not path:
        # A Markdown contract's frontmatter: its contract text is the body (a `contract` key
        # there is HZ101 of the body rules), and x- keys are the author's.
        offered = [name for name in allowed if name != "contract"] + ["x-…"]
    instance = e.instance if isinstance(e.instance, dict) else {}
    where = "at the top level" if not path else f"in {dotted(path)}"
    for name in instance:
        if name in allowed:
            continue
        if path == ("hz",) and name in REFUSED:
            # The same choice one level up (hz.model): the same answer, not "unknown key".
            yield _refused(doc, (*path, name))
            continue
        suggestion = did_you_mean(str(name), offered)
        listing = "allowed keys: " + ", ".join(offered)
        hint = f"{suggestion} ({listing})" if suggestion else listing
        yield at(doc, (*path, name), HZ101, f"unknown key {name!r} {where}", key=True, hint=hint)


def _missing_keys(doc: SourceDoc, path: JsonPath, e: ValidationError) -> Iterable[Diagnostic]:
    instance = e.instance if isinstance(e.instance, dict) else {}
    props = _declared(e.schema)
    where = "at the top level" if not path else f"in {dotted(path)}"
    required: Any = e.validator_value
    for name in required:
        if name in instance:
            continue
        declared = props.get(name, {})
        about = declared.get("description", "")
        about = about.split(". ")[0].rstrip(".") if about else ""
        examples = declared.get("examples") or []
        add = f"add it, as in {name}: {flow(examples[0])}" if examples else "add it"
        hint = f"{about}; {add}" if about else add
        yield at(
            doc, path, HZ102, f"missing required key {name!r} {where}", key=bool(path), hint=hint
        )


def _declared(schema: Any) -> dict[str, Any]:
    """The properties a ``required`` keyword's schema declares; for a ``then`` or ``else``
    branch (an input needs ``schema`` unless it has ``read``), those of the schema holding it."""
    if not isinstance(schema, dict):
        return {}
    if "properties" in schema:
        props: dict[str, Any] = schema["properties"]
        return props
    holder = _holder(contract_schema(), schema)
    return holder.get("properties", {}) if holder is not None else {}


def _holder(node: Any, branch: dict[str, Any]) -> dict[str, Any] | None:
    """The schema object in ``node`` whose ``then`` or ``else`` is ``branch`` itself."""
    if isinstance(node, list):
        return next((found for item in node if (found := _holder(item, branch))), None)
    if not isinstance(node, dict):
        return None
    if node.get("then") is branch or node.get("else") is branch:
        return node
    return next((found for sub in node.values() if (found := _holder(sub, branch))), None)


def _refused(doc: SourceDoc, path: JsonPath) -> Diagnostic:
    name = str(path[-1])
    return at(
        doc,
        path,
        REFUSED[name],
        f"{dotted(path)} is refused: {_WHY[name]}",
        key=True,
        hint=f"remove it; {_WHERE[name]} in the hz configuration (see `hz config show`)",
    )

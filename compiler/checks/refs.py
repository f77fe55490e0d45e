"""References inside an input or output schema must resolve within that schema.

Values are validated offline, at render time and after a run, with no schema store: a
reference to another document could never be followed, and one to a missing local node
would fail only when a value reaches it. Both are found here, statically.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from hz.compiler.checks.common import at, dotted
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.source import JsonPath, SourceDoc

#: Keywords whose values are data, not schemas: a "$ref" key inside them is not a reference.
_DATA = frozenset({"enum", "const", "examples", "default"})


def refs(node: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, str]]:
    """Every ``$ref`` (and ``$dynamicRef``) string in a schema, with its path."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield (*path, key), value
            elif key not in _DATA:
                yield from refs(value, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from refs(item, (*path, i))


def _has_ids(node: Any) -> bool:
    if isinstance(node, dict):
        return "$id" in node or any(_has_ids(v) for k, v in node.items() if k not in _DATA)
    return isinstance(node, list) and any(_has_ids(v) for v in node)


def _resolves(schema: dict[str, Any], pointer: str) -> bool:
    node: Any = schema
    for raw in pointer.split("/")[1:]:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def ref_problems(
    doc: SourceDoc, path: JsonPath, schema: dict[str, Any], code: str
) -> list[Diagnostic]:
    if _has_ids(schema):
        return []  # "$id" changes the base of relative references: leave those to render
    out = []
    for where, ref in refs(schema):
        if ref.startswith("#/") or ref == "#":
            if _resolves(schema, ref[1:]):
                continue
            msg = f"{dotted((*path, *where))}: the reference {ref!r} points at nothing"
            hint = "a local reference is a JSON pointer into this schema, e.g. '#/$defs/item'"
        elif ref.startswith("#"):
            continue  # a named anchor; jsonschema resolves or reports it when used
        else:
            msg = f"{dotted((*path, *where))}: the reference {ref!r} is outside this schema"
            hint = "values are checked offline: put the definition under $defs and use '#/$defs/…'"
        out.append(at(doc, (*path, *where), code, f"not a valid JSON Schema: {msg}", hint=hint))
    return out

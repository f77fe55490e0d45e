"""References inside an input or output schema must resolve within that schema.

Values are validated offline, at render time and after a run, with no schema store: a
reference to another document could never be followed, and one to a missing local node
would fail only when a value reaches it. Both are found here, statically, by the resolver
values are checked with (``hz.runtime.jsonschema.refs``): ``$id``s, anchors and the 2020-12
metaschemas resolve as they will then.
"""

from __future__ import annotations

from typing import Any

from hz.compiler.checks.common import at, dotted
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.source import JsonPath, SourceDoc


def ref_problems(doc: SourceDoc, path: JsonPath, schema: Any, code: str) -> list[Diagnostic]:
    from hz.runtime.jsonschema import unresolvable

    out = []
    for where, ref, why in unresolvable(schema):
        if why == "invalid":
            msg = f"{dotted((*path, *where))}: {ref!r} is not a valid URI"
            hint = "check the reference and the $id values of the schemas around it"
        elif why == "nothing":
            msg = f"{dotted((*path, *where))}: the reference {ref!r} points at nothing"
            hint = "a local reference is a JSON pointer into this schema, e.g. '#/$defs/item'"
        else:
            msg = f"{dotted((*path, *where))}: the reference {ref!r} is outside this schema"
            hint = "values are checked offline: put the definition under $defs and use '#/$defs/…'"
        out.append(at(doc, (*path, *where), code, f"not a valid JSON Schema: {msg}", hint=hint))
    return out

"""Contracts of another format hz can name: Heinzelmännchen's (HZ105).

Heinzelmännchen, the system hz comes from, writes ``hz.schema: 1`` where hz writes
``hz.contract: 1``, and has keys hz does not (``outputs``, ``publishes``, top-level ``inputs``
that ``read:`` a capability, where hz's inputs are under ``hz:``). Such a file gets one
diagnostic that names it and ``hz migrate`` (``hz.compiler.migrate``), instead of a schema
error for every key.
"""

from __future__ import annotations

from typing import Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ105
from hz.compiler.source import JsonPath, SourceDoc


def _signs(data: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    hz = data.get("hz")
    block = hz if isinstance(hz, dict) else {}
    found: list[tuple[str, JsonPath]] = []
    if "schema" in block:
        found.append(("hz.schema", ("hz", "schema")))
    for key in ("outputs", "publishes"):
        if key in data:
            found.append((f"{key}:", (key,)))
        elif key in block:
            found.append((f"hz.{key}", ("hz", key)))
    # Under hz:, inputs read through an operation are hz's own too: only top-level inputs
    # that read: are Heinzelmännchen's.
    inputs = data.get("inputs")
    if isinstance(inputs, dict) and any(
        isinstance(spec, dict) and "read" in spec for spec in inputs.values()
    ):
        found.append(("inputs that read:", ("inputs",)))
    return found


def check_foreign(doc: SourceDoc) -> Diagnostic | None:
    """HZ105 when ``doc`` is a Heinzelmännchen contract: no ``hz.contract``, and at least one
    of its keys."""
    hz = doc.data.get("hz")
    if isinstance(hz, dict) and "contract" in hz:
        return None
    signs = _signs(doc.data)
    if not signs:
        return None
    pos = doc.pos(signs[0][1], key=True)
    named = ", ".join(name for name, _ in signs)
    return Diagnostic(
        HZ105,
        f"this is a Heinzelmännchen contract ({named}), not an hz contract",
        doc.path,
        pos.line,
        pos.column,
        hint="`hz migrate FILE` converts it, key by key, and says what is left to decide "
        "(docs/migrating-from-heinzel.md)",
    )

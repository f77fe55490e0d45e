"""What differs between a job file in ``--out`` and the job its contract compiles to now, and
where in the contract that is.

The job file comes from the repository: it is read with the bounded strict JSON parser, and
compared only a few levels deep.
"""

from __future__ import annotations

import json
from typing import Any

from hz.compiler.source import JsonPath, Pos, SourceDoc
from hz.runtime.artifacts import strict_json

#: Fields that change whenever another does, or with any edit of the contract file.
_DERIVED = frozenset({("digest",), ("source", "sha256")})
#: How deep a difference is followed to find its line (an input's schema is nested).
_LOCATE_DEPTH = 8
#: The whole file: no field of the contract holds the difference.
WHOLE_FILE = Pos(0, 0)


def _job(text: str) -> dict[str, Any] | None:
    try:
        data = strict_json.loads(text)
    except strict_json.JsonError:
        return None
    return data if isinstance(data, dict) else None


def stale_because(current: str, expected: str) -> str:
    """What differs between a job file's text and the job the contract compiles to: the
    fields by their dotted names (``budget.max_usd``, ``inputs.week``), or only the source hash
    (a comment or formatting edit). ``digest`` follows the rest and is never named."""
    old = _job(current)
    if old is None:
        return "it is not the JSON this contract compiles to"
    new = json.loads(expected)
    fields = [".".join(map(str, f)) for f in differing(old, new, depth=2) if f not in _DERIVED]
    if fields:
        these = "this field differs" if len(fields) == 1 else "these fields differ"
        return f"{these} from what the contract compiles to: {', '.join(fields)}"
    if old.get("source", {}).get("sha256") != new["source"]["sha256"]:
        return (
            "only the source hash differs: the contract file changed (a comment or layout) "
            "but not what it compiles to"
        )
    return "its layout differs from the canonical JSON this contract compiles to"


def differing(old: Any, new: Any, prefix: JsonPath = (), depth: int = 2) -> list[JsonPath]:
    """The paths (down to ``depth`` keys) where two JSON values differ, sorted by key."""
    if old == new:
        return []
    if depth == 0 or not isinstance(old, dict) or not isinstance(new, dict):
        return [prefix]
    paths: list[JsonPath] = []
    for key in sorted(old.keys() | new.keys(), key=str):
        paths += differing(old.get(key), new.get(key), (*prefix, key), depth - 1)
    return paths


def stale_position(current: str, expected: str, source: SourceDoc | None) -> Pos:
    """The contract's line and column of the first (topmost) field that differs, at its key;
    the whole file (0:0) when no field of the contract holds a difference (only the source
    hash, the hz version, a field hz does not write, a file that is not a job)."""
    old = _job(current)
    if old is None or source is None:
        return WHOLE_FILE
    found = [
        source.pos(where, key=True)
        for path in differing(old, json.loads(expected), depth=_LOCATE_DEPTH)
        if (where := contract_path(path)) is not None
    ]
    return min(found, key=lambda pos: (pos.line, pos.column), default=WHOLE_FILE)


def contract_path(job_path: JsonPath) -> JsonPath | None:
    """Where the contract writes the job field at ``job_path`` (a field the contract leaves out
    is found at its nearest written ancestor by ``SourceDoc.pos``); None for the fields hz
    writes itself (``hz_version``, ``source``, ``digest``, ``kind``, ``format_version``)."""
    if not job_path:
        return None
    head, rest = job_path[0], job_path[1:]
    simple: dict[Any, JsonPath] = {
        "name": ("hz", "name"),
        "title": ("hz", "title"),
        "timeout_seconds": ("hz", "timeout"),
        "budget": ("hz", "agent", "max_usd"),
        "contract": ("contract",),
        "template": ("prompt",),
    }
    if head in simple:
        return simple[head]
    if head == "tools":
        return ("hz", "agent", "tools", *rest[1:])
    if head == "output":
        return ("hz", "output", *rest)
    if head == "inputs":
        if len(rest) >= 2 and rest[1] == "required":  # required: the input has no default
            return ("hz", "inputs", rest[0], "default")
        return ("hz", "inputs", *rest)
    return None

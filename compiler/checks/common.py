"""Helpers shared by the checks: readable paths, type names, located diagnostics."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load.scalars import kind_of
from hz.compiler.source import JsonPath, SourceDoc

# "$" too: schema keywords such as $ref and $defs read better as hz...schema.$defs.
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def dotted(path: JsonPath) -> str:
    """``("hz", "agent", "tools", 0)`` -> ``hz.agent.tools[0]``; ``()`` -> ``the top level``."""
    if not path:
        return "the top level"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def extend(where: str, extra: JsonPath) -> str:
    """A dotted path continued by ``extra``: ``extend("hz", ("agent",))`` -> ``hz.agent``."""
    if not extra:
        return where
    tail = dotted(extra)
    return tail if where == dotted(()) else where + ("" if tail.startswith("[") else ".") + tail


def type_name(value: Any) -> str:
    """The JSON data model name of a value, with an article: "a string", "an integer"."""
    return kind_of(value, sequence="a list")


def short(value: Any, limit: int = 40) -> str:
    """A value as a user wrote it, cut short for a message."""
    text = repr(value) if isinstance(value, str) else _json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_short(value: Any, limit: int = 60) -> str:
    """A value as JSON writes it (``"x"``, ``true``, ``null``), cut short for a message."""
    text = _json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def flow(value: Any) -> str:
    """A value from the schema's examples as YAML on one line (a mapping in flow style)."""
    import yaml

    if isinstance(value, str):
        value = value.rstrip("\n")
    text = yaml.safe_dump(
        value, default_flow_style=True, width=1_000_000, sort_keys=False, allow_unicode=True
    )
    return text.removesuffix("\n...\n").rstrip("\n")


def _json(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def at(
    doc: SourceDoc,
    path: JsonPath,
    code: str,
    message: str,
    *,
    key: bool = False,
    hint: str | None = None,
) -> Diagnostic:
    """A diagnostic located at the value (or, with ``key``, the key) at ``path``."""
    pos = doc.pos(path, key=key)
    return Diagnostic(code, message, doc.path, pos.line, pos.column, hint=hint)


def quoted(doc: SourceDoc, prefix: JsonPath = ()) -> Callable[[JsonPath, Any], str]:
    """For ``describe``: the value at ``prefix + path`` of ``doc`` written as a YAML string,
    with its key, from the text as written (``version: 1.10`` -> ``version: "1.10"``, where
    the number would say 1.1)."""

    def quote(path: JsonPath, value: Any) -> str:
        where = (*prefix, *path)
        text = written(doc, where) or json_short(value, 40)
        key = where[-1] if where and isinstance(where[-1], str) else None
        return f'{key}: "{text}"' if key is not None and _IDENT.fullmatch(key) else f'"{text}"'

    return quote


#: A plain scalar's text: up to a blank, a comment or a flow collection's punctuation.
_PLAIN = re.compile(r"[^\s,\[\]{}#]+")


def written(doc: SourceDoc, path: JsonPath) -> str | None:
    """The text of the number or boolean at ``path`` as the file writes it, when it is a plain
    scalar that reads back as that value; else None."""
    from hz.compiler.load.scalars import resolve_plain

    pos = doc.values.get(path)
    if pos is None or pos.line < 1:
        return None
    lines = doc.text.split("\n", pos.line)
    if len(lines) < pos.line:
        return None
    found = _PLAIN.match(lines[pos.line - 1], pos.column - 1)
    # A long one (a 4,000-digit number) is not shown: the hint stays a line.
    if found is None or len(found.group()) > 40 or isinstance(resolve_plain(found.group()), str):
        return None
    return found.group()


def get(data: Any, *path: str) -> Any:
    """``data[p0][p1]…`` or None when any step is missing or not a mapping."""
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data

"""Every reference in a schema, resolved statically: what would fail when a value reaches it.

Values are validated offline, with no schema store: a reference resolves within the schema
(through its ``$id``s, anchors and JSON pointers) or to one of the 2020-12 metaschemas, and
nothing else. Schema positions are walked as 2020-12 defines them, so a ``"$ref"`` inside
``enum`` or ``const`` (data) or an unknown keyword (never evaluated) is no reference.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urldefrag

from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing import Resource
from referencing.exceptions import PointerToNowhere, Unresolvable
from referencing.jsonschema import DRAFT202012

Path = tuple[str | int, ...]

_ONE = ("additionalProperties", "contains", "contentSchema", "else", "if", "items", "not")
_ONE_MORE = ("propertyNames", "then", "unevaluatedItems", "unevaluatedProperties")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("$defs", "definitions", "dependentSchemas", "patternProperties", "properties")


class Resolver(Protocol):
    """What hz uses of referencing's resolver. Its class is not public (``referencing._core``);
    its attributes are, and ``Registry.resolver_with_root`` is how one is made
    (referencing's docs/compatibility.rst)."""

    def lookup(self, ref: str) -> Any: ...

    def in_subresource(self, subresource: Resource[Any]) -> Resolver: ...


def unresolvable(schema: Any) -> list[tuple[Path, str, str]]:
    """(path of the ``$ref``, the reference, why) for each reference that does not resolve:
    ``why`` is ``"nothing"`` (a pointer or anchor into a known document that finds nothing),
    ``"outside"`` (another document) or ``"invalid"`` (with the ``$id``s around it, no URI)."""
    resource = DRAFT202012.create_resource(schema)
    resolver = METASCHEMAS.resolver_with_root(resource)
    out: list[tuple[Path, str, str]] = []
    _walk(schema, (), resolver, out)
    return out


def _walk(node: Any, path: Path, resolver: Resolver, out: list[tuple[Path, str, str]]) -> None:
    if not isinstance(node, dict):
        return
    if isinstance(node.get("$id"), str):
        try:
            resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
        except ValueError:  # urllib: "Invalid IPv6 URL" and the like
            out.append(((*path, "$id"), node["$id"], "invalid"))
            return
    for keyword in ("$ref", "$dynamicRef"):
        ref = node.get(keyword)
        if isinstance(ref, str):
            why = _problem(resolver, ref)
            if why is not None:
                out.append(((*path, keyword), ref, why))
    for keyword in (*_ONE, *_ONE_MORE):
        if keyword in node:
            _walk(node[keyword], (*path, keyword), resolver, out)
    for keyword in _LIST:
        if isinstance(node.get(keyword), list):
            for i, item in enumerate(node[keyword]):
                _walk(item, (*path, keyword, i), resolver, out)
    for keyword in _MAP:
        if isinstance(node.get(keyword), dict):
            for key, item in node[keyword].items():
                _walk(item, (*path, keyword, key), resolver, out)


def _problem(resolver: Resolver, ref: str) -> str | None:
    try:
        resolver.lookup(ref)
    except ValueError:  # urllib: "Invalid IPv6 URL" and the like
        return "invalid"
    except PointerToNowhere:
        return "nothing"
    except Unresolvable:
        document, _ = urldefrag(ref)
        if not document:
            return "nothing"
        try:
            resolver.lookup(document)
        except (Unresolvable, ValueError):
            return "outside"
        return "nothing"
    return None

"""jsonschema's internals hz relies on, in one place (STYLE 22). Written against jsonschema
4.26 (pyproject.toml admits its patch releases only); tests/unit/jsonschema/test_compat.py pins
each one and fails when a release changes it.

- ``validator._resolver``: the referencing resolver a validator carries, the scope of the
  ``$id``s around the schema it stands in. jsonschema has no public accessor (its ``resolver=``
  argument is the deprecated ``RefResolver``); its own ``find_evaluated_property_keys_by_schema``
  (jsonschema/_utils.py) follows a ``$ref`` the same way. hz needs it for
  ``unevaluatedProperties``, evaluated its own way only because jsonschema matches patterns
  with Python's ``re`` (https://github.com/python-jsonschema/jsonschema/issues/607,
  https://github.com/python-jsonschema/jsonschema/issues/1142): when jsonschema takes another
  regex engine, hz's keyword copies (``hz.runtime.jsonschema.keywords``) and this module can go.
  No upstream issue asks for a public accessor yet.
"""

from __future__ import annotations

from typing import Any

#: What ``follow`` and the keyword copies were written against (jsonschema 4.26.0 and
#: referencing 0.37.0): ``str(inspect.signature(...))`` of what they call or copy.
UPSTREAM = {
    "jsonschema.Draft202012Validator.evolve": "(self, **changes)",
    "referencing._core.Resolver.lookup": "(self, ref: 'URI') -> 'Resolved[D]'",
    "jsonschema._utils.find_evaluated_property_keys_by_schema": "(validator, instance, schema)",
}
#: The validator's field ``follow`` reads and passes to ``evolve``: (attribute, its
#: ``__init__`` keyword, keyword-only).
RESOLVER_FIELD = ("_resolver", "_resolver", True)
#: The attributes of what ``lookup`` returns (``referencing._core.Resolved``) ``follow`` reads.
RESOLVED_FIELDS = ("contents", "resolver")
#: sha256 of the source of ``find_evaluated_property_keys_by_schema``, which
#: ``keywords._evaluated_keys`` follows: a change there is a fix to port.
EVALUATED_KEYS_SOURCE = "fe1e0b232f7b2709ad35d46445f23dee785e6998c1570e168a5ab93dcf0b3350"


def follow(validator: Any, ref: str) -> tuple[Any, Any]:
    """The schema ``ref`` points to from where ``validator`` stands, and a validator for it
    that resolves further references from there (through the ``$id``s on the way)."""
    resolved = validator._resolver.lookup(ref)
    target = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
    return resolved.contents, target

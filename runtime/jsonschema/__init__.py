"""JSON Schema 2020-12 for input and output values: the one place hz evaluates a schema.

The compiler checks defaults and schemas with it when validating a contract, render checks
input values, and a run checks the model's JSON answer: one validator, one format list
(``formats``), one bounded ECMA-262 regex engine (``ecma``), references resolved within the
schema and against the offline 2020-12 metaschemas only (``refs``). Everything that keeps a
value from being checked — a reference that cannot be resolved, a pattern that is not a
regular expression or runs out of regex time, a schema or value nested too deeply — is a
``SchemaProblem``, never an arbitrary exception.

``fast`` says "certainly valid" for the common small schemas without importing jsonschema
(about 45 ms of a ``hz validate``); everything it cannot decide goes to the validator. The
names below are imported on first use for the same reason.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hz.runtime.jsonschema.check import SchemaProblem, errors, metaschema_errors
    from hz.runtime.jsonschema.refs import unresolvable

__all__ = ["SchemaProblem", "errors", "metaschema_errors", "unresolvable"]

_HOMES = {
    "SchemaProblem": "hz.runtime.jsonschema.check",
    "errors": "hz.runtime.jsonschema.check",
    "metaschema_errors": "hz.runtime.jsonschema.check",
    "unresolvable": "hz.runtime.jsonschema.refs",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

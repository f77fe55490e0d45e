"""jsonschema's 2020-12 validator for the contract schema, with a missing required key named in
a field of its error (``MissingKey``, shared with the input and output schema validator,
``hz.runtime.jsonschema``) and every ``pattern`` evaluated as ECMA-262 means it.

jsonschema yields one ``required`` error per missing key and names the key only in its English
message; ``MissingKey.key`` carries it as data, so hz words the message itself. Its ``pattern``
is Python's ``re``, whose ``\\d`` takes any script's digits (``"٣m"``) where the published
schema's does not: the keywords with a regular expression are ``hz.runtime.jsonschema``'s.
"""

from __future__ import annotations

from jsonschema.validators import Draft202012Validator, extend

from hz.runtime.jsonschema import keywords
from hz.runtime.jsonschema.keywords import MissingKey

__all__ = ["Draft202012", "MissingKey"]


#: Used like ``Draft202012Validator`` (it is one, with the ``required`` keyword that names the
#: missing key and the ECMA-262 regular expressions).
Draft202012: type[Draft202012Validator] = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "required": keywords.required,
        "pattern": keywords.pattern,
        "patternProperties": keywords.pattern_properties,
        "additionalProperties": keywords.additional_properties,
        "unevaluatedProperties": keywords.unevaluated_properties,
    },
)

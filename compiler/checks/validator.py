"""jsonschema's 2020-12 validator for the contract schema, with a missing required key named in
a field of its error (``MissingKey``, shared with the input and output schema validator,
``hz.runtime.jsonschema``) and every ``pattern`` evaluated as ECMA-262 means it.

jsonschema yields one ``required`` error per missing key and names the key only in its English
message; ``MissingKey.key`` carries it as data, so hz words the message itself. Its ``pattern``
is Python's ``re``, whose ``\\d`` takes any script's digits (``"٣m"``) where the published
schema's does not: the keywords with a regular expression are ``hz.runtime.jsonschema``'s.
"""

from __future__ import annotations

from hz.runtime.jsonschema.keywords import HzValidator, MissingKey

__all__ = ["Draft202012", "MissingKey"]

#: Used like ``Draft202012Validator`` (it is one, with the ``required`` keyword that names the
#: missing key and the ECMA-262 regular expressions): the runtime's validator class.
Draft202012 = HzValidator

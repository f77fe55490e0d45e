"""jsonschema's 2020-12 validator for the contract schema, with a missing required key named in
a field of its error (``MissingKey``, shared with the input and output schema validator,
``hz.runtime.jsonschema``).

jsonschema yields one ``required`` error per missing key and names the key only in its English
message; ``MissingKey.key`` carries it as data, so hz words the message itself.
"""

from __future__ import annotations

from jsonschema.validators import Draft202012Validator, extend

from hz.runtime.jsonschema.keywords import MissingKey, required

__all__ = ["Draft202012", "MissingKey"]


#: Used like ``Draft202012Validator`` (it is one, with the ``required`` keyword that names the
#: missing key).
Draft202012: type[Draft202012Validator] = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"required": required}
)

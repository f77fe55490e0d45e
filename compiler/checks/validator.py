"""jsonschema's 2020-12 validator, with a missing required key named in a field of its error.

jsonschema yields one ``required`` error per missing key and names the key only in its English
message; ``MissingKey.key`` carries it as data, so hz words the message itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import Draft202012Validator, extend


class MissingKey(ValidationError):
    """A ``required`` error for the one missing ``key``."""

    key: str


def _required(
    validator: Validator, required: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for key in required:
        if key not in instance:
            error = MissingKey(f"{key!r} is a required property")
            error.key = key
            yield error


#: Used like ``Draft202012Validator`` (it is one, with the ``required`` keyword above).
Draft202012: type[Draft202012Validator] = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"required": _required}
)

"""Validating a value (or a schema against the metaschema) within bounds."""

from __future__ import annotations

import functools
from typing import Any

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.exceptions import Unresolvable

from hz.runtime.jsonschema.ecma import REGEX_SECONDS, RegexError, RegexTimeout, deadline
from hz.runtime.jsonschema.formats import format_checker
from hz.runtime.jsonschema.keywords import HzValidator


class SchemaProblem(Exception):
    """A value could not be checked against a schema: the schema is at fault, not the value."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def validator(schema: Any) -> Validator:
    """A validator for ``schema``. The registry is empty: references resolve within the
    schema and to the 2020-12 metaschemas jsonschema ships, and nothing is ever retrieved."""
    return HzValidator(schema, registry=Registry(), format_checker=format_checker())


def _checked(v: Validator, instance: Any) -> list[ValidationError]:
    try:
        with deadline():
            return list(v.iter_errors(instance))
    except RegexTimeout as e:
        raise SchemaProblem(
            f"the pattern {e.pattern!r} took too long to evaluate (over {_seconds()} of regex "
            "time); simplify it (nested repetition such as (a|a)* backtracks)"
        ) from e
    except RegexError as e:
        raise SchemaProblem(f"a pattern is not a valid ECMA-262 regular expression: {e}") from e
    except Unresolvable as e:
        raise SchemaProblem(f"cannot resolve the reference {_ref(e)}") from e
    except ValueError as e:  # urllib on an $id or reference that is no URI
        raise SchemaProblem(f"a reference or $id is not a valid URI: {e}") from e
    except RecursionError as e:
        raise SchemaProblem(
            "the schema refers to itself without end, or it or the value is nested too deeply "
            "to check"
        ) from e


def _seconds() -> str:
    return "1 second" if REGEX_SECONDS == 1 else f"{REGEX_SECONDS:g} seconds"


def _ref(e: Unresolvable) -> str:
    return repr(getattr(e, "ref", str(e)))


def errors(schema: Any, instance: Any) -> list[ValidationError]:
    """Every way ``instance`` fails ``schema`` (empty when it is valid). ``SchemaProblem``
    when it cannot be checked."""
    return _checked(validator(schema), instance)


@functools.cache
def _metaschema_validator() -> Validator:
    # The format checker makes "format": "regex" count: a pattern that is no ECMA-262
    # regular expression is an error in the schema, not a failure when a value is checked.
    return HzValidator(
        HzValidator.META_SCHEMA, registry=Registry(), format_checker=format_checker()
    )


def metaschema_errors(schema: Any) -> list[ValidationError]:
    """Where ``schema`` breaks the 2020-12 metaschema."""
    return _checked(_metaschema_validator(), schema)

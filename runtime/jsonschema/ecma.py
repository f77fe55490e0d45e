"""ECMA-262 regular expressions, as JSON Schema's ``pattern``, ``patternProperties`` and
``format: regex`` mean them, evaluated by one bounded engine.

Python's ``re`` differs from ECMA-262 (``\\d`` matches any Unicode digit, ``$`` matches before
a final newline, ``\\p{…}`` does not exist) and backtracks without limit: ``^(a|a)*$`` against
forty ``a`` and a ``b`` would hang whoever evaluates it. hz therefore translates each pattern
into the syntax of the ``regex`` module (``hz.runtime.jsonschema.translate``), which has
Unicode properties and a ``timeout``, and evaluates every match under one deadline per check
(``deadline``).
"""

from __future__ import annotations

import contextlib
import functools
import re
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import regex

from hz.runtime.jsonschema.translate import MAX_GROUP_DEPTH, RegexError, translate

__all__ = [
    "MAX_GROUP_DEPTH",
    "REGEX_SECONDS",
    "RegexError",
    "RegexTimeout",
    "compile_ecma",
    "deadline",
    "remaining",
    "search",
    "translate",
]

#: The regex time one check may spend, all evaluations of all patterns together (seconds).
REGEX_SECONDS = 1.0
#: The longest pattern compiled.
MAX_PATTERN_LENGTH = 65_536


class RegexTimeout(Exception):
    """A match that did not finish within the check's regex time."""

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern


_DEADLINE: ContextVar[float | None] = ContextVar("hz_regex_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float = REGEX_SECONDS) -> Iterator[None]:
    """Every match inside shares ``seconds`` of regex time (nested uses keep the outer one)."""
    if _DEADLINE.get() is not None:
        yield
        return
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining(pattern: str) -> float:
    """The regex time left in this check; ``RegexTimeout`` (naming ``pattern``) when none."""
    end = _DEADLINE.get()
    left = REGEX_SECONDS if end is None else end - time.monotonic()
    if left <= 0:
        raise RegexTimeout(pattern)
    return left


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` (ECMA-262) matches somewhere in ``text``.

    Raises ``RegexError`` for a pattern that does not compile, ``RegexTimeout`` when the
    deadline passes (compiling counts: the check is before and after it)."""
    remaining(pattern)
    compiled = compile_ecma(pattern)
    try:
        return compiled.search(text, timeout=remaining(pattern)) is not None
    except TimeoutError as e:
        raise RegexTimeout(pattern) from e


@functools.lru_cache(maxsize=256)
def compile_ecma(pattern: str) -> Any:
    """The compiled ``regex`` pattern for an ECMA-262 ``pattern``."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RegexError(f"longer than {MAX_PATTERN_LENGTH:,} characters")
    translated = translate(pattern)
    try:
        return regex.compile(translated, regex.VERSION0)
    except regex.error as e:
        # Positions would count in the translation, not in the pattern as written.
        raise RegexError(re.sub(r" at position \d+.*$", "", str(e))) from e
    except (RecursionError, MemoryError, OverflowError) as e:
        raise RegexError("too complex to compile") from e

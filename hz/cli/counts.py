"""How the commands say a count: ``plural(3, "run")`` is ``3 runs``, ``plural(1, "run")``
``1 run``."""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun, plural (``nouns``, by default ``noun`` + "s") unless ``n`` is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {nouns or noun + 's'}"

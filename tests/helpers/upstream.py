"""What a compat module was written against, read from the installed library: a dotted name
resolved to its object, its signature as ``inspect`` prints it, the digest of its source.

A compat module (``compat.py``, one per library) pins these for every private name it uses; its
tests compare the pins with the installed library."""

from __future__ import annotations

import hashlib
import importlib
import inspect


def resolve(dotted: str) -> object:
    """The object a dotted name names: the longest importable module, then attributes.
    AttributeError when the library no longer has it."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        for attribute in parts[end:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(dotted)


def signature(dotted: str) -> str:
    """``str(inspect.signature(...))``, the return annotation included."""
    return str(inspect.signature(resolve(dotted)))  # type: ignore[arg-type]


def source_digest(dotted: str) -> str:
    return hashlib.sha256(inspect.getsource(resolve(dotted)).encode()).hexdigest()  # type: ignore[arg-type]

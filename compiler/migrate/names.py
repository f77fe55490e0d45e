"""A Heinzelmännchen contract's name and namespace as an ``hz.name``."""

from __future__ import annotations

from pathlib import PurePath

#: The folders Heinzelmännchen reads contracts from, its namespaces: yours and your team's.
NAMESPACES = ("me", "team")
_SUFFIXES = (".prose.md", ".md")


def hz_name(path: str, name: object, namespace: str | None = None) -> tuple[str, str | None]:
    """The ``hz.name`` of a contract at ``path`` named ``name`` (else its file name), and its
    namespace: a contract in a ``me/`` or ``team/`` folder (of ``path`` as given), or of
    ``namespace`` when that is given (``""``: none), is ``NAMESPACE-NAME``, so that
    ``team/weekly-report`` and ``me/weekly-report`` stay two jobs."""
    parts = PurePath(path).parts
    stem = parts[-1] if parts else path
    for suffix in _SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    base = name if isinstance(name, str) and name else stem
    if namespace is None:
        namespace = next((p for p in reversed(parts[:-1]) if p in NAMESPACES), None)
    namespace = namespace or None
    return (f"{namespace}-{base}" if namespace else base), namespace

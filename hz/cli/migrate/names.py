"""The names ``hz migrate``'s contracts would take: those hz contracts hold already (in the
output folder, or in the folder migrated in place), and the HZ180 error of a clash."""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from hz.cli.migrate.reading import read, walk

if TYPE_CHECKING:
    from hz.compiler.migrate import Migration, Note


def names_in(
    out: Path, replaced: set[PurePath], place: str, suffixes: tuple[str, ...]
) -> dict[str, str]:
    """The hz.name of each hz contract already in the folder ``out`` (the output folder, or
    the one migrated in place: ``place``) in a file ending in one of ``suffixes`` (those
    ``hz compile`` reads), with its path; not of those at the ``replaced`` paths (this run's
    migrations go there: an earlier migration of the same file)."""
    from hz.compiler.migrate import name_of

    if not out.is_dir():
        return {}
    names: dict[str, str] = {}
    for listed in walk(out, suffixes):
        if listed.relative in replaced:
            continue
        if listed.error is not None:  # a name unknown: what it would clash with is too
            raise listed.error
        source = read(out, listed.relative, place)
        name = name_of(source.data, str(out / source.relative))
        if name is not None:
            names.setdefault(name, str(out / source.relative))
    return names


def collisions(
    results: list[Migration], taken: dict[str, str], replaced: set[str]
) -> list[tuple[Note, ...]]:
    """For each result, the HZ180 error when the hz.name it would write is another
    contract's: one in the output folder (``taken``: by name, its path), one that is an hz
    contract already, or one migrated before it. A contract of the run that is at one of the
    ``replaced`` paths (real paths: the output folder inside the folder migrated) is a file
    this run replaces, and holds no name."""
    from hz.compiler.migrate import Note
    from hz.compiler.rules.registry import HZ180
    from hz.runtime.artifacts.printable import printable

    holders = dict(taken)
    for result in results:
        if result.text is None and result.name is not None and not result.failed:
            if replaced and os.path.realpath(result.path) in replaced:
                continue
            holders.setdefault(result.name, result.path)
    out: list[tuple[Note, ...]] = []
    for result in results:
        if result.text is None or result.name is None:
            out.append(())
            continue
        other = holders.setdefault(result.name, result.path)
        if other == result.path:
            out.append(())
            continue
        line, column = result.name_at
        out.append(
            (
                Note(
                    HZ180,
                    "error",
                    line,
                    column,
                    f"hz.name would be {result.name}, the name of {printable(other)} too: two "
                    "jobs of one name are one job",
                    decide="give one of them a top-level `name` of its own, then migrate again",
                ),
            )
        )
    return out

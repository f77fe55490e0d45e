"""What ``hz migrate`` reads: the files of a folder that may be contracts, each read by
descriptor from the folder that was listed (``folders``)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath

from hz.cli.migrate.folders import open_file
from hz.runtime.artifacts.errors import HzError

#: A directory's files that can be contracts (a Markdown file with an hz: frontmatter).
SUFFIX = ".md"
#: The files ``hz validate`` and ``hz compile`` read as contracts besides Markdown: hz
#: contracts whose names a migrated contract must not take (HZ180).
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Listed:
    """A file listed, or with ``error`` one that cannot be listed or read (reported as not
    migrated)."""

    relative: PurePath
    error: HzError | None = None


@dataclass(frozen=True)
class Read:
    """A listed file as read: its bytes and its status (the permissions and the owner that
    the migrated file keeps)."""

    relative: PurePath
    data: bytes
    status: os.stat_result


def files(target: Path) -> tuple[Path, list[Listed]]:
    """The folder a migration reads from and writes into in place (``target``, or the folder
    of a file ``target``), and each Markdown file under it that may be a contract, relative to
    it, sorted; hidden folders are not entered. Only listed here: each is read by descriptor
    from the folder (``read``), so a folder swapped for a link after the listing is not
    followed. A folder below ``target`` that cannot be listed is an entry with its error."""
    from hz.runtime.artifacts.printable import printable

    shown = printable(str(target))
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError as e:
        raise HzError(f"no such file or directory: {shown}") from e
    except OSError as e:  # a name too long, a loop of links, a file on the way, no access
        raise HzError(f"cannot read {shown}: {e.strerror or e}") from e
    if stat.S_ISLNK(mode):
        # A migration rewrites the file: never the one a link points at, nor the link.
        raise HzError(f"{shown} is a symbolic link: hz migrate edits files only")
    if stat.S_ISREG(mode):
        return target.parent, [Listed(PurePath(target.name))]
    if not stat.S_ISDIR(mode):
        raise HzError(f"{shown} is neither a file nor a folder: hz migrate edits files only")
    return target, walk(target)


def walk(folder: Path, suffixes: tuple[str, ...] = (SUFFIX,)) -> list[Listed]:
    """Each file under ``folder`` (no link) whose name ends in one of ``suffixes``, relative
    to it, sorted; hidden folders are not entered. A folder that cannot be listed is an entry
    with its error: ``folder`` itself an ``HzError``."""
    from hz.runtime.artifacts.printable import printable

    found: list[Listed] = []

    def unlisted(error: OSError) -> None:
        where = Path(os.fsdecode(error.filename or folder))
        message = f"cannot list {printable(str(where))}: {error.strerror or error}"
        if where == folder:
            raise HzError(message) from error
        found.append(Listed(where.relative_to(folder), HzError(message)))

    for root, dirs, names in os.walk(folder, onerror=unlisted):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if name.endswith(suffixes) and _is_file(path):
                found.append(Listed(path.relative_to(folder)))
    return found


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file, no link; True when its name cannot be looked at
    (a path longer than the system takes): the read, by descriptor, tells."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def contracts(base: Path, listed: list[Listed], place: str) -> list[Read | Listed]:
    """Each of ``listed`` under ``base`` that has an hz: frontmatter, as read; each that
    cannot be read, with its error."""
    from hz.compiler.load.markdown import has_hz_block

    found: list[Read | Listed] = []
    for listing in listed:
        if listing.error is not None:
            found.append(listing)
            continue
        try:
            source = read(base, listing.relative, place)
        except HzError as e:
            found.append(Listed(listing.relative, e))
            continue
        if has_hz_block(source.data.decode("utf-8", errors="replace")):
            found.append(source)
    return found


def read(base: Path, relative: PurePath, place: str) -> Read:
    """The bytes (at most the loader's limit and one) and the status of the regular file
    ``base/relative``, opened by descriptor from ``base`` without following a link
    (``open_folders``): a folder or the file swapped for a link after the listing is an error
    naming it, never a read of what it points at (which a migration would write back)."""
    from hz.compiler.load.loader import MAX_BYTES
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.regular_file import read_descriptor

    shown = base / relative
    try:
        handle = open_file(base, relative, place, verb="read")
        try:
            data = read_descriptor(handle, limit=MAX_BYTES + 1, path=shown)
            return Read(relative, data, os.fstat(handle))
        finally:
            os.close(handle)
    except OSError as e:  # the file went, or became no regular file, after it was listed
        raise HzError(f"cannot read {printable(str(shown))}: {e.strerror or e}") from e

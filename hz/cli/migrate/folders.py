"""The folders ``hz migrate`` reads from and writes into, opened by descriptor without following
a link: what is read from or written into is what was checked."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePath

from hz.runtime.artifacts.beneath import open_directory, open_folders
from hz.runtime.artifacts.errors import HzError

#: Where a migrated file is written, as an error names it, and what to do about a link there.
OUT = "the output folder"
IN_PLACE = "the folder being migrated"
_LINK_HINTS = {
    OUT: "remove the link, or choose an output folder without links",
    IN_PLACE: "it became a link after hz migrate listed the folder: see what made it, then "
    "migrate again",
}

FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def open_folder(
    base: Path, folders: list[str], place: str, *, verb: str, make: bool = False
) -> int:
    """A descriptor of the folder ``base/folders``, each folder opened (and with ``make``
    made) by descriptor from the one before, without following a link (``open_folders``):
    what is read from or written into is what was checked. A link met on the way is an
    ``HzError`` naming it (``place`` names ``base``, ``verb`` what hz migrate does not do
    through it); ``base`` itself is the operator's choice and is followed. ``OSError``
    otherwise."""
    if make:
        base.mkdir(parents=True, exist_ok=True)
    root = open_directory(base)
    try:
        return open_folders(root, folders, make=make)
    except OSError as e:
        if e.errno == errno.ELOOP and e.filename:
            raise link_error(base / e.filename, place, verb) from e
        if e.errno == errno.ENOTDIR and e.filename:
            raise OSError(e.errno, f"{base / e.filename} is not a folder") from e
        raise
    finally:
        os.close(root)


def refuse_link(fd: int, name: str, shown: Path, place: str, *, verb: str) -> None:
    """``HzError`` when ``name`` in the directory ``fd`` is a symbolic link; else nothing."""
    try:
        is_link = stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:  # not there (yet): nothing to refuse
        return
    if is_link:
        raise link_error(shown, place, verb)


def open_file(base: Path, relative: PurePath, place: str, *, verb: str) -> int:
    """The file ``base/relative`` opened read-only by descriptor from ``base``: no link is
    followed on the way (``open_folder``) or at its name (``refuse_link``), each an ``HzError``
    naming it; an ``OSError`` for anything else that keeps it from being opened."""
    *folders, name = relative.parts
    fd = open_folder(base, folders, place, verb=verb)
    try:
        refuse_link(fd, name, base / relative, place, verb=verb)
        return os.open(name, FILE, dir_fd=fd)
    finally:
        os.close(fd)


def link_error(shown: Path, place: str, verb: str) -> HzError:
    from hz.runtime.artifacts.printable import printable

    return HzError(
        f"{printable(str(shown))} is a symbolic link inside {place}: hz migrate does not "
        f"{verb} through it",
        hint=_LINK_HINTS[place],
    )

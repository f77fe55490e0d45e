"""What ``hz migrate`` writes: the file in the output folder as it is now, and the migrated
file, placed atomically without following a link, in place only over the file that was read."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePath

from hz.cli.migrate.folders import IN_PLACE, OUT, open_file, open_folder, refuse_link
from hz.runtime.artifacts.beneath import place_file
from hz.runtime.artifacts.errors import HzError


class _Changed(Exception):
    """The file migrated in place is no longer the one read."""


def held(out: Path, relative: PurePath) -> bytes | None:
    """What the output folder holds at ``relative`` (``None``: nothing), read by descriptor
    without following a link (``open_folder``); what keeps it from being read keeps it from being
    written: an ``HzError`` saying so."""
    from hz.compiler.load.loader import MAX_BYTES
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.regular_file import read_descriptor

    shown = out / relative
    try:
        handle = open_file(out, relative, OUT, verb="write")
        try:
            return read_descriptor(handle, limit=MAX_BYTES + 1, path=shown)
        finally:
            os.close(handle)
    except FileNotFoundError:
        return None
    except OSError as e:  # what is there keeps it from being written
        raise HzError(f"cannot write {printable(str(shown))}: {e.strerror or e}") from e


def write(base: Path, relative: PurePath, text: str, kept: os.stat_result, place: str) -> None:
    """Write ``text`` to ``base/relative`` atomically (``place_file``), never through a
    symbolic link below ``base`` (``place`` names ``base`` in the error): the source
    repository chooses the relative paths and may have planted a link in the output folder
    (``contracts/team -> ~/.claude``), and a folder migrated in place may be swapped for a link
    between listing and writing. The folders are made and opened as ``open_folder`` walks them.

    The migrated file keeps the original's permissions, never setuid, setgid or sticky (a
    contract is no program). In place it replaces the original, and keeps its exact
    permissions, owner and group (``kept``): a file of another user is refused unless hz runs
    as root, which gives it back to them. In the output folder it is a new file of whoever
    runs hz, as ``cp`` makes one: the original's permissions less the umask.

    In place, just before the migrated file takes the name, the name must still be the file
    that was read (device, inode, size and modification time as ``kept``): one saved in the
    meantime (an editor's) is not overwritten, the file's error says so. A file of several
    hard links is refused: renamed over, the other names would keep the original."""
    from hz.runtime.artifacts.printable import printable

    shown = printable(str(base / relative))
    *folders, name = relative.parts
    if place == IN_PLACE:
        refuse_hard_links(shown, kept)
    try:
        fd = open_folder(base, folders, place, verb="write", make=place == OUT)

        def unchanged() -> None:
            if place != IN_PLACE:
                return
            try:
                now = os.lstat(name, dir_fd=fd)
            except FileNotFoundError as e:
                raise _Changed from e
            same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
            if same != (kept.st_dev, kept.st_ino, kept.st_size, kept.st_mtime_ns):
                raise _Changed

        try:
            refuse_link(fd, name, base / relative, place, verb="write")
            place_file(
                fd,
                name,
                text.encode("utf-8"),
                temporary=f".hz-migrate-{os.getpid()}.tmp",
                replace=True,
                mode=stat.S_IMODE(kept.st_mode) & 0o777,
                like=kept if place == IN_PLACE else None,
                before=unchanged,
            )
        finally:
            os.close(fd)
    except _Changed as e:
        raise HzError(
            f"cannot write {shown}: it changed after hz migrate read it (saved, replaced or "
            "removed in the meantime): not overwritten",
            hint="migrate it again",
        ) from e
    except PermissionError as e:
        if e.errno == errno.EPERM and place == IN_PLACE and kept.st_uid != os.geteuid():
            raise HzError(
                f"cannot write {shown}: it is a file of user {kept.st_uid}, and migrated in "
                "place it would become yours",
                hint="migrate it as its owner (or as root, which keeps the owner), or with --out",
            ) from e
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e
    except OSError as e:
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e


def refuse_hard_links(shown: str, kept: os.stat_result) -> None:
    """``HzError`` when the file read (``kept``), to be migrated in place, has several hard
    links; else nothing. ``--check`` asks it too, so it reports the refusal the run makes."""
    if kept.st_nlink > 1:
        raise HzError(
            f"cannot write {shown}: it has {kept.st_nlink} hard links, and migrated in place "
            "only this name would hold the migrated contract (the others keep the original)",
            hint="migrate it with --out, or make it a file of its own (cp FILE NEW && mv NEW "
            "FILE), then migrate again",
        )

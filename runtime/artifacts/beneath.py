"""Opening a file under the working directory by descriptor: nothing renamed meanwhile can
lead the open out of the tree.

Checking a path (``realpath``) and then opening it by name leaves a gap: whoever can write the
tree (a concurrent build step, another job on the same checkout, a program the ``command``
provider runs there) swaps a directory for a link to ``/etc`` between the two, and the open
follows it. So, as hz reaches its state directory (``hz.runtime.ledger.private``), the path is
walked one name at a time from a descriptor of the working directory, each opened relative to
the one before without following a link (``O_NOFOLLOW``): what the next step is opened in is
what was checked, whatever is renamed meanwhile. A symbolic link met on the way is read
(``readlink``) and its target walked in its place — ``..`` climbs the directories actually
entered — so a link inside the tree still works, and a target that climbs above the working
directory, or an absolute one outside it, is refused without anything outside being opened.

Every name walked (the path's own, and those of each link's target) is also put to
``reserved``: the files provider refuses ``.git`` and the operator's ``deny`` patterns there,
so a link ``docs/cfg -> ../.git/config`` is refused as ``.git/config`` itself is.

Used by the files provider and by ``regular_file.read_regular(..., confined_to=TREE)`` (an
input file, ``hz init``'s files): the walk lives with the artifacts, the lowest layer, so that
both reach it.

Writing beneath a directory is stricter: ``open_folders`` opens each folder on the way without
following a link at all (a link is ``ELOOP``, never read), making the missing ones, and
``place_file`` puts a file into the folder so reached by a temporary name made anew and a link
or rename of it, both relative to that descriptor: nothing swapped in after a check is written
through. The ``files.write`` publish target, ``hz init`` and ``hz migrate`` write this way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Sequence

#: Symbolic links followed for one path, at most (as the kernel's own limit).
MAX_LINKS = 40
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """The path leads out of the tree, or through a reserved name: ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def open_directory(path: str | os.PathLike[str]) -> int:
    """A descriptor of the working directory itself (the operator's choice: followed)."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_beneath(
    root: int,
    parts: Sequence[str],
    *,
    top: str,
    reserved: Callable[[str], str | None] = lambda name: None,
    follow_last: bool = True,
) -> int:
    """A descriptor (``O_NONBLOCK``, the caller closes it) of what ``parts`` names under the
    directory ``root`` (whose absolute path, as written and resolved, ``top`` and its
    ``realpath``: an absolute link target there stays inside). ``Refused`` as above;
    ``OSError`` when something on the way is missing or not a directory. ``follow_last=False``:
    a last name that is itself a symbolic link is ``ELOOP``, not followed."""
    names = list(parts)
    entered: list[int] = []
    links = 0
    target = ""
    try:
        while names:
            name = names.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not entered:
                    raise Refused(_out(target))
                os.close(entered.pop())
                continue
            why = reserved(name)
            if why is not None:
                raise Refused(why)
            here = entered[-1] if entered else root
            try:
                fd = os.open(name, _DIRECTORY if names else _FILE, dir_fd=here)
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR) or not (names or follow_last):
                    raise
                try:
                    target = os.readlink(name, dir_fd=here)
                except OSError:
                    raise e from None  # not a link: a file where a directory should be
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "more than 40 symbolic links on the way") from e
                names[:0] = _target(target, top)
                if os.path.isabs(target):
                    while entered:
                        os.close(entered.pop())
                continue
            if not names:
                return fd
            entered.append(fd)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    finally:
        for fd in entered:
            os.close(fd)


def open_folders(root: int, parts: Sequence[str], *, make: bool = False) -> int:
    """A new descriptor (the caller closes it; ``root`` stays open) of the folder ``parts``
    names under the directory ``root``, each name opened relative to the one before without
    following a link; with ``make`` a missing folder is made (``0o755``, less the umask).
    ``OSError`` naming the parts walked up to the one it is about, joined by ``/``
    (``filename``): ``ELOOP`` for a symbolic link, ``ENOTDIR`` for something else that is no
    folder."""
    fd = os.open(".", _DIRECTORY, dir_fd=root)
    for depth, part in enumerate(parts, 1):
        walked = "/".join(parts[:depth])
        try:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                inner = os.open(part, _DIRECTORY, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
                    raise OSError(errno.ELOOP, "a symbolic link", walked) from e
                raise OSError(e.errno, e.strerror, walked) from e
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        fd = inner
    return fd


def _is_link(directory: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=directory).st_mode)
    except OSError:
        return False


def place_file(
    directory: int,
    name: str,
    data: bytes,
    *,
    temporary: str,
    replace: bool,
    mode: int = 0o644,
    like: os.stat_result | None = None,
    before: Callable[[], None] | None = None,
) -> None:
    """``data`` as ``name`` in the folder ``directory``, whole or not at all: written to
    ``temporary`` (made anew: a stale one is removed first, and a link there is never opened),
    synced, then linked to ``name`` — ``FileExistsError`` when the name exists, a symbolic link
    included: nothing is overwritten or followed — or, with ``replace``, renamed over it (a link
    there is replaced, not followed). ``mode`` less the umask; ``temporary`` never stays.

    ``like``, the status of the file ``name`` replaces: the new file takes its permissions
    (``0o777``: never setuid, setgid or sticky) and its owner and group, before it takes the
    name. ``PermissionError`` when the owner cannot be given (a file of another user, replaced
    by one who is not root): nobody's file becomes someone else's.

    ``before`` is called last before the name is taken: what it raises leaves ``name`` as it
    is (a caller checks that the file it replaces is still the one it read)."""
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, mode, dir_fd=directory)
        try:
            if like is not None:
                made = os.fstat(fd)
                if (made.st_uid, made.st_gid) != (like.st_uid, like.st_gid):
                    os.fchown(fd, like.st_uid, like.st_gid)
                os.fchmod(fd, stat.S_IMODE(like.st_mode) & 0o777)
            view = memoryview(data)
            while view:  # os.write may write less than it is given
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if before is not None:
            before()
        if replace:
            os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        else:
            os.link(
                temporary, name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False
            )
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)


def _target(target: str, top: str) -> list[str]:
    """The names a link's ``target`` stands for, relative to where the walk goes on: the
    directory it is in, or (absolute) the working directory."""
    if not os.path.isabs(target):
        return target.split("/")
    for base in dict.fromkeys((top, os.path.realpath(top))):
        if target == base or target.startswith(base.rstrip("/") + "/"):
            return target[len(base) :].split("/")
    raise Refused(_out(target))


def _out(target: str) -> str:
    return f"a symbolic link that leads out of the working directory (to {_quoted(target)})"


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 120 else text[:119] + "…")

"""The state directory and the ledger file are this user's alone, or hz does not use them.

The run ledger says what runs: its queued runs hold a packet, a working directory and a receipt
directory, and ``hz worker`` runs them. A ledger another user can write (a state directory in
``/tmp`` on a shared host, a file left mode 0666) lets that user choose what this user's hz
runs, and read back the result. So, as ssh refuses a ``~/.ssh`` that others can write:

- the state directory (``HZ_STATE_DIR``, ``[system] state_dir`` or the platform's), and
  ``receipts/`` in it, must be directories — not symbolic links — owned by the effective user
  and writable by no one else (no group or other write bit); hz creates what is missing with
  mode 0700;
- every directory on the way to it must be owned by root or the effective user, and writable
  by nobody else — not by others, not by its group — unless it has the sticky bit (``/tmp`` is
  fine as a parent: nobody else can rename or remove what is ours in it). A directory writable
  by its group is fine when that group is the user's own private group (its name is the
  user's, and nobody else is in it: Debian's and Ubuntu's user private groups);
- every symbolic link on the way must be owned by root or the effective user (a link of
  another user in ``/tmp`` is theirs to point elsewhere);
- the ledger file and its ``-wal`` and ``-shm`` files, when present, must be regular files (not
  links, pipes or devices) owned by the effective user and writable by no one else. hz creates
  the ledger 0600; SQLite gives the WAL and shared-memory files the ledger's mode.

The path is walked one directory at a time from ``/``, each opened without following a link
(``O_NOFOLLOW``) relative to the one before, and checked on its open descriptor (``fstat``):
what is checked is what the next step is opened in, whatever is renamed meanwhile. SQLite then
opens the ledger by its name — and by name again for its ``-wal`` and ``-shm`` files, later:
it resolves even a ``/proc/self/fd/N`` path to the directory's current name, so a descriptor
cannot be handed to it. What keeps that name leading to what was checked is the rule above:
nobody but root and this user can rename, replace or re-point anything on the way.

A refusal names the path, what was found (owner, mode, kind) and how to fix it.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import stat
from pathlib import Path

from hz.runtime.artifacts.errors import HzError

#: Where to look when the state directory is not usable: said in every refusal.
ELSEWHERE = "or choose another state directory (HZ_STATE_DIR, or [system] state_dir)"
#: Symbolic links followed on the way, at most (as the kernel's own limit).
MAX_LINKS = 40
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotPrivate(HzError):
    """The state directory, a parent of it or a ledger file could be changed by another user
    (or is not what it should be): nothing is read or written there."""


def private_dir(path: Path, what: str = "the state directory") -> None:
    """``path`` created with mode 0700 where missing (parents too), checked as above."""
    os.close(open_private_dir(path, what))


def open_private_dir(path: Path, what: str = "the state directory") -> int:
    """A descriptor of the directory ``path``, reached and checked as above (created with
    mode 0700 where missing); the caller closes it."""
    path = Path(os.path.abspath(path))
    me = os.geteuid()
    names = list(path.parts[1:])
    at = Path("/")
    fd = os.open("/", _DIRECTORY)
    try:
        _check_parent(os.fstat(fd), at, path, what, me)
        links = 0
        while names:
            name = names.pop(0)
            last = not names
            if name in ("", "."):
                continue
            try:
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):  # made by another hz meanwhile
                    os.mkdir(name, 0o700, dir_fd=fd)
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(found.st_mode):
                target = os.readlink(name, dir_fd=fd)
                if last:
                    _check_own(found, path, what, directory=True, target=target)
                links += 1
                _check_link(found, at / name, target, path, what, me, links)
                names[:0] = list(Path(target).parts)
                if os.path.isabs(target):
                    names.pop(0)
                    os.close(fd)
                    fd = os.open("/", _DIRECTORY)
                    at = Path("/")
                continue
            if not stat.S_ISDIR(found.st_mode):
                if last:
                    _check_own(found, path, what, directory=True)
                raise NotPrivate(
                    f"{at / name}, a parent of {what} {path}, is not a directory "
                    f"({_kind(found.st_mode)})",
                    hint=f"move it away, {ELSEWHERE}",
                )
            opened = os.open(name, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = opened
            at = Path(os.path.normpath(at / name))
            if last:
                _check_own(os.fstat(fd), path, what, directory=True)
            else:
                _check_parent(os.fstat(fd), at, path, what, me)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_ledger(path: Path) -> None:
    """The ledger ``path``: its directory reached and checked as the state directory, the
    ledger created there (empty, mode 0600) when missing, and it, its ``-wal`` and its
    ``-shm`` file checked as above where present — each found in the directory's descriptor."""
    fd = open_private_dir(path.parent)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path.name, flags, 0o600, dir_fd=fd))
        for suffix in ("", "-wal", "-shm"):
            name = path.name + suffix
            try:
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            target = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(found.st_mode) else None
            shown = Path(f"{path}{suffix}")
            _check_own(found, shown, "the run ledger", directory=False, target=target)
    finally:
        os.close(fd)


def _check_own(
    found: os.stat_result, path: Path, what: str, *, directory: bool, target: str | None = None
) -> None:
    mode = found.st_mode
    shown = f"{path}, {what},"
    if stat.S_ISLNK(mode):
        raise NotPrivate(
            f"{shown} is a symbolic link (to {target}); hz keeps its run ledger only "
            "in a directory of its own",
            hint=f"use the directory itself if it is yours, {ELSEWHERE}",
        )
    wanted = stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode)
    if not wanted:
        kind = "a directory" if directory else "a regular file"
        raise NotPrivate(
            f"{shown} is not {kind} ({_kind(mode)})",
            hint=f"move it away, {ELSEWHERE}",
        )
    me = os.geteuid()
    if found.st_uid != me:
        raise NotPrivate(
            f"{shown} belongs to {_user(found.st_uid)}, not to {_user(me)} who runs hz: its "
            "runs and their results would be that user's to choose and to read",
            hint=f"chown {_name(me)} {path} if it is yours, {ELSEWHERE}",
        )
    if mode & 0o022:
        others = (
            "its group and others"
            if mode & 0o020 and mode & 0o002
            else ("its group" if mode & 0o020 else "others")
        )
        fix = "700" if directory else "600"
        raise NotPrivate(
            f"{shown} is writable by {others} (mode {stat.S_IMODE(mode):04o}): they could "
            "choose what hz runs",
            hint=f"chmod {fix} {path}, {ELSEWHERE}",
        )


def _check_parent(found: os.stat_result, parent: Path, path: Path, what: str, me: int) -> None:
    mode = found.st_mode
    shown = f"{parent}, a parent of {what} {path},"
    if found.st_uid not in (0, me):
        raise NotPrivate(
            f"{shown} belongs to {_user(found.st_uid)}, who could put a directory of their own "
            "in its place",
            hint=f"keep the state directory under a directory of yours or root's, {ELSEWHERE}",
        )
    if mode & stat.S_ISVTX:
        return  # nobody else may rename or remove what is ours in it
    if mode & 0o002:
        raise NotPrivate(
            f"{shown} is writable by others without the sticky bit (mode "
            f"{stat.S_IMODE(mode):04o}): anyone could put a directory of their own in its place",
            hint=f"chmod o-w {parent} (or +t, as /tmp has), {ELSEWHERE}",
        )
    if mode & 0o020 and not _own_group(found.st_gid, me):
        raise NotPrivate(
            f"{shown} is writable by its group {_group(found.st_gid)} without the sticky bit "
            f"(mode {stat.S_IMODE(mode):04o}): any member of it could put a directory of their "
            "own in its place",
            hint=f"chmod g-w {parent} (or +t, as /tmp has), {ELSEWHERE}",
        )


def _check_link(
    found: os.stat_result, link: Path, target: str, path: Path, what: str, me: int, links: int
) -> None:
    if found.st_uid not in (0, me):
        raise NotPrivate(
            f"{link}, a symbolic link on the way to {what} {path}, belongs to "
            f"{_user(found.st_uid)}, who could point it elsewhere",
            hint=f"name the directory it leads to ({target}) instead, {ELSEWHERE}",
        )
    if links > MAX_LINKS:
        raise NotPrivate(
            f"{path}, {what}, is reached through more than {MAX_LINKS} symbolic links",
            hint=f"name the directory itself, {ELSEWHERE}",
        )


def _own_group(gid: int, me: int) -> bool:
    """Whether ``gid`` is the user's private group: named as the user, nobody else in it."""
    try:
        user = pwd.getpwuid(me)
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return (
        gid == user.pw_gid
        and group.gr_name == user.pw_name
        and all(member == user.pw_name for member in group.gr_mem)
    )


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return name
    return "of an unknown kind"


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _user(uid: int) -> str:
    name = _name(uid)
    return f"uid {uid}" if name == str(uid) else f"{name} (uid {uid})"


def _group(gid: int) -> str:
    try:
        name = grp.getgrgid(gid).gr_name
    except KeyError:
        return f"(gid {gid})"
    return f"{name} (gid {gid})"

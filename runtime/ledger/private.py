"""The state directory and the ledger file are this user's alone, or hz does not use them.

The run ledger says what runs: its queued runs hold a packet, a working directory and a receipt
directory, and ``hz worker`` runs them. A ledger another user can write (a state directory in
``/tmp`` on a shared host, a file left mode 0666) lets that user choose what this user's hz
runs, and read back the result. So, as ssh refuses a ``~/.ssh`` that others can write:

- the state directory (``HZ_STATE_DIR``, ``[system] state_dir`` or the platform's), and
  ``receipts/`` in it, must be directories — not symbolic links — owned by the effective user
  and writable by no one else (no group or other write bit); hz creates what is missing with
  mode 0700;
- every directory above the state directory must be owned by root or the effective user, and
  writable by others only with the sticky bit (``/tmp`` is fine as a parent: nobody else can
  rename or remove what is ours in it); a group-writable parent is allowed;
- the ledger file and its ``-wal`` and ``-shm`` files, when present, must be regular files (not
  links, pipes or devices) owned by the effective user and writable by no one else. hz creates
  the ledger 0600; SQLite gives the WAL and shared-memory files the ledger's mode.

A refusal names the path, what was found (owner, mode, kind) and how to fix it. The checks are
made before SQLite opens anything; once they hold, nobody else can change what is checked.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import stat
from pathlib import Path

from hz.runtime.artifacts.errors import HzError

#: Where to look when the state directory is not usable: said in every refusal.
ELSEWHERE = "or choose another state directory (HZ_STATE_DIR, or [system] state_dir)"


class NotPrivate(HzError):
    """The state directory, a parent of it or a ledger file could be changed by another user
    (or is not what it should be): nothing is read or written there."""


def private_dir(path: Path, what: str = "the state directory") -> None:
    """``path`` created with mode 0700 where missing, checked as above."""
    path = Path(os.path.abspath(path))
    _check_parents(path, what)
    missing = []
    for step in (path, *path.parents):
        if os.path.lexists(step):
            break
        missing.append(step)
    for step in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made by another hz meanwhile
            step.mkdir(mode=0o700)
    _check_own(path, what, directory=True)


def private_file(path: Path, what: str = "the run ledger", *, create: bool = False) -> None:
    """The file at ``path`` checked as above when it exists; with ``create``, made (empty,
    mode 0600) when it does not."""
    if create:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, flags, 0o600))
    if os.path.lexists(path):
        _check_own(path, what, directory=False)


def _check_own(path: Path, what: str, *, directory: bool) -> None:
    found = os.lstat(path)
    mode = found.st_mode
    shown = f"{path}, {what},"
    if stat.S_ISLNK(mode):
        raise NotPrivate(
            f"{shown} is a symbolic link (to {os.readlink(path)}); hz keeps its run ledger only "
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


def _check_parents(path: Path, what: str) -> None:
    me = os.geteuid()
    real = Path(os.path.realpath(path.parent))
    for parent in (real, *real.parents):
        try:
            found = os.stat(parent)
        except FileNotFoundError:
            continue  # made below, by this user
        mode = found.st_mode
        if found.st_uid not in (0, me):
            raise NotPrivate(
                f"{parent}, a parent of {what} {path}, belongs to {_user(found.st_uid)}, who "
                "could put a directory of their own in its place",
                hint=f"keep the state directory under a directory of yours or root's, {ELSEWHERE}",
            )
        if mode & 0o002 and not mode & stat.S_ISVTX:
            raise NotPrivate(
                f"{parent}, a parent of {what} {path}, is writable by others without the sticky "
                f"bit (mode {stat.S_IMODE(mode):04o}): anyone could put a directory of their own "
                "in its place",
                hint=f"chmod o-w {parent} (or +t, as /tmp has), {ELSEWHERE}",
            )


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISREG, "a regular file"),
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

"""Reading a file hz was pointed at: a regular file only, never more than a cap.

A path from outside (a contract, an inputs file, ``--input NAME=@FILE``, a job in ``--out``,
``HZ_CONFIG``) can name a FIFO (opening it would wait for a writer forever), a device
(``/dev/zero`` never ends), a directory or a socket. ``read_regular`` opens without blocking,
checks what it opened, and reads at most ``limit + 1`` bytes, so the caller can tell "over the
limit" from "at the limit". Problems are ``OSError`` with a ``strerror`` fit for a message.

``confined_to``: a path that goes through a symbolic link must end up inside that directory
(a repository can plant ``issues.json -> ~/.ssh/id_ed25519``; the operator's own absolute paths
without links are theirs to choose). A path under that directory is opened by descriptor, one
name at a time (``beneath``): a directory swapped for a link between a check and the open
cannot lead it out. A path outside it is checked (``check_links``) and opened by name: no one
but the operator writes there.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from hz.runtime.artifacts.beneath import Refused, open_beneath, open_directory

__all__ = [
    "check_links",
    "open_confined",
    "read_descriptor",
    "read_regular",
    "read_regular_text",
]

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def read_regular(
    path: str | os.PathLike[str],
    *,
    limit: int,
    confined_to: str | os.PathLike[str] | None = None,
    follow_link: bool = True,
) -> bytes:
    """At most ``limit + 1`` bytes of the regular file at ``path``; see the module docstring.
    ``follow_link=False``: a ``path`` that is itself a symbolic link is refused (``ELOOP``), even
    one planted after the caller looked at it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_link else os.O_NOFOLLOW)
    try:
        fd = None if confined_to is None else open_confined(path, confined_to, follow_link)
        if fd is None:
            if confined_to is not None:
                check_links(path, confined_to)
            fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow_link:
            raise OSError(errno.ELOOP, "a symbolic link", str(path)) from e
        raise
    try:
        return read_descriptor(fd, limit=limit, path=path)
    finally:
        os.close(fd)


def open_confined(
    path: str | os.PathLike[str], tree: str | os.PathLike[str], follow_link: bool = True
) -> int | None:
    """A descriptor (``O_NONBLOCK``) of ``path`` when it lies under ``tree``, walked there by
    descriptor: a link is followed only within ``tree`` (``OSError`` ``EACCES`` for one that
    leads out, naming where). ``None`` for a path outside ``tree``."""
    full = os.path.normpath(os.path.join(os.getcwd(), os.fspath(path)))
    for base in dict.fromkeys((os.path.abspath(tree), os.path.realpath(tree))):
        if full == base:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not full.startswith(base.rstrip(os.sep) + os.sep):
            continue
        root = open_directory(base)
        try:
            parts = full[len(base) :].split(os.sep)
            return open_beneath(root, parts, top=base, follow_last=follow_link)
        except Refused as e:
            # Where the link leads, for the message only: nothing was opened there.
            real = os.path.realpath(path)
            raise OSError(
                errno.EACCES,
                f"a symbolic link that leads out of {Path(tree)} (to {real})",
                str(path),
            ) from e
        finally:
            os.close(root)
    return None


def read_descriptor(fd: int, *, limit: int, path: str | os.PathLike[str]) -> bytes:
    """As ``read_regular``, of a file already opened (``O_NONBLOCK``) as ``fd``, which the
    caller closes; ``path`` names it in errors."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"not a regular file ({_kind(mode)})", str(path))
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular_text(
    path: str | os.PathLike[str],
    *,
    limit: int,
    confined_to: str | os.PathLike[str] | None = None,
) -> str:
    """The UTF-8 text of the regular file at ``path``; a file over ``limit`` bytes is an
    ``OSError`` too (``EFBIG``), a file that is no UTF-8 a ``UnicodeDecodeError``."""
    data = read_regular(path, limit=limit, confined_to=confined_to)
    if len(data) > limit:
        message = f"larger than {limit // (1024 * 1024)} MiB, the limit for this file"
        raise OSError(errno.EFBIG, message, str(path))
    return data.decode("utf-8")


def check_links(path: str | os.PathLike[str], tree: str | os.PathLike[str]) -> None:
    """``OSError`` when ``path`` goes through a symbolic link and ends up outside ``tree``."""
    real = os.path.realpath(path)
    if real == os.path.abspath(path):
        return  # no symbolic link on the way
    top = os.path.realpath(tree)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise OSError(
            errno.EACCES,
            f"a symbolic link that leads out of {Path(tree)} (to {real})",
            str(path),
        )

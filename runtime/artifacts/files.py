"""The one atomic write: every artifact file hz writes appears whole or not at all.

The data goes to a temporary file in the target's directory, which then takes the target's
name in one step, so a reader (or a crash) never sees half a file. Used for compiled jobs,
packets and receipts.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hz.runtime.artifacts.errors import HzError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(
    path: Path,
    data: str | bytes,
    *,
    overwrite: bool = True,
    durable: bool = False,
    mode: int | None = None,
) -> None:
    """Write ``data`` (text is written as UTF-8, unchanged) to ``path`` atomically.

    - ``overwrite``: replace an existing file (a rename). Without it the file is linked into
      place and an existing one is never touched, even by a writer that ignores a lock:
      ``FileExistsError`` then.
    - ``durable``: fsync the file before it takes its name, and the directory after, so the
      write survives a crash of the machine.
    - ``mode``: the file's permissions; by default what ``open()`` would give (``0o666`` less
      the umask), since ``mkstemp`` makes ``0o600`` and an artifact is not a secret.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_umask() if mode is None else mode)
        if overwrite:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)  # gone after a rename; the extra name after a link
    if durable:
        directory_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory_fd)
        finally:
            os.close(directory_fd)


def write_file(path: Path, data: str | bytes) -> None:
    """``write_atomically`` into a directory made as needed, for a file a command was asked to
    write (``hz render -o``, ``hz init``); ``HzError`` naming the file when it cannot."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data)
    except OSError as e:
        raise HzError(f"cannot write {path}: {e.strerror or e}") from e

"""Private files for one run: a 0700 temporary directory, files 0600, removed afterwards.

Prompts and contracts reach an agent through these (or stdin), never through argv, so they
don't show in the process list and other users can't read them::

    with private_directory({"prompt.md": prompt, "contract.md": contract}) as private:
        private.files["prompt.md"]      # absolute Path, mode 0600
        private.path / "output.txt"     # the directory itself is 0700

The directory is removed on exit, also on error, whatever the child left in it (including
subdirectories it made unreadable).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from hz.runtime.process import leftovers, observe
from hz.runtime.process.uninterrupted import to_the_end

#: How a private path is shown where the real one doesn't exist yet (``hz run --dry-run``).
PLACEHOLDER_DIR = "<private>"


@dataclass(frozen=True, slots=True)
class PrivateDir:
    path: Path
    files: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))


def write_private_file(directory: Path, name: str, content: str | bytes) -> Path:
    """Create ``directory/name`` with mode 0600 (never through a symlink, never overwriting)."""
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"not a plain file name: {name!r}")
    data = content.encode("utf-8") if isinstance(content, str) else content
    path = directory / name
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # independent of the umask
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


@contextmanager
def private_directory(
    files: Mapping[str, str | bytes] | None = None, *, prefix: str = "hz-"
) -> Iterator[PrivateDir]:
    """A fresh private directory holding ``files`` (name → text or bytes); see module doc."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    leftovers.add(str(path))
    try:
        os.chmod(path, 0o700)
        observe.private_dir(path)
        written = {
            name: write_private_file(path, name, data) for name, data in (files or {}).items()
        }
        yield PrivateDir(path=path, files=MappingProxyType(written))
    finally:
        to_the_end(lambda: remove_tree(path))
        leftovers.discard(str(path))


def remove_tree(path: Path) -> None:
    """Remove ``path`` even where a child took away read, write or search permission.

    Everything in it belongs to our user (the child runs as us), so permissions can be given
    back before removal; symbolic links are removed, never followed.
    """
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IRWXU)
    # Top-down: a directory is unlocked before os.walk lists it.
    for top, dirs, _files in os.walk(path):
        for name in dirs:
            sub = os.path.join(top, name)
            if not os.path.islink(sub):
                with contextlib.suppress(OSError):
                    os.chmod(sub, stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)

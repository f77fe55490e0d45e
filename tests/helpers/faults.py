"""Faults for the run ledger's tests: a small file system that fills up, a damaged file.

``SmallDisk`` mounts a tmpfs of its own (as root: CI runs as root). Elsewhere the tests that
need it are skipped, except under CI (``CI=true``), where a skip would hide a missing fault
test: they fail there instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: What a tmpfs mounted for a test holds: room for a ledger and a few runs, filled in a blink.
SIZE = "8m"


class SmallDisk:
    """A tmpfs at ``root``; ``fill()`` takes every free byte, ``free()`` gives them back."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        block = b"\0" * (1 << 16)
        with open(self.filler, "ab", buffering=0) as f:
            while True:
                try:
                    f.write(block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
            # The last partial block: every byte, so that even a page of SQLite's fails.
            for size in (4096, 512, 1):
                with contextlib.suppress(OSError):
                    while True:
                        f.write(b"\0" * size)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


def need_root(why: str) -> None:
    """Skip where not root, except under CI, where the test must run: fail there."""
    if os.geteuid() == 0:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} needs root, and CI runs as root")
    pytest.skip(f"{why} needs root (CI runs it as root)")


@contextlib.contextmanager
def small_disk(size: str = SIZE) -> Iterator[SmallDisk]:
    need_root("mounting a small tmpfs")
    root = Path(tempfile.mkdtemp(prefix="hz-small-disk-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(root)],
        check=False,
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        root.rmdir()
        pytest.fail(
            f"mounting a small tmpfs failed: {mounted.stderr.strip()} (a container needs "
            "--privileged: .github/workflows/ci.yml)"
        )
    try:
        yield SmallDisk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def zero_pages(path: Path, first: int, count: int, page: int = 4096) -> None:
    """Overwrite ``count`` pages of ``path`` from page ``first`` with zeros (a damaged disk)."""
    with open(path, "r+b") as f:
        f.seek(first * page)
        f.write(b"\0" * page * count)

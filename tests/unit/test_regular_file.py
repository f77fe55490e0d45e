"""``read_regular(..., confined_to=TREE)``: a path under the tree is opened by descriptor, so a
directory swapped for a link between a check and the open cannot lead the read out."""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import pytest

from hz.runtime.artifacts.regular_file import read_regular


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0\n")
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    (tree / "real" / "passwd").write_text("innocent\n")
    (tree / "d").symlink_to("real")
    return tree, outside


def test_a_link_inside_the_tree_is_followed(tmp_path: Path) -> None:
    tree, _ = _tree(tmp_path)
    assert read_regular(tree / "d" / "passwd", limit=100, confined_to=tree) == b"innocent\n"


def test_a_link_out_of_the_tree_is_refused_naming_where(tmp_path: Path) -> None:
    tree, outside = _tree(tmp_path)
    (tree / "e").symlink_to(outside)
    with pytest.raises(OSError, match="leads out") as caught:
        read_regular(tree / "e" / "passwd", limit=100, confined_to=tree)
    assert (caught.value.errno, caught.value.strerror) == (
        errno.EACCES,
        f"a symbolic link that leads out of {tree} (to {outside / 'passwd'})",
    )


def test_a_last_name_that_is_a_link_is_refused_without_follow_link(tmp_path: Path) -> None:
    tree, _ = _tree(tmp_path)
    (tree / "p").symlink_to("real/passwd")
    with pytest.raises(OSError, match="a symbolic link") as caught:
        read_regular(tree / "p", limit=100, confined_to=tree, follow_link=False)
    assert caught.value.errno == errno.ELOOP


@pytest.mark.serial
def test_a_directory_swapped_for_a_link_during_the_read_cannot_lead_out(tmp_path: Path) -> None:
    tree, outside = _tree(tmp_path)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for target in ("real", str(outside)):
                (tree / "d.tmp").symlink_to(target)
                os.replace(tree / "d.tmp", tree / "d")

    swapper = threading.Thread(target=swap)
    swapper.start()
    texts: list[bytes] = []
    errors: set[int | None] = set()
    try:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                texts.append(read_regular(tree / "d" / "passwd", limit=100, confined_to=tree))
            except OSError as e:
                errors.add(e.errno)  # a link caught mid-swap: refused, or gone
    finally:
        stop.set()
        swapper.join()
    assert b"innocent\n" in texts  # the race was run, not only refused
    assert errors <= {errno.EACCES, errno.ENOENT}
    assert texts.count(b"root:x:0:0\n") == 0

"""Private run files: 0700 directory, 0600 files, removed afterwards even on error."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hz.runtime.process.privatefiles import PrivateDir, private_directory, write_private_file


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_directory_and_files_are_private_and_removed() -> None:
    old = os.umask(0)
    try:
        with private_directory({"prompt.md": "hallo", "raw.bin": b"\x00\x01"}) as private:
            assert mode(private.path) == 0o700
            assert sorted(private.files) == ["prompt.md", "raw.bin"]
            assert private.files["prompt.md"].read_text() == "hallo"
            assert private.files["raw.bin"].read_bytes() == b"\x00\x01"
            assert {mode(p) for p in private.files.values()} == {0o600}
            assert mode(write_private_file(private.path, "later.txt", "x")) == 0o600
    finally:
        os.umask(old)
    assert not private.path.exists()


def lock_up_and_fail(private: PrivateDir) -> None:
    """What a hostile child might leave behind, then an error in hz."""
    locked = private.path / "a" / "b"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    (private.path / "link").symlink_to("/etc/passwd")
    os.chmod(locked, 0)
    os.chmod(private.path / "a", 0o500)
    raise RuntimeError("boom")


def test_removed_on_error_even_when_a_child_locked_it_up() -> None:
    with pytest.raises(RuntimeError, match="boom"), private_directory() as private:
        lock_up_and_fail(private)
    assert not private.path.exists()
    assert Path("/etc/passwd").exists()


def test_never_writes_through_a_symlink_or_over_a_file(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("secret")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(FileExistsError):
        write_private_file(tmp_path, "link", "x")
    assert target.read_text() == "secret"


@pytest.mark.parametrize("name", ["", ".", "..", "a/b"])
def test_only_plain_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError) as e:
        write_private_file(tmp_path, name, "x")
    assert str(e.value) == f"not a plain file name: {name!r}"

"""The files provider against what a repository can plant: links out of the tree, a FIFO,
a huge file, a pattern matching thousands of files, bytes that are not UTF-8."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.providers.files import FilesProvider, FilesSettings
from hz.runtime.providers.protocol import FetchRequest, ProviderError
from hz.runtime.testing.providers import Failure, ProviderConformance, Sample


def fetch(
    workdir: Path, operation: str, settings: dict[str, Any] | None = None, **args: Any
) -> Any:
    provider = FilesProvider(FilesSettings.model_validate(settings or {}))
    request = FetchRequest(
        operation=CATALOG[operation],
        args=args,
        window=None,
        workdir=workdir,
        deadline=time.monotonic() + 30,
    )
    return provider.fetch(request)


def refused(
    workdir: Path, operation: str, settings: dict[str, Any] | None = None, **args: Any
) -> tuple[str, str]:
    with pytest.raises(ProviderError) as info:
        fetch(workdir, operation, settings, **args)
    return info.value.code, info.value.message


def test_a_glob_is_sorted_text_and_leaves_directories_out(tmp_path: Path) -> None:
    (tmp_path / "notes" / "sub").mkdir(parents=True)
    for name in ("b.md", "a.md", "sub/c.md"):
        (tmp_path / "notes" / name).write_text(f"text of {name}\n")
    assert fetch(tmp_path, "files.glob", pattern="notes/**/*") == [
        {"path": "notes/a.md", "text": "text of a.md\n"},
        {"path": "notes/b.md", "text": "text of b.md\n"},
        {"path": "notes/sub/c.md", "text": "text of sub/c.md\n"},
    ]
    assert fetch(tmp_path, "files.read", path="notes/a.md") == {
        "path": "notes/a.md",
        "text": "text of a.md\n",
    }


def test_a_link_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("id_ed25519\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "notes.md").symlink_to(secret)
    (tree / "inside.md").write_text("fine\n")
    (tree / "alias.md").symlink_to(tree / "inside.md")  # a link inside the tree is fine
    code, message = refused(tree, "files.read", path="notes.md")
    assert (code, message) == (
        "HZ727",
        f"'notes.md' cannot be read: a symbolic link that leads out of {tree} (to {secret})",
    )
    assert refused(tree, "files.glob", pattern="*.md")[0] == "HZ727"
    assert fetch(tree, "files.read", path="alias.md") == {"path": "alias.md", "text": "fine\n"}


@pytest.mark.parametrize("path", ["../secret", "/etc/passwd", "a/../../secret"])
def test_a_path_that_leaves_the_working_directory_is_refused(tmp_path: Path, path: str) -> None:
    assert refused(tmp_path, "files.read", path=path) == (
        "HZ727",
        f"the path {path!r} leaves the working directory",
    )


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    assert refused(tmp_path, "files.read", path="pipe.md") == (
        "HZ727",
        "'pipe.md' cannot be read: not a regular file (a named pipe)",
    )
    assert refused(tmp_path, "files.glob", pattern="*.md")[0] == "HZ727"


def test_a_huge_file_is_read_up_to_the_cap_only(tmp_path: Path) -> None:
    huge = tmp_path / "huge.log"
    with huge.open("wb") as f:
        f.truncate(1024**3)  # 1 GB, sparse: reading it all would take seconds and 1 GB
    started = time.monotonic()
    assert refused(tmp_path, "files.read", path="huge.log") == (
        "HZ725",
        "'huge.log' is larger than the cap of 1,048,576 bytes per file",
    )
    assert time.monotonic() - started < 2


def test_the_total_of_a_fetch_is_capped(tmp_path: Path) -> None:
    for n in range(3):
        (tmp_path / f"{n}.txt").write_text("x" * 600)
    assert refused(tmp_path, "files.glob", {"max_total_bytes": 1000}, pattern="*.txt") == (
        "HZ725",
        "'1.txt' is larger than what is left of the 1,000 bytes of one fetch",
    )


def test_a_glob_of_many_files_stops_at_the_cap(tmp_path: Path) -> None:
    for n in range(2000):
        (tmp_path / f"{n:04d}.md").write_text("")
    assert refused(tmp_path, "files.glob", pattern="*.md") == (
        "HZ725",
        "the pattern '*.md' matches more than 200 files",
    )
    assert refused(tmp_path, "files.glob", pattern="*.md", max_files=5)[1] == (
        "the pattern '*.md' matches more than 5 files"
    )


def test_bytes_that_are_not_utf8_are_named(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n")
    assert refused(tmp_path, "files.read", path="logo.png") == (
        "HZ722",
        "'logo.png' is not UTF-8 text (byte 0x89 at offset 0)",
    )


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    assert refused(tmp_path, "files.read", path="nope.md") == (
        "HZ722",
        "'nope.md' does not exist in the working directory",
    )


class TestFilesConformance(ProviderConformance):
    provider_class = FilesProvider
    samples: ClassVar[dict[str, Sample]] = {
        "files.read": Sample({"path": "docs/a.md"}),
        "files.glob": Sample({"pattern": "docs/*.md"}),
    }

    def prepare(self, workdir: Path) -> None:
        (workdir / "docs").mkdir()
        (workdir / "docs" / "a.md").write_text("a\n")
        (workdir / "docs" / "b.md").write_text("b\n")

    def failure(self, workdir: Path) -> Failure:
        return Failure({}, "files.read", {"path": "../outside"}, code="HZ727")

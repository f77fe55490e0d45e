"""The files provider against what a repository can plant: links out of the tree, a FIFO,
a huge file, a pattern matching thousands of files, bytes that are not UTF-8."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.providers.files import FilesProvider, FilesSettings
from hz.runtime.providers.protocol import FetchRequest, ProviderError
from hz.runtime.testing.providers import Failure, ProviderConformance, Sample


def fetch(
    workdir: Path,
    operation: str,
    settings: dict[str, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
    **args: Any,
) -> Any:
    provider = FilesProvider(FilesSettings.model_validate(settings or {}))
    request = FetchRequest(
        operation=CATALOG[operation],
        args=args,
        window=None,
        workdir=workdir,
        deadline=clock() + 30,
        clock=clock,
    )
    return provider.fetch(request)


def refused(
    workdir: Path,
    operation: str,
    settings: dict[str, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
    **args: Any,
) -> tuple[str, str]:
    with pytest.raises(ProviderError) as info:
        fetch(workdir, operation, settings, clock, **args)
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
        f"'notes.md' cannot be read: a symbolic link that leads out of the working directory "
        f"(to {str(secret)!r})",
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


GIT_CONFIG = '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n'


def checkout(root: Path) -> Path:
    """A tree as actions/checkout leaves it: the credential in .git/config, a git-ignored
    .env, and the repository's own files (some of them dot files)."""
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / ".env").write_text("AWS_SECRET_ACCESS_KEY=abc\n")
    (root / ".editorconfig").write_text("root = true\n")
    (root / "docs").mkdir()
    (root / "docs" / "config").write_text("the docs' config\n")
    (root / "docs" / "a.md").write_text("a\n")
    return root


def paths(value: list[dict[str, str]]) -> list[str]:
    return [item["path"] for item in value]


GIT_REFUSED = "it is in .git, which holds the checkout's configuration and credentials"


@pytest.mark.parametrize("path", [".git/config", "./.git/config", ".git"])
def test_the_git_directory_is_never_read(tmp_path: Path, path: str) -> None:
    checkout(tmp_path)
    shown = path.removeprefix("./")
    assert refused(tmp_path, "files.read", path=path) == (
        "HZ727",
        f"{shown!r} cannot be read: {GIT_REFUSED}",
    )


def test_a_link_into_the_git_directory_is_refused_as_the_directory_is(tmp_path: Path) -> None:
    checkout(tmp_path)
    (tmp_path / "docs" / "cfg").symlink_to("../.git/config")
    (tmp_path / "docs" / "gitdir").symlink_to(tmp_path / ".git")
    assert refused(tmp_path, "files.read", path="docs/cfg") == (
        "HZ727",
        f"'docs/cfg' cannot be read: {GIT_REFUSED}",
    )
    assert refused(tmp_path, "files.read", path="docs/gitdir/config") == (
        "HZ727",
        f"'docs/gitdir/config' cannot be read: {GIT_REFUSED}",
    )
    assert refused(tmp_path, "files.glob", pattern="docs/*") == (
        "HZ727",
        f"'docs/cfg' cannot be read: {GIT_REFUSED}",
    )


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("*/config", ["docs/config"]),
        ("**/config", ["docs/config"]),
        ("[.]git/config", []),
        (".gi?/config", []),
        (".*/config", []),
    ],
)
def test_no_wildcard_reaches_the_git_directory(
    tmp_path: Path, pattern: str, found: list[str]
) -> None:
    checkout(tmp_path)
    assert paths(fetch(tmp_path, "files.glob", pattern=pattern)) == found


def test_a_pattern_that_names_the_git_directory_is_refused(tmp_path: Path) -> None:
    checkout(tmp_path)
    assert refused(tmp_path, "files.glob", pattern=".git/*") == (
        "HZ727",
        f"the pattern '.git/*' is refused: {GIT_REFUSED}",
    )


def test_wildcards_leave_dot_files_out_unless_the_pattern_names_the_dot(tmp_path: Path) -> None:
    checkout(tmp_path)
    assert paths(fetch(tmp_path, "files.glob", pattern="*")) == []
    assert paths(fetch(tmp_path, "files.glob", pattern="**/*")) == ["docs/a.md", "docs/config"]
    assert paths(fetch(tmp_path, "files.glob", pattern="*env")) == []
    # a part that begins with '.' matches dot files; .env stays out (deny), .git too
    assert paths(fetch(tmp_path, "files.glob", pattern=".*")) == [".editorconfig"]


def test_denied_names_are_refused_and_the_operator_chooses_them(tmp_path: Path) -> None:
    checkout(tmp_path)
    (tmp_path / "docs" / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    assert refused(tmp_path, "files.read", path=".env") == (
        "HZ727",
        "'.env' cannot be read: '.env' matches '.env' of [providers.files] deny",
    )
    assert refused(tmp_path, "files.read", path="docs/DEPLOY.PEM") == (  # case is ignored
        "HZ727",
        "'docs/DEPLOY.PEM' cannot be read: 'DEPLOY.PEM' matches '*.pem' of [providers.files] deny",
    )
    assert paths(fetch(tmp_path, "files.glob", pattern="docs/*")) == ["docs/a.md", "docs/config"]
    assert fetch(tmp_path, "files.read", {"deny": []}, path=".env") == {
        "path": ".env",
        "text": "AWS_SECRET_ACCESS_KEY=abc\n",
    }
    assert refused(tmp_path, "files.read", {"deny": []}, path=".git/config")[0] == "HZ727"


@pytest.mark.serial
def test_a_directory_swapped_for_a_link_during_the_read_cannot_lead_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0\n")
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    (tree / "real" / "passwd").write_text("innocent\n")
    (tree / "d").symlink_to("real")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for target in ("real", str(outside)):
                (tree / "d.tmp").symlink_to(target)
                os.replace(tree / "d.tmp", tree / "d")

    swapper = threading.Thread(target=swap)
    swapper.start()
    texts: list[str] = []
    codes: set[str] = set()
    try:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                texts.append(fetch(tree, "files.read", path="d/passwd")["text"])
            except ProviderError as e:
                codes.add(e.code)  # a link caught mid-swap: refused, or gone
    finally:
        stop.set()
        swapper.join()
    assert "innocent\n" in texts  # the race was run, not only refused
    assert codes <= {"HZ727", "HZ722"}
    assert texts.count("root:x:0:0\n") == 0


def test_repeated_double_stars_walk_the_tree_once(tmp_path: Path) -> None:
    (tmp_path / "deep" / ("d/" * 60)).mkdir(parents=True)
    started = time.monotonic()
    pattern = "**/**/**/**/**/**/**/**/*.nomatch"
    assert fetch(tmp_path, "files.glob", pattern=pattern) == []
    assert time.monotonic() - started < 1


def test_the_deadline_is_checked_while_nothing_matches(tmp_path: Path) -> None:
    for n in range(50):
        (tmp_path / f"{n}.txt").write_text("")
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0  # one second per look: the 30 s deadline passes mid-walk
        return now[0]

    assert refused(tmp_path, "files.glob", clock=clock, pattern="*.nomatch") == (
        "HZ726",
        "matching '*.nomatch' did not end in time",
    )


def test_the_walk_is_capped_in_entries_and_depth(tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"{n}.txt").write_text("")
    (tmp_path / "a" / "b" / "c" / "d").mkdir(parents=True)
    assert refused(tmp_path, "files.glob", {"max_entries": 20}, pattern="**/*.md") == (
        "HZ725",
        "matching '**/*.md' looked at more than 20 entries of the tree",
    )
    assert refused(tmp_path, "files.glob", {"max_depth": 2}, pattern="**/*.md") == (
        "HZ725",
        "matching '**/*.md' goes deeper than 2 directories (at 'a/b/c')",
    )
    assert fetch(tmp_path, "files.glob", {"max_depth": 2}, pattern="*.md") == []


def test_links_a_pattern_meets_are_left_out_or_refused_precisely(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret-name.txt").write_text("")
    tree = tmp_path / "tree"
    (tree / "d2" / "sub").mkdir(parents=True)
    (tree / "d2" / "sub" / "f.md").write_text("hi\n")
    (tree / "d2" / "link").symlink_to("sub")  # a directory inside: left out, as directories
    (tree / "d2" / "broken").symlink_to("nonexistent")  # dangling: left out
    (tree / "d2" / "alias.md").symlink_to("sub/f.md")  # a file inside: read
    assert fetch(tree, "files.glob", pattern="d2/*") == [{"path": "d2/alias.md", "text": "hi\n"}]
    assert paths(fetch(tree, "files.glob", pattern="d2/**/*")) == ["d2/alias.md", "d2/sub/f.md"]
    (tree / "d2" / "out").symlink_to(outside)
    # never listed through the link; named, it is refused without showing what is outside
    assert fetch(tree, "files.glob", pattern="d2/out/*") == []
    code, message = refused(tree, "files.glob", pattern="d2/*")
    assert (code, message) == (
        "HZ727",
        "'d2/out' cannot be read: a symbolic link that leads out of the working directory "
        f"(to {str(outside)!r})",
    )
    assert "secret-name" not in message


def test_a_long_path_is_cut_in_messages(tmp_path: Path) -> None:
    path = "/".join(["x"] * 2000)
    assert refused(tmp_path, "files.read", path=path) == (
        "HZ722",
        f"{path[:159] + '…'!r} does not exist in the working directory",
    )


def test_a_file_name_that_is_not_utf8_is_named_escaped(tmp_path: Path) -> None:
    (tmp_path / "u").mkdir()
    (tmp_path / "u" / "ok.md").write_text("ok\n")
    with open(os.path.join(os.fsencode(tmp_path), b"u", b"bad\xff.md"), "wb") as f:
        f.write(b"x")
    assert refused(tmp_path, "files.glob", pattern="u/*") == (
        "HZ722",
        "'u/bad\\xff.md' has a name that is not UTF-8: only files whose path is text are read",
    )
    assert paths(fetch(tmp_path, "files.glob", pattern="u/o*")) == ["u/ok.md"]
    assert refused(tmp_path, "files.read", path="u/bad\udcff.md") == (
        "HZ727",
        "the path 'u/bad\\udcff.md' is not text: it holds a lone surrogate",
    )


def test_link_loops_and_climbing_targets_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "up").symlink_to("../../etc/passwd")
    assert refused(tmp_path, "files.read", path="a") == (
        "HZ727",
        "'a' cannot be read: more than 40 symbolic links on the way",
    )
    assert refused(tmp_path, "files.read", path="docs/up") == (
        "HZ727",
        "'docs/up' cannot be read: a symbolic link that leads out of the working directory "
        "(to '../../etc/passwd')",
    )
    assert refused(tmp_path / "missing", "files.read", path="x")[0] == "HZ722"


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

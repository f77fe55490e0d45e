"""The working directory's own repository, and paths inside it."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from hz.runtime.artifacts.printable import printable
from hz.runtime.providers.git.parsing import unreadable
from hz.runtime.providers.git.running import HELPER_BYTES, Git
from hz.runtime.providers.protocol import HZ727, ProviderError

#: The most of a linked worktree's ``gitdir`` file read: one path.
_BACK_LINK_BYTES = 64 * 1024


def check_own_repository(git: Git, *, allow_other_git_dir: bool) -> None:
    """The working directory is in a repository whose git directory is its own: inside
    the work tree, or one that records this work tree (a linked worktree's ``gitdir``
    file, a submodule's directory inside its superproject's work tree)."""
    asked = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir"]
    lines = git.read(asked, HELPER_BYTES).decode("utf-8", errors="surrogateescape").split("\n")
    if len(lines) < 2:
        raise unreadable("rev-parse did not name the work tree and the git directory")
    top, git_dir = Path(lines[0]).resolve(), Path(lines[1]).resolve()
    if allow_other_git_dir or git_dir.is_relative_to(top):
        return
    if _links_back(top, git_dir) or git_dir.is_relative_to(_superproject(git)):
        return
    raise ProviderError(
        HZ727,
        f"the repository's git directory {printable(str(git_dir))!r} is outside its work "
        f"tree {printable(str(top))!r}: a .git file there points elsewhere",
        hint="run hz in a checkout whose .git is its own, or set [providers.git] "
        "allow_other_git_dir = true if that repository is meant to be read",
    )


def _superproject(git: Git) -> Path:
    """The work tree of the repository this one is a submodule of; ``/nonexistent``
    when it is none. Asked only when needed: git runs in the parent directory for it."""
    asked = ["rev-parse", "--show-superproject-working-tree"]
    said = git.read(asked, HELPER_BYTES).decode("utf-8", errors="surrogateescape").strip()
    return Path(said).resolve() if said else Path("/nonexistent/superproject")


def check_not_option(value: object, key: str) -> None:
    if isinstance(value, str) and value.startswith("-"):
        raise ProviderError(
            HZ727,
            f"the {key} {printable(value)!r} starts with '-': git would read it as an option",
        )


def _links_back(top: Path, git_dir: Path) -> bool:
    """Whether ``git_dir`` is a linked worktree's whose ``gitdir`` file (git writes the path
    of the work tree's ``.git`` file there) names ``top``."""
    try:
        with open(git_dir / "gitdir", "rb") as file:
            back = file.read(_BACK_LINK_BYTES).decode("utf-8", errors="surrogateescape").strip()
    except OSError:
        return False
    return bool(back) and Path(back).resolve() == top / ".git"


def inside(path: str) -> str:
    normal = posixpath.normpath(path)
    if os.path.isabs(path) or normal == ".." or normal.startswith("../"):
        raise ProviderError(
            HZ727,
            f"the path {printable(path)!r} is outside the working directory",
            hint="give a path relative to the working directory, inside it",
        )
    return normal

"""The ``git`` provider: ``git.log``, ``git.diff`` and ``git.changed_files`` of the working
directory's repository, read with the real git CLI.

git runs through the process chokepoint (``hz.runtime.providers.child``) in the run's working
directory, which must be in a git repository. What it may do is narrowed on every call:

- Environment: only hz's allowlist (PATH, HOME, TMPDIR, the locale); no ``GIT_*`` variable of
  hz's environment (``GIT_DIR``, ``GIT_CONFIG_*``, ``GIT_EXEC_PATH`` would point git
  elsewhere). hz sets ``GIT_CONFIG_NOSYSTEM=1``, ``GIT_TERMINAL_PROMPT=0``,
  ``GIT_OPTIONAL_LOCKS=0`` (a read never takes the index lock), ``GIT_NO_LAZY_FETCH=1`` and
  ``LC_ALL=C`` (git's messages in English, as hz quotes them).
- Nothing runs but git: ``--no-pager``, ``-c core.pager=cat``, ``-c core.fsmonitor=false``,
  ``-c log.showSignature=false`` (no gpg), ``-c protocol.allow=never`` (a partial clone's
  missing object is an error, never a download), ``--no-ext-diff --no-textconv``, and no
  command that runs hooks. A diff always compares two commits, never the working tree, so no
  clean filter runs either: each side of a range is resolved to a commit first
  (``rev-parse --verify``), and git diff gets the two hashes and ``--`` (three arguments, a
  shape git never reads as ``--no-index``, which would compare files of the disk).
- Only the working directory's own repository: every fetch first asks git for the work tree
  and the git directory (``rev-parse``); outside a repository nothing else runs, and a git
  directory outside the work tree (a planted ``.git`` file, ``gitdir: /elsewhere``) is refused
  unless git records this work tree there (a linked worktree, a submodule) or the operator
  allows it (``allow_other_git_dir``).
- Output is parsed, never guessed: ``git.log`` reads a ``--format`` of fields separated by NUL
  (``-z``); git ends a commit's message at a NUL byte, so no commit text can shift a field.
  ``changed_files`` reads ``--name-status -z``.
- Arguments are never options: a ``range`` or ``path`` that starts with ``-`` is refused
  (``HZ727``), revisions follow ``--end-of-options`` and paths follow ``--`` as literal
  pathspecs (``--literal-pathspecs``: no glob, no ``:(magic)``), and a path must stay inside
  the working directory.

Text git prints that is not UTF-8 (an author name, a file name) is decoded with U+FFFD for
each byte that is not. docs/providers-git-command.md documents the operations and what hz
relies on (git's own ``safe.directory`` ownership check).
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field

from hz.runtime.artifacts.operations import CATALOG, Operation, Window
from hz.runtime.artifacts.printable import printable
from hz.runtime.process.bounded import ProcessOutcome, run_bounded
from hz.runtime.process.environment import child_environment
from hz.runtime.process.limits import Limits
from hz.runtime.providers import child
from hz.runtime.providers.fit import fitted
from hz.runtime.providers.protocol import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    HZ721,
    HZ722,
    HZ724,
    HZ725,
    HZ727,
    FetchRequest,
    ProviderError,
    ProviderSettings,
    Readiness,
)
from hz.runtime.settings.model import Flag, PathString

#: The oldest git with ``--since-as-filter`` (a window that does not stop at the first older
#: commit) and ``--end-of-options``.
MIN_VERSION = (2, 37)
#: ``git.log`` without ``max_commits``.
DEFAULT_MAX_COMMITS = 1000

#: Given to every git command before its own options.
HARDENING: tuple[str, ...] = (
    "--no-pager",
    "--literal-pathspecs",
    "-c",
    "core.pager=cat",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "log.showSignature=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "color.ui=never",
    "-c",
    "i18n.logOutputEncoding=UTF-8",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "diff.relative=false",
)
_ENVIRONMENT = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "LC_ALL": "C",
}
#: A commit's fields as ``git.log`` asks for them: hash, author, email, committer time (Unix
#: seconds), subject, body. ``-z`` ends each commit with a NUL.
_FIELDS = ("%H", "%an", "%ae", "%ct", "%s", "%b")
_LOG_FORMAT = "%x00".join(_FIELDS)
_HASH = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
_VERSION = re.compile(r"git version (\d+)\.(\d+)")
#: A side of a range that reads as a path: git names a revision without ``./`` or ``../``
#: steps (``HEAD:../x`` names a file, never a commit; ``/etc/`` no revision at all).
_PATH_LIKE = re.compile(r"(?:^|/)\.\.?(?:/|$)")
#: The most of a linked worktree's ``gitdir`` file read: one path.
_BACK_LINK_BYTES = 64 * 1024
#: The output cap of the commands that only name the repository or a commit (paths,
#: hashes): not the fetch's, which a small ``max_bytes`` would make too small for a path.
_HELPER_BYTES = 64 * 1024
_READY_TIMEOUT = 10.0


class GitSettings(ProviderSettings):
    table = "providers.git"

    executable: Annotated[
        PathString,
        Field(description="the git program: a name found on `PATH`, or an absolute path"),
    ] = "git"
    timeout_seconds: Annotated[
        child.TimeoutSeconds,
        Field(description="how long one git command may run; then its process group is stopped"),
    ] = DEFAULT_TIMEOUT_SECONDS
    max_bytes: Annotated[
        child.MaxBytes,
        Field(
            description="the most git output one fetch reads (the fetch's own cap applies too): "
            "`git.diff` is cut so that its value fits as JSON, `git.log` and "
            "`git.changed_files` fail (HZ725)"
        ),
    ] = DEFAULT_MAX_BYTES
    allow_other_git_dir: Annotated[
        Flag,
        Field(
            description="let a `.git` file send git to a git directory outside the work tree "
            "that does not record this work tree as its own (a linked worktree or a submodule "
            "needs no such leave)"
        ),
    ] = False


class GitProvider:
    """The repository of the working directory, through the git CLI."""

    name: ClassVar[str] = "git"
    capabilities: ClassVar[tuple[str, ...]] = ("git",)
    settings_model: ClassVar[type[GitSettings]] = GitSettings

    def __init__(self, settings: GitSettings) -> None:
        self.settings = settings

    def operations(self) -> Mapping[str, Operation]:
        return {name: op for name, op in CATALOG.items() if op.capability == "git"}

    def ready(self, *, online: bool = False) -> Readiness:
        """Whether git starts and is new enough. ``online`` changes nothing: git reads only
        the local repository."""
        try:
            outcome = run_bounded(
                [self.settings.executable, "--version"],
                stdin=None,
                cwd="/",
                env=_environment(),
                limits=Limits(timeout=_READY_TIMEOUT, max_stdout=4096, max_stderr=4096),
            )
        except Exception as e:  # ready never raises: a failure is a reason
            return Readiness(False, f"git could not be run: {printable(str(e))}")
        return _readiness(outcome)

    def fetch(self, request: FetchRequest) -> Any:
        name = request.operation.name
        args = request.args
        for key in ("range", "path"):
            _check_not_option(args.get(key), key)
        if name not in ("git.log", "git.diff", "git.changed_files"):
            raise ProviderError(HZ721, f"the git provider has no operation {printable(name)!r}")
        self._own_repository(request)
        if name == "git.log":
            return self._log(request)
        if name == "git.diff":
            return self._diff(request)
        return self._changed_files(request)

    # -- the operations ------------------------------------------------------------------

    def _log(self, request: FetchRequest) -> list[dict[str, str]]:
        args = request.args
        asked = args.get("max_commits")
        # Without max_commits, one more than the default is asked for: a log that would be
        # cut silently fails instead (the agent would take a partial history for all of it).
        count = DEFAULT_MAX_COMMITS + 1 if asked is None else asked
        argv = [
            "log",
            "-z",
            f"--format={_LOG_FORMAT}",
            f"--max-count={count}",
            *_window_options(request.window),
            "--end-of-options",
            args.get("range", "HEAD"),
            *self._paths(request),
        ]
        commits = _commits(self._read(request, argv))
        if asked is None and len(commits) > DEFAULT_MAX_COMMITS:
            raise ProviderError(
                HZ725,
                f"more than {DEFAULT_MAX_COMMITS} commits",
                hint="narrow the range, the window or the path, or set max_commits to take "
                "the newest ones only",
            )
        return commits

    def _diff(self, request: FetchRequest) -> dict[str, Any]:
        text_range = request.args["range"]
        argv = [
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--find-renames",
            "--end-of-options",
            *self._sides(request, text_range),
            *self._paths(request),
        ]
        outcome = self._run(request, argv)
        truncated = outcome.stdout_truncated
        if not truncated or not (outcome.exit_code is None and outcome.stopped_over_cap):
            # A diff cut at the cap was stopped by hz; any other end is git's own to explain.
            _check(outcome)
        out = _whole_chars(outcome.stdout) if truncated else outcome.stdout
        value = {"range": text_range, "diff": _text(out), "truncated": truncated}
        return fitted(value, "diff", self._cap(request))

    def _changed_files(self, request: FetchRequest) -> list[dict[str, str]]:
        text_range = request.args.get("range")
        if text_range is not None:
            argv = [
                "diff",
                "--name-status",
                "-z",
                "--no-renames",
                "--no-ext-diff",
                "--no-textconv",
                "--end-of-options",
                *self._sides(request, text_range),
                *self._paths(request),
            ]
            return [
                {"path": path, "status": status}
                for status, path in _name_status(self._read(request, argv))
            ]
        if request.window is None:
            raise ProviderError(
                HZ727,
                "git.changed_files needs a range (such as main..HEAD) or a window",
                hint="give the input args: {range: ...} or a window: 7d",
            )
        argv = [
            "log",
            "-z",
            "--name-status",
            "--format=",
            "--no-renames",
            *_window_options(request.window),
            "--end-of-options",
            "HEAD",
            *self._paths(request),
        ]
        return _net_changes(_name_status(self._read(request, argv)))

    # -- running git ---------------------------------------------------------------------

    def _paths(self, request: FetchRequest) -> list[str]:
        path = request.args.get("path")
        if path is None:
            return ["--"]
        return ["--", _inside(path, request)]

    def _own_repository(self, request: FetchRequest) -> None:
        """The working directory is in a repository whose git directory is its own: inside
        the work tree, or one that records this work tree (a linked worktree's ``gitdir``
        file, a submodule's directory inside its superproject's work tree)."""
        asked = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir"]
        lines = (
            self._read(request, asked, _HELPER_BYTES)
            .decode("utf-8", errors="surrogateescape")
            .split("\n")
        )
        if len(lines) < 2:
            raise _unreadable("rev-parse did not name the work tree and the git directory")
        top, git_dir = Path(lines[0]).resolve(), Path(lines[1]).resolve()
        if self.settings.allow_other_git_dir or git_dir.is_relative_to(top):
            return
        if _links_back(top, git_dir) or git_dir.is_relative_to(self._superproject(request)):
            return
        raise ProviderError(
            HZ727,
            f"the repository's git directory {printable(str(git_dir))!r} is outside its work "
            f"tree {printable(str(top))!r}: a .git file there points elsewhere",
            hint="run hz in a checkout whose .git is its own, or set [providers.git] "
            "allow_other_git_dir = true if that repository is meant to be read",
        )

    def _superproject(self, request: FetchRequest) -> Path:
        """The work tree of the repository this one is a submodule of; ``/nonexistent``
        when it is none. Asked only when needed: git runs in the parent directory for it."""
        asked = ["rev-parse", "--show-superproject-working-tree"]
        said = (
            self._read(request, asked, _HELPER_BYTES)
            .decode("utf-8", errors="surrogateescape")
            .strip()
        )
        return Path(said).resolve() if said else Path("/nonexistent/superproject")

    def _sides(self, request: FetchRequest, text_range: str) -> list[str]:
        """The two commits ``A..B`` or ``A...B`` compares, as hashes (``A...B``: the merge
        base of A and B, and B; an empty side is ``HEAD``)."""
        split = "..." if "..." in text_range else ".."
        if split not in text_range:
            raise ProviderError(
                HZ727,
                f"the range {printable(text_range)!r} is one revision: a diff compares two, "
                "such as main..HEAD",
                hint=f"write {printable(text_range)}^..{printable(text_range)} for its own change",
            )
        left, _, right = text_range.partition(split)
        base, tip = (self._commit(request, text_range, side or "HEAD") for side in (left, right))
        if split == "...":
            argv = ["merge-base", "--end-of-options", base, tip]
            outcome = self._run(request, argv, _HELPER_BYTES)
            if outcome.exit_code == 1 and not outcome.stdout.strip():
                raise ProviderError(
                    HZ722,
                    f"the sides of the range {printable(text_range)!r} have no common commit",
                    hint="write A..B to compare the two commits themselves",
                )
            _check(outcome)
            base = outcome.stdout.decode("ascii", errors="replace").strip()
            if outcome.stdout_truncated or not _HASH.fullmatch(base.encode()):
                raise _unreadable("merge-base did not print a commit")
        return [base, tip]

    def _commit(self, request: FetchRequest, text_range: str, side: str) -> str:
        if side.startswith(("/", "-")) or _PATH_LIKE.search(side):
            raise ProviderError(
                HZ727,
                f"the range {printable(text_range)!r} names a path ({printable(side)!r}), not "
                "a revision",
                hint="give revisions, such as main..HEAD or v1.2...v1.3",
            )
        outcome = self._run(
            request,
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{side}^{{commit}}"],
            _HELPER_BYTES,
        )
        commit = outcome.stdout.strip()
        if outcome.exit_code == 1:  # --verify: not a valid object of that type
            raise ProviderError(
                HZ722,
                f"{printable(side)!r} of the range {printable(text_range)!r} is no commit of "
                "the repository",
                hint="check the revision's name (a branch, a tag, a hash)",
            )
        _check(outcome)
        if outcome.stdout_truncated or not _HASH.fullmatch(commit):
            raise _unreadable("rev-parse did not print a commit")
        return commit.decode("ascii")

    def _cap(self, request: FetchRequest) -> int:
        return min(self.settings.max_bytes, request.max_bytes)

    def _run(
        self, request: FetchRequest, argv: list[str], cap: int | None = None
    ) -> ProcessOutcome:
        """git with ``argv``, its output capped at ``cap`` (default: the fetch's)."""
        return child.run(
            [self.settings.executable, *HARDENING, *argv],
            request=request,
            stdin=None,
            env=_environment(),
            timeout=self.settings.timeout_seconds,
            max_bytes=self._cap(request) if cap is None else cap,
            program="git",
        )

    def _read(self, request: FetchRequest, argv: list[str], cap: int | None = None) -> bytes:
        outcome = self._run(request, argv, cap)
        if outcome.stdout_truncated:
            raise ProviderError(
                HZ725,
                f"git printed more than {self._cap(request) if cap is None else cap} bytes",
                hint="narrow the range, the window or the path, or lower max_commits",
            )
        _check(outcome)
        return outcome.stdout


def _environment() -> dict[str, str]:
    return child_environment(extra=_ENVIRONMENT)


def _readiness(outcome: ProcessOutcome) -> Readiness:
    if outcome.launch_error is not None:
        return Readiness(False, f"git did not start: {printable(outcome.launch_error)}")
    said = outcome.stdout.decode("utf-8", errors="replace").strip()
    match = _VERSION.match(said)
    if outcome.exit_code != 0 or match is None:
        return Readiness(False, f"git --version {outcome.describe_exit()}: {printable(said)}")
    version = (int(match[1]), int(match[2]))
    if version < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        return Readiness(False, f"{printable(said)} is older than git {need}, which hz needs")
    return Readiness(True, printable(said))


def _check(outcome: ProcessOutcome) -> None:
    if outcome.exit_code == 0:
        return
    said = outcome.stderr.decode("utf-8", errors="replace")
    if "not a git repository" in said:
        raise ProviderError(
            HZ722,
            "the working directory is not in a git repository",
            hint="run hz in a git checkout, or bind the git capability to another provider",
        )
    if "dubious ownership" in said:
        raise ProviderError(
            HZ722,
            "git refuses the repository: it is owned by another user (dubious ownership)",
            hint="run hz as the repository's owner, or list it in safe.directory of your "
            "global git configuration (see `git help config`)",
        )
    child.check_exit(outcome, "git")


def _check_not_option(value: object, key: str) -> None:
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


def _inside(path: str, request: FetchRequest) -> str:
    normal = posixpath.normpath(path)
    if os.path.isabs(path) or normal == ".." or normal.startswith("../"):
        raise ProviderError(
            HZ727,
            f"the path {printable(path)!r} is outside the working directory",
            hint="give a path relative to the working directory, inside it",
        )
    return normal


def _window_options(window: Window | None) -> list[str]:
    """Commits whose committer time is in ``[since, until)``. ``--since-as-filter`` keeps
    walking past an older commit (``--since`` stops there); git's times are whole seconds."""
    if window is None:
        return []
    since = math.ceil(window.since.timestamp())
    until = math.ceil(window.until.timestamp()) - 1
    return [f"--since-as-filter=@{since}", f"--until=@{until}"]


def _commits(out: bytes) -> list[dict[str, str]]:
    fields = out.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    size = len(_FIELDS)
    if len(fields) % size:
        raise _unreadable("a commit record has the wrong number of fields")
    commits = []
    for start in range(0, len(fields), size):
        commit, author, email, seconds, subject, body = fields[start : start + size]
        if not _HASH.fullmatch(commit) or not seconds.isdigit():
            raise _unreadable("a commit record does not start with a hash and a time")
        when = datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        commits.append(
            {
                "commit": commit.decode("ascii"),
                "author": _text(author),
                "email": _text(email),
                "date": when,
                "subject": _text(subject),
                "body": _text(body).rstrip("\n"),
            }
        )
    return commits


def _name_status(out: bytes) -> list[tuple[str, str]]:
    """``STATUS NUL PATH NUL`` pairs (renames are off, so every record has one path)."""
    fields = out.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 2:
        raise _unreadable("a --name-status record has no path")
    pairs = []
    for start in range(0, len(fields), 2):
        status = fields[start].decode("ascii", errors="replace")
        if not re.fullmatch(r"[A-Z][0-9]{0,3}", status):
            raise _unreadable(f"{printable(status)!r} is no file status")
        pairs.append((status[0], _text(fields[start + 1])))
    return pairs


def _net_changes(newest_first: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Each path once, with its change across the window: the commits' statuses (newest
    first) folded from the oldest to the newest. A file added and then deleted in the window
    is left out; deleted and added again is modified."""
    newest: dict[str, str] = {}
    oldest: dict[str, str] = {}
    for status, path in newest_first:
        newest.setdefault(path, status)
        oldest[path] = status
    changes = []
    for path, last in newest.items():
        first = oldest[path]
        if first == "A":
            if last == "D":
                continue
            status = "A"
        elif last == "D":
            status = "D"
        elif first == "D":
            status = "M"
        else:
            status = last
        changes.append({"path": path, "status": status})
    return sorted(changes, key=lambda change: change["path"])


def _whole_chars(data: bytes) -> bytes:
    """``data`` without an incomplete UTF-8 sequence at its end (where a cap cut it)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _unreadable(why: str) -> ProviderError:
    return ProviderError(
        HZ724, f"git's output could not be read: {why}", hint="report this with your git version"
    )

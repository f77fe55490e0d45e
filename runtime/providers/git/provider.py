"""The git provider: its three operations over the pieces of this package."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.printable import printable
from hz.runtime.process.bounded import run_bounded
from hz.runtime.process.limits import Limits
from hz.runtime.providers.fit import fitted
from hz.runtime.providers.git.parsing import (
    LOG_FORMAT,
    commits,
    name_status,
    net_changes,
    text,
    whole_chars,
    window_options,
)
from hz.runtime.providers.git.repository import check_not_option, check_own_repository, inside
from hz.runtime.providers.git.revisions import sides
from hz.runtime.providers.git.running import Git, check, environment, readiness
from hz.runtime.providers.git.settings import GitSettings
from hz.runtime.providers.protocol import (
    HZ721,
    HZ725,
    HZ727,
    FetchRequest,
    ProviderError,
    Readiness,
)

#: ``git.log`` without ``max_commits``.
DEFAULT_MAX_COMMITS = 1000
_READY_TIMEOUT = 10.0


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
                env=environment(),
                limits=Limits(timeout=_READY_TIMEOUT, max_stdout=4096, max_stderr=4096),
            )
        except Exception as e:  # ready never raises: a failure is a reason
            return Readiness(False, f"git could not be run: {printable(str(e))}")
        return readiness(outcome)

    def fetch(self, request: FetchRequest) -> Any:
        name = request.operation.name
        args = request.args
        for key in ("range", "path"):
            check_not_option(args.get(key), key)
        if name not in ("git.log", "git.diff", "git.changed_files"):
            raise ProviderError(HZ721, f"the git provider has no operation {printable(name)!r}")
        git = Git(self.settings, request)
        check_own_repository(git, allow_other_git_dir=self.settings.allow_other_git_dir)
        if name == "git.log":
            return _log(git)
        if name == "git.diff":
            return _diff(git)
        return _changed_files(git)


def _log(git: Git) -> list[dict[str, str]]:
    args = git.request.args
    asked = args.get("max_commits")
    # Without max_commits, one more than the default is asked for: a log that would be
    # cut silently fails instead (the agent would take a partial history for all of it).
    count = DEFAULT_MAX_COMMITS + 1 if asked is None else asked
    argv = [
        "log",
        "-z",
        f"--format={LOG_FORMAT}",
        f"--max-count={count}",
        *window_options(git.request.window),
        "--end-of-options",
        args.get("range", "HEAD"),
        *_paths(git.request),
    ]
    found = commits(git.read(argv))
    if asked is None and len(found) > DEFAULT_MAX_COMMITS:
        raise ProviderError(
            HZ725,
            f"more than {DEFAULT_MAX_COMMITS} commits",
            hint="narrow the range, the window or the path, or set max_commits to take "
            "the newest ones only",
        )
    return found


def _diff(git: Git) -> dict[str, Any]:
    text_range = git.request.args["range"]
    argv = [
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--find-renames",
        "--end-of-options",
        *sides(git, text_range),
        *_paths(git.request),
    ]
    outcome = git.run(argv)
    truncated = outcome.stdout_truncated
    if not truncated or not (outcome.exit_code is None and outcome.stopped_over_cap):
        # A diff cut at the cap was stopped by hz; any other end is git's own to explain.
        check(outcome)
    out = whole_chars(outcome.stdout) if truncated else outcome.stdout
    value = {"range": text_range, "diff": text(out), "truncated": truncated}
    return fitted(value, "diff", git.cap)


def _changed_files(git: Git) -> list[dict[str, str]]:
    request = git.request
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
            *sides(git, text_range),
            *_paths(request),
        ]
        return [{"path": path, "status": status} for status, path in name_status(git.read(argv))]
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
        *window_options(request.window),
        "--end-of-options",
        "HEAD",
        *_paths(request),
    ]
    return net_changes(name_status(git.read(argv)))


def _paths(request: FetchRequest) -> list[str]:
    path = request.args.get("path")
    if path is None:
        return ["--"]
    return ["--", inside(path)]

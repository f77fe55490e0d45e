"""Running git: the hardened command line and environment, one bounded command of a fetch,
and git's errors as ``ProviderError``."""

from __future__ import annotations

import re

from hz.runtime.artifacts.printable import printable
from hz.runtime.process.bounded import ProcessOutcome
from hz.runtime.process.environment import child_environment
from hz.runtime.providers import child
from hz.runtime.providers.git.settings import GitSettings
from hz.runtime.providers.protocol import HZ722, HZ725, FetchRequest, ProviderError, Readiness

#: The oldest git with ``--since-as-filter`` (a window that does not stop at the first older
#: commit) and ``--end-of-options``.
MIN_VERSION = (2, 37)

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
_VERSION = re.compile(r"git version (\d+)\.(\d+)")
#: The output cap of the commands that only name the repository or a commit (paths,
#: hashes): not the fetch's, which a small ``max_bytes`` would make too small for a path.
HELPER_BYTES = 64 * 1024


class Git:
    """The git commands of one fetch: in its working directory, under its deadline, each
    output capped at the fetch's cap unless said otherwise."""

    def __init__(self, settings: GitSettings, request: FetchRequest) -> None:
        self.settings = settings
        self.request = request

    @property
    def cap(self) -> int:
        return min(self.settings.max_bytes, self.request.max_bytes)

    def run(self, argv: list[str], cap: int | None = None) -> ProcessOutcome:
        """git with ``argv``, its output capped at ``cap`` (default: the fetch's)."""
        return child.run(
            [self.settings.executable, *HARDENING, *argv],
            request=self.request,
            stdin=None,
            env=environment(),
            timeout=self.settings.timeout_seconds,
            max_bytes=self.cap if cap is None else cap,
            program="git",
        )

    def read(self, argv: list[str], cap: int | None = None) -> bytes:
        """git's output of ``argv``; ``HZ725`` past the cap, git's error as ``check`` says."""
        outcome = self.run(argv, cap)
        if outcome.stdout_truncated:
            raise ProviderError(
                HZ725,
                f"git printed more than {self.cap if cap is None else cap} bytes",
                hint="narrow the range, the window or the path, or lower max_commits",
            )
        check(outcome)
        return outcome.stdout


def environment() -> dict[str, str]:
    return child_environment(extra=_ENVIRONMENT)


def readiness(outcome: ProcessOutcome) -> Readiness:
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


def check(outcome: ProcessOutcome) -> None:
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

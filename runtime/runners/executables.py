"""Finding an agent CLI and judging its version: shared by the runners that wrap one."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

from hz.runtime.process.bounded import Limits, ProcessOutcome, run_bounded, search_path
from hz.runtime.runners.protocol import Check

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
#: A doctor's probe (``--version``, a login status): quick and small, or it is broken.
PROBE_SECONDS = 30.0
_PROBE_LIMITS = Limits(timeout=PROBE_SECONDS, max_stdout=64 * 1024, max_stderr=64 * 1024)


def probe(
    executable: str, args: list[str], env: Mapping[str, str], cwd: str | None = None
) -> ProcessOutcome:
    """Run ``executable args`` for a doctor check, bounded, in ``cwd`` (default: home)."""
    return run_bounded(
        [executable, *args],
        stdin=None,
        cwd=cwd or os.path.expanduser("~"),
        env=dict(env),
        limits=_PROBE_LIMITS,
    )


def which(name: str, env: Mapping[str, str]) -> str | None:
    """A bare program name looked up in the absolute entries of the child's PATH."""
    found = shutil.which(name, path=search_path(env))
    return os.path.abspath(found) if found else None


def resolve_executable(name: str, env: Mapping[str, str]) -> str | None:
    """An absolute path, found before the run changes directory: a relative path is taken
    from hz's own working directory, a bare name from the absolute entries of the child's PATH
    (``search_path``)."""
    if os.sep in name:
        path = os.path.abspath(os.path.expanduser(name))
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return which(name, env)


def why_unusable(name: str) -> str:
    """Why ``resolve_executable`` found nothing, in the words a user needs."""
    if os.sep not in name:
        return "program not found on PATH"
    path = os.path.abspath(os.path.expanduser(name))
    if os.path.isdir(path):
        return "is a directory"
    if os.path.exists(path):
        return "is not executable"
    return "program not found"


def unusable(name: str) -> str:
    """``name`` and why ``resolve_executable`` found nothing, e.g. for ``launch_failed``."""
    return f"{name}: {why_unusable(name)}"


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first ``X.Y.Z`` in a CLI's ``--version`` output."""
    match = _VERSION.search(text)
    return None if match is None else (int(match[1]), int(match[2]), int(match[3]))


def judge_version(label: str, text: str, minimum: tuple[int, int, int]) -> Check:
    """The doctor line for a CLI that answered ``--version`` with ``text``."""
    version = parse_version(text)
    least = ".".join(map(str, minimum))
    if version is None:
        return Check(label, "failed", f"cannot read the version: {text.strip()[:200]}")
    shown = ".".join(map(str, version))
    if version < minimum:
        return Check(label, "failed", f"{shown} is older than the supported minimum {least}")
    return Check(label, "ok", f"{shown} (minimum {least})")

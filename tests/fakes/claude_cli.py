"""Finding the pinned ``claude`` binary for real-CLI tests, and watching the processes it starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import AGENT_CLIS

INSTALL_HINT = (
    "the pinned claude CLI is not installed: run `make agent-clis` "
    "(or .ci/install-agent-clis DIR and set HZ_AGENT_CLIS=DIR)"
)


def claude_binary() -> Path:
    """The pinned binary; a loud failure in CI when it is missing, a skip elsewhere."""
    path = AGENT_CLIS / "node_modules" / ".bin" / "claude"
    if path.is_file() and os.access(path, os.X_OK):
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{INSTALL_HINT} (looked for {path})")
    pytest.skip(f"{INSTALL_HINT} (looked for {path})")


def _environ(pid: str) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def _pgid(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after the command name (which may contain spaces) start past the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[2]) if fields[0] != "Z" else None


def processes_with_env(name: str, value: str) -> dict[int, dict[str, str]]:
    """Living processes whose environment has ``name=value`` (pid -> environment)."""
    found: dict[int, dict[str, str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            env = _environ(entry)
            if env.get(name) == value:
                found[int(entry)] = env
    return found


def group_of(pid: int) -> int | None:
    return _pgid(str(pid))


def living_in_groups(groups: set[int]) -> list[int]:
    """Pids of living (non-zombie) processes in any of ``groups``."""
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and _pgid(e) in groups]

"""What the end-to-end tests over local fakes share: no proxy between hz and a fake server, the
real ``claude`` CLI bound to the fake model (tests/fakes/claude_hz.py), and hz as a real
process."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_hz import workspace as claude_workspace


def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset the proxy variables: the fakes are local, with no proxy in between."""
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name)


def claude_runner_table(tmp_path: Path) -> str:
    """An operator file's ``[system]`` and ``[system.runner]`` tables that bind the real
    ``claude`` CLI (made under ``tmp_path/claude``) with one attempt a run: for a workspace's
    ``runner_table``."""
    (tmp_path / "claude").mkdir()
    claude = claude_workspace(tmp_path / "claude")
    runner_table = claude.config.read_text().partition("[system.runner]")[2]
    return f"\n[system]\nmax_attempts = 1\n\n[system.runner]{runner_table}"


def model_env(api: FakeAnthropic, env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with ``env`` over it, pointing the CLI at the fake model."""
    return {
        **os.environ,
        **env,
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "test-key",
    }


def hz_process(
    hz_argv: list[str],
    *args: str,
    env: Mapping[str, str],
    timeout: float,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``hz ARGS`` as a real process, its output captured as text."""
    return subprocess.run(
        [*hz_argv, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )

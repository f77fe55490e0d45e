"""Shared fixtures. Every test runs with a private HOME and no HZ_* configuration."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Where `.ci/install-agent-clis` put the pinned claude/codex (captured before HOME is isolated).
AGENT_CLIS = Path(os.environ.get("HZ_AGENT_CLIS", Path.home() / ".cache/hz/agent-clis"))


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A fresh HOME and XDG dirs per test; HZ_* variables from the developer's shell removed."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS"):
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("HZ_") or var.startswith("CLAUDE") or var.startswith("ANTHROPIC_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HZ_SITE_CONFIG", str(home / "no-site-config.toml"))
    return home


@pytest.fixture
def hz_argv() -> list[str]:
    """argv prefix that runs the hz CLI as a real process from this checkout."""
    return [sys.executable, "-m", "hz"]

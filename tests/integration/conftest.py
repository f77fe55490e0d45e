"""Fixtures for runs of the fake agent: secrets planted in hz's environment, and one check that
a run leaked none of them and left no process behind."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.agent import recorded_env, recorded_pids, survivors

#: Secrets an operator's shell typically holds: hz's own credentials and the vendors'.
SECRET_NAMES = (
    "HZ_CREDENTIAL_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
)

#: ``contained(env_out, pids)``: asserts the run recorded there got no planted secret and left
#: no process running.
Contained = Callable[[Path, Path], None]


@pytest.fixture
def planted_secrets(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The secrets, set in hz's environment with fresh values (after ``isolated_home`` cleared
    the developer's own)."""
    planted = {name: f"secret-{secrets.token_hex(16)}" for name in SECRET_NAMES}
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    return planted


@pytest.fixture
def contained(planted_secrets: dict[str, str]) -> Contained:
    def check(env_out: Path, pids: Path) -> None:
        env = recorded_env(env_out)
        assert sorted(set(env) & set(planted_secrets)) == []
        values = planted_secrets.values()
        assert sorted(n for n, v in env.items() if any(s in v for s in values)) == []
        assert recorded_pids(pids) != []
        assert survivors(pids) == []

    return check

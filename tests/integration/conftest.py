"""Fixtures for runs of the fake agent (secrets planted in hz's environment, and one check that
a run leaked none of them and left no process behind), for the run ledger's end-to-end tests
(both ledgers, the spaces' agents killed after a test) and for the real agent CLIs (the pinned
``codex``, its key, a working directory with a note to read)."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.agent import recorded_env, recorded_pids, survivors
from tests.fakes.claude_cli import processes_with_env
from tests.fakes.responses_server import codex_binary
from tests.helpers.ledger_env import Space

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


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working directory for a real agent CLI, with a note the fake model asks it to read."""
    path = tmp_path / "work"
    path.mkdir()
    (path / "notes.txt").write_text("the secret word is marmalade\n")
    return path


@pytest.fixture
def codex() -> Path:
    return codex_binary()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``FAKE_KEY`` for the fake Responses API, unique per test so that every process of the
    run can be found by it: none may be left once the test is done."""
    value = f"fake-key-{uuid.uuid4()}"
    monkeypatch.setenv("FAKE_KEY", value)
    yield value
    assert processes_with_env("FAKE_KEY", value) == {}


@pytest.fixture(params=["sqlite", "postgres"])
def dsn(request: pytest.FixtureRequest) -> str | None:
    """A test that takes it runs on both ledgers: None for SQLite, else a fresh PostgreSQL
    database's DSN."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("pg_dsn"))


@pytest.fixture
def cleanup() -> Iterator[list[Space]]:
    """The spaces a test appends here have their agents killed after it, even on failure."""
    spaces: list[Space] = []
    yield spaces
    for s in spaces:
        s.kill_recorded()

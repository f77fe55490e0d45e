"""Shared fixtures. Every test runs with a private HOME and no HZ_* configuration."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# A shell starts a background command (`make test &`) with SIGINT and SIGQUIT ignored, `nohup`
# ignores SIGHUP, and an ignored disposition survives exec: every hz the tests start would then
# ignore the signals the tests send it. Give them back their defaults (Python's handler for
# SIGINT).
for _signum, _default in (
    (signal.SIGINT, signal.default_int_handler),
    (signal.SIGQUIT, signal.SIG_DFL),
    (signal.SIGHUP, signal.SIG_DFL),
):
    if signal.getsignal(_signum) == signal.SIG_IGN:
        signal.signal(_signum, _default)

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
    for var in (
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CONFIG_DIRS",
    ):
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("HZ_") or var.startswith("CLAUDE") or var.startswith("ANTHROPIC_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HZ_SITE_CONFIG", str(home / "no-site-config.toml"))
    # Under GitHub Actions hz run frames a draft it prints for the log; a test says when it is.
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return home


@pytest.fixture(autouse=True)
def child_coverage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Coverage measures the Python children a test starts (``[tool.coverage.run] patch``: the
    variable ``COVERAGE_PROCESS_CONFIG`` that a child's environment inherits) only in tests
    marked ``child_coverage``: those whose children run code no test runs in process (a
    worker's loop and its faults, signal paths, the action's script). Elsewhere a measured
    ``python -m hz`` costs over half again its CPU for lines the in-process tests reach."""
    if request.node.get_closest_marker("child_coverage") is None:
        monkeypatch.delenv("COVERAGE_PROCESS_CONFIG", raising=False)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """One throwaway PostgreSQL cluster for the session (tests/pg.py), started on first use."""
    from tests.pg import cluster

    with cluster() as made:
        yield made


@pytest.fixture
def pg_dsn(pg_cluster: Any) -> Iterator[str]:
    """A fresh database of the session's cluster with hz's and procrastinate's schema."""
    name = pg_cluster.new_database()
    yield pg_cluster.dsn(name)
    pg_cluster.drop_database(name)


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def new_ledger(
    ledger_backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Any]]:
    """``new_ledger()``: a ledger on the backend under test (one database per test; every
    call a new handle on it, as another process would open)."""
    from hz.runtime.ledger.store import Ledger

    made: list[Any] = []

    if ledger_backend == "sqlite":

        def open_() -> Any:
            made.append(Ledger(tmp_path / "ledger.sqlite3"))
            return made[-1]

    else:
        from hz.runtime.ledger.pg.db import PgDb
        from hz.runtime.ledger.pg.dispatch import Procrastinate

        dsn = request.getfixturevalue("pg_dsn")

        def open_() -> Any:
            made.append(Ledger(PgDb(dsn, where="the test database"), dispatcher=Procrastinate(dsn)))
            return made[-1]

    yield open_
    for ledger in made:
        ledger.close()


@pytest.fixture
def hz_argv() -> list[str]:
    """argv prefix that runs the hz CLI as a real process from this checkout."""
    return [sys.executable, "-m", "hz"]


@dataclass(frozen=True)
class CliResult:
    """How one in-process ``hz`` invocation ended (named like ``subprocess.CompletedProcess``)."""

    returncode: int
    stdout: str
    stderr: str


#: ``cli(*args, stdin=None, cwd=None, env=None)``: run ``hz ARGS`` in this process.
Cli = Callable[..., CliResult]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``hz`` in this process, through the real entry point (``hz.cli.main``: the one error
    handler and its exit codes) with click's ``CliRunner`` isolation: the tier for what a
    command says. Tests of what only a real process shows (signals, a terminal, the process
    tree, the installed entry point) use ``hz_argv`` instead."""
    from tests.helpers.in_process import run_main

    def run(
        *args: str,
        stdin: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CliResult:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return run_main(args, stdin=stdin, env=env)

    return run


def default_receipt_dir() -> Path:
    """Where ``hz run`` chains receipts when nothing says otherwise, in a test: ``receipts/`` in
    the state directory of the isolated HOME (``platformdirs``' user state directory)."""
    return Path(os.environ["HOME"]) / ".local" / "state" / "hz" / "receipts"


@pytest.fixture
def small_disk() -> Iterator[Any]:
    """A small tmpfs of the test's own, to fill (``tests.helpers.faults.SmallDisk``)."""
    from tests.helpers.faults import small_disk as mount

    with mount() as disk:
        yield disk

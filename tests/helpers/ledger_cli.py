"""The run ledger's commands in process with the echo runner: a space (a contract, an operator
file binding the echo runner, a private state directory) and a way to edit a row as a hand (or
a newer hz) would."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import GREET


def echo_space(cli: Cli, tmp_path: Path, operator: str = "") -> Cli:
    """``hz`` in ``tmp_path`` with ``greet.yaml``, the echo runner bound (and ``operator``'s
    further lines) and the state directory ``tmp_path/s``."""
    (tmp_path / "greet.yaml").write_text(GREET)
    config = tmp_path / "operator.toml"
    config.write_text('[capabilities]\nagent_runner = "echo"\n' + operator)
    env = {"HZ_CONFIG": str(config), "HZ_STATE_DIR": str(tmp_path / "s")}

    def run(*args: str, **extra: str) -> CliResult:
        return cli(*args, cwd=tmp_path, env={**env, **extra})

    return run


def ledger_file(tmp_path: Path) -> Path:
    return tmp_path / "s" / "ledger.sqlite3"


def poke(tmp_path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    """Write to the space's ledger behind hz's back."""
    with contextlib.closing(sqlite3.connect(ledger_file(tmp_path))) as c:
        c.execute(sql, params)
        c.commit()


def worker_started(state_dir: Path, slots: int = 1, queues: str = "every queue") -> str:
    """The line ``hz worker`` starts with on a SQLite ledger in ``state_dir``."""
    noun = "slot" if slots == 1 else "slots"
    return (
        f"hz: worker: started: sqlite ledger {state_dir / 'ledger.sqlite3'}, {queues}, "
        f"{slots} {noun}\n"
    )

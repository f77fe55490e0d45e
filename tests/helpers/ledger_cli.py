"""The run ledger's commands in process with the echo runner: a space (a contract, an operator
file binding the echo runner, a private state directory), packets to create runs with, and a
way to edit a row as a hand (or a newer hz) would."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.models import Budget, Job, OutputSpec, Packet, SourceRef, ToolProfile
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


def packet(name: str = "greet", prompt: str = "Say hi.", max_usd: float = 0.5) -> Packet:
    job = Job(
        name=name,
        source=SourceRef(path=f"{name}.yaml", sha256="0" * 64),
        timeout_seconds=30,
        tools=ToolProfile(tools=("Read",)),
        budget=Budget(max_usd=max_usd),
        output=OutputSpec(),
        contract="Be brief.",
        template=prompt,
        hz_version="0.1.0",
    ).sealed()
    return Packet(
        job=job,
        prompt=prompt,
        contract="Be brief.",
        inputs_sha256="1" * 64,
        job_digest=job.digest,
        prompt_sha256=sha256_hex(prompt),
    )


def worker_started(state_dir: Path, slots: int = 1, queues: str = "every queue") -> str:
    """The line ``hz worker`` starts with on a SQLite ledger in ``state_dir``."""
    noun = "slot" if slots == 1 else "slots"
    return (
        f"hz: worker: started: sqlite ledger {state_dir / 'ledger.sqlite3'}, {queues}, "
        f"{slots} {noun}\n"
    )

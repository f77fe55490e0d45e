"""A chain of three jobs end to end through a real ``hz worker --schedules``: A runs by hand;
the worker queues B after it (B reads A's draft: ``read: contract:a``), then C after B. With
the echo runner, and with the real claude CLI against the fake model. The packets' sources
link the runs; the request keys say why each run was queued."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text
from tests.fakes.claude_hz import workspace
from tests.helpers.chains import CHAIN, write_project
from tests.helpers.ledger_env import DSN_VARIABLE, pg_rows, until
from tests.helpers.workers import running_worker


@dataclass(frozen=True)
class InDir:
    """hz as a real process in ``root`` with ``env``: the worker and the commands around it."""

    argv: list[str]
    root: Path
    env: dict[str, str]

    def popen(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.argv, *args],
            cwd=self.root,
            env={**self.env, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.argv, *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def kill_recorded(self) -> None:
        """The runs' agents end with their runs."""


def runs(state: Path) -> dict[str, dict[str, Any]]:
    with closing(sqlite3.connect(state / "ledger.sqlite3", timeout=30)) as c:
        c.row_factory = sqlite3.Row
        rows = c.execute("SELECT * FROM runs ORDER BY created_at").fetchall()
    return {row["job_name"]: dict(row) for row in rows}


def chain_through_a_worker(hz: InDir, state: Path, *worker_args: str) -> dict[str, dict[str, Any]]:
    compiled = hz.run("compile", "contracts", "--out", "build/jobs")
    assert compiled.returncode == 0, compiled.stderr
    first = hz.run("run", "build/jobs/a.job.json")
    assert first.returncode == 0, first.stderr

    def done() -> bool:
        found = runs(state)
        return found.get("c", {}).get("state") == "completed"

    with running_worker(hz, *worker_args) as worker:
        until(done, ceiling=90, what="c to complete")
    assert "hz: worker: firing 0 scheduled and 2 chained jobs of build/jobs\n" in worker.stderr
    found = runs(state)
    assert [found[name]["state"] for name in "abc"] == ["completed"] * 3
    a, b, c = (found[name] for name in "abc")
    assert b["request_key"] == f"after:{a['id']}:b"
    assert c["request_key"] == f"after:{b['id']}:c"
    sources = json.loads(b["packet_json"])["sources"]
    assert sources["upstream"]["job"] == "a"
    assert sources["upstream"]["run"] == a["id"]
    assert sources["upstream"]["provider"] == "ledger"
    draft_a = json.loads(a["result_json"])["draft"]
    assert json.loads(b["packet_json"])["inputs"] == {"upstream": draft_a}
    return found


@pytest.mark.child_coverage
def test_a_chain_with_the_echo_runner(hz_argv: list[str], tmp_path: Path) -> None:
    write_project(tmp_path, CHAIN)
    config = tmp_path / "operator.toml"
    # The jobs directory from the configuration this time (--schedules in the other test).
    config.write_text(
        '[capabilities]\nagent_runner = "echo"\n\n[system.schedules]\njobs = "build/jobs"\n'
    )
    state = tmp_path / "state"
    env = {**os.environ, "HZ_CONFIG": str(config), "HZ_STATE_DIR": str(state)}
    found = chain_through_a_worker(InDir(hz_argv, tmp_path, env), state)
    # The echo runner's draft is its prompt: B's prompt quoted A's.
    assert json.loads(found["b"]["result_json"])["draft"] == "Answer Say a."


@pytest.mark.real_cli
def test_a_chain_with_the_real_claude_cli(hz_argv: list[str], tmp_path: Path) -> None:
    space = workspace(tmp_path)
    write_project(tmp_path, CHAIN)
    state = tmp_path / "state"
    replies = [text("A found three rows."), text("B summarised them."), text("C is done.")]
    with FakeAnthropic(replies) as api:
        env = {
            **os.environ,
            "HZ_CONFIG": str(space.config),
            "HZ_STATE_DIR": str(state),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
        }
        hz = InDir(hz_argv, tmp_path, env)
        found = chain_through_a_worker(hz, state, "--schedules", "build/jobs")
        asked = [json.dumps(request) for request in api.requests]
    assert [json.loads(found[n]["result_json"])["draft"] for n in "abc"] == [
        "A found three rows.",
        "B summarised them.",
        "C is done.",
    ]
    # B's session was asked with A's draft in its prompt, and C's after B's ended.
    assert "Answer A found three rows." in asked[1]
    assert len(asked) == 3


def test_a_chain_with_two_workers_on_postgresql(
    hz_argv: list[str], tmp_path: Path, pg_dsn: str
) -> None:
    """Two workers look at the same completed runs: each follower is queued once."""
    write_project(tmp_path, CHAIN)
    config = tmp_path / "operator.toml"
    config.write_text(
        '[capabilities]\nagent_runner = "echo"\n\n'
        f'[system.queue]\nbackend = "postgres"\ndsn_env = "{DSN_VARIABLE}"\n\n'
        '[system.schedules]\njobs = "build/jobs"\n'
    )
    env = {
        **os.environ,
        "HZ_CONFIG": str(config),
        "HZ_STATE_DIR": str(tmp_path / "state"),
        DSN_VARIABLE: pg_dsn,
    }
    hz = InDir(hz_argv, tmp_path, env)
    assert hz.run("compile", "contracts", "--out", "build/jobs").returncode == 0
    first = hz.run("run", "build/jobs/a.job.json")
    assert first.returncode == 0, first.stderr

    def rows() -> list[Any]:
        return pg_rows(pg_dsn, "SELECT * FROM runs ORDER BY created_at", ())

    with running_worker(hz), running_worker(hz):
        until(
            lambda: any(r["job_name"] == "c" and r["state"] == "completed" for r in rows()),
            ceiling=90,
            what="c to complete",
        )
    found = rows()
    assert [(r["job_name"], r["state"]) for r in found] == [
        ("a", "completed"),
        ("b", "completed"),
        ("c", "completed"),
    ]
    a, b, c = found
    assert (b["request_key"], c["request_key"]) == (f"after:{a['id']}:b", f"after:{b['id']}:c")

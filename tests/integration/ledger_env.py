"""Shared set-up for the run ledger's end-to-end tests: an operator configuration binding the
command runner to the fake agent, a contract, and hz as a real process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.agent import recorded_pids

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")

CONTRACT = """\
hz:
  contract: 1
  name: greet
  timeout: {timeout}
  agent:
    tools: [Read]
    max_usd: {max_usd}
  inputs:
    who:
      schema: {{type: string}}
contract: |
  Be brief.
prompt: |
  Say hi to {{{{ inputs.who }}}}.
"""


@dataclass
class Space:
    root: Path
    config: Path
    state: Path
    pids: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HZ_CONFIG": str(self.config),
            "HZ_STATE_DIR": str(self.state),
            **extra,
        }

    def hz(self, *args: str, timeout: float = 60, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hz", *args],
            cwd=self.root,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def popen(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "hz", *args],
            cwd=self.root,
            env=self.env(**extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def db(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.state / "ledger.sqlite3", timeout=30)
        connection.row_factory = sqlite3.Row
        return connection

    def rows(self, where: str = "1", params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with contextlib.closing(self.db()) as c:
            return c.execute(
                f"SELECT * FROM runs WHERE {where} ORDER BY created_at", params
            ).fetchall()

    def starts(self) -> list[dict[str, object]]:
        """Every agent leader started (each start appends one line)."""
        if not self.pids.exists():
            return []
        return [p for p in recorded_pids(self.pids) if p["role"] == "leader"]

    def kill_recorded(self) -> None:
        """Never leave an agent behind a failed test."""
        if self.pids.exists():
            for process in recorded_pids(self.pids):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(str(process["pgid"])), signal.SIGKILL)


def space(
    tmp_path: Path, *agent_args: str, max_usd: float = 0.5, timeout: str = "60s", extra: str = ""
) -> Space:
    pids = tmp_path / "pids"
    command = [
        sys.executable,
        AGENT,
        *agent_args,
        f"--pids={pids}",
        "--contract-file={contract_file}",
    ]
    config = tmp_path / "operator.toml"
    config.write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\n"
        "command_enforces_read_only = true\n"
        'command_read_only_tools = ["Read"]\n' + extra
    )
    (tmp_path / "greet.yaml").write_text(CONTRACT.format(timeout=timeout, max_usd=max_usd))
    return Space(tmp_path, config, tmp_path / "state", pids)


def until(condition: Callable[[], Any], *, ceiling: float = 30.0, what: str = "") -> Any:
    """Poll ``condition`` every 50 ms until it is truthy; fail after ``ceiling`` seconds."""
    deadline = time.monotonic() + ceiling
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.05)

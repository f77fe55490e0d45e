"""A SIGKILL of ``hz run`` with the real ``claude`` CLI mid-run, against the fake model: the
next hz command kills the orphaned CLI's group, records the run ``uncertain`` with a receipt,
and never starts it again (the fake model's request log is the marker)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, hang
from tests.fakes.claude_cli import living_in_groups
from tests.fakes.claude_hz import contract_text, workspace
from tests.integration.ledger_env import until

pytestmark = pytest.mark.real_cli


def test_sigkill_of_hz_run_with_the_real_claude_cli(hz_argv: list[str], tmp_path: Path) -> None:
    space = workspace(tmp_path)
    contract = tmp_path / "contract.yaml"
    contract.write_text(contract_text(120))
    with FakeAnthropic([hang()]) as api:
        env = {
            **os.environ,
            "HZ_CONFIG": str(space.config),
            "HZ_STATE_DIR": str(tmp_path / "state"),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
        }

        def hz(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*hz_argv, *args], env=env, capture_output=True, text=True, timeout=120
            )

        argv = [*hz_argv, "run", str(contract), "--input", "question=What is in notes.txt?"]
        argv += ["--workdir", str(space.work), "--receipt-dir", str(tmp_path / "receipts")]
        with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
            until(lambda: api.requests, ceiling=60, what="the model's first request")
            run.kill()
            run.communicate()
        groups: set[int] = set()
        try:
            asked = len(api.requests)
            listed = hz("runs", "list", "--format", "json")
            [shown] = json.loads(listed.stdout)["runs"]
            assert shown["state"] == "uncertain", listed.stderr
            groups.add(shown["pid"])  # the CLI leads its own group
            deadline = time.monotonic() + 5
            while living_in_groups(groups) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert living_in_groups(groups) == []
            [receipt] = (tmp_path / "receipts").glob("*.json")
            assert json.loads(receipt.read_text())["status"] == "uncertain"
            assert hz("worker", "--drain").returncode == 0
            again = hz(
                "run",
                str(contract),
                "--input",
                "question=What is in notes.txt?",
                "--workdir",
                str(space.work),
            )
            assert again.returncode == 2
            assert len(api.requests) == asked  # started once, never again
        finally:
            for pid in living_in_groups(groups):
                os.kill(pid, 9)

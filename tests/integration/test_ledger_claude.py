"""A SIGKILL of ``hz run``, and of ``hz worker`` with four runs, with the real ``claude`` CLI
mid-run against the fake model: the next hz command kills the orphaned CLIs' groups, removes
their private directories, records the runs ``uncertain`` with receipts, and never starts them
again (the fake model's request log is the marker)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, hang, tool_use
from tests.fakes.claude_cli import living_in_groups
from tests.fakes.claude_hz import contract_text, workspace
from tests.helpers.ledger_env import until
from tests.helpers.workers import HzCommand, running_worker

pytestmark = pytest.mark.real_cli


def observed(state: Path) -> bool:
    """Whether the ledger holds what a run's owner saw of its session so far."""
    with contextlib.closing(sqlite3.connect(state / "ledger.sqlite3", timeout=30)) as c:
        return c.execute("SELECT observed_json FROM runs").fetchone()[0] is not None


def hz_against(
    api: FakeAnthropic, hz_argv: list[str], config: Path, state: Path
) -> tuple[dict[str, str], Callable[..., subprocess.CompletedProcess[str]]]:
    """The environment that points hz and the real CLI at the fake model, and hz run in it."""
    env = {
        **os.environ,
        "HZ_CONFIG": str(config),
        "HZ_STATE_DIR": str(state),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "test-key",
    }

    def hz(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*hz_argv, *args], env=env, capture_output=True, text=True, timeout=120
        )

    return env, hz


def test_sigkill_of_hz_run_with_the_real_claude_cli(hz_argv: list[str], tmp_path: Path) -> None:
    space = workspace(tmp_path)
    contract = tmp_path / "contract.yaml"
    contract.write_text(contract_text(120))
    read = tool_use("Read", {"file_path": str(space.work / "notes.txt")})
    with FakeAnthropic([read, hang()]) as api:
        env, hz = hz_against(api, hz_argv, space.config, tmp_path / "state")

        argv = [*hz_argv, "run", str(contract), "--input", "question=What is in notes.txt?"]
        argv += ["--workdir", str(space.work), "--receipt-dir", str(tmp_path / "receipts")]
        argv += ["--request-key", "notes"]
        with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
            # The CLI read the file and asked again; the owner recorded what it saw so far.
            until(lambda: len(api.requests) == 2, ceiling=60, what="the model's second request")
            until(lambda: observed(tmp_path / "state"), ceiling=30, what="the observations")
            run.kill()
            run.communicate()
        groups: set[int] = set()
        try:
            asked = len(api.requests)
            listed = hz("runs", "list", "--format", "json")
            [shown] = json.loads(listed.stdout)["runs"]
            assert shown["state"] == "uncertain", listed.stderr
            groups.add(shown["pid"])  # the CLI leads its own group
            assert not Path(shown["private_dir"]).exists()
            deadline = time.monotonic() + 5
            while living_in_groups(groups) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert living_in_groups(groups) == []
            [receipt] = (tmp_path / "receipts").glob("*.json")
            assert json.loads(receipt.read_text())["status"] == "uncertain"
            shown = hz("runs", "show", shown["id"]).stdout
            assert "seen so far: 1 turns, 1 tool calls\n" in shown, shown
            assert hz("worker", "--drain").returncode == 0
            again = hz(
                "run",
                str(contract),
                "--input",
                "question=What is in notes.txt?",
                "--workdir",
                str(space.work),
                "--receipt-dir",
                str(tmp_path / "receipts"),
                "--request-key",
                "notes",
            )
            assert again.returncode == 2  # the uncertain run holds the key
            assert "already holds this request key; nothing was started" in again.stderr
            assert len(api.requests) == asked  # started once, never again
        finally:
            for pid in living_in_groups(groups):
                os.kill(pid, 9)


@pytest.mark.serial  # four CLIs at once, then a SIGKILL: alone on the quiet machine
def test_sigkill_of_a_worker_with_four_real_claude_runs(hz_argv: list[str], tmp_path: Path) -> None:
    space = workspace(tmp_path)
    contract = tmp_path / "contract.yaml"
    contract.write_text(contract_text(120))
    with FakeAnthropic([hang()], repeat_last=True) as api:
        env, hz = hz_against(api, hz_argv, space.config, tmp_path / "state")

        for n in range(4):
            submitted = hz(
                "submit", str(contract), "--input", f"question=Question {n}?",
                "--workdir", str(space.work), "--receipt-dir", str(tmp_path / "receipts"),
            )  # fmt: skip
            assert submitted.returncode == 0, submitted.stderr
        groups: set[int] = set()
        try:
            with running_worker(HzCommand(hz_argv, env), "-j", "4") as worker:
                until(lambda: len(api.requests) >= 4, ceiling=90, what="four CLIs asking")
                listed = json.loads(hz("runs", "list", "--format", "json").stdout)["runs"]
                assert [r["state"] for r in listed] == ["running"] * 4
                worker.kill()
            asked = len(api.requests)
            private = [Path(r["private_dir"]) for r in listed]
            groups |= {r["pid"] for r in listed}  # each CLI leads its own group
            reconciled = hz("runs", "list", "--format", "json")
            runs = json.loads(reconciled.stdout)["runs"]
            assert [(r["id"], r["state"]) for r in runs] == [(r["id"], "uncertain") for r in listed]
            assert reconciled.stderr.count("-> uncertain: owner") == 4
            deadline = time.monotonic() + 5
            while living_in_groups(groups) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert living_in_groups(groups) == []
            assert [p.exists() for p in private] == [False] * 4
            receipts = sorted((tmp_path / "receipts").glob("*.json"))
            assert [json.loads(p.read_text())["status"] for p in receipts] == ["uncertain"] * 4
            verified = hz("receipts", "verify", str(tmp_path / "receipts"))
            assert verified.returncode == 0, verified.stdout
            # Never again: a second worker and a reconcile start nothing.
            assert hz("worker", "--drain").returncode == 0
            assert hz("runs", "reconcile").stdout == "nothing to reconcile\n"
            assert len(api.requests) == asked
        finally:
            for pid in living_in_groups(groups):
                os.kill(pid, 9)

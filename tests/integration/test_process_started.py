"""start_bounded: a child spawned now and handed its stdin and limits later (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hz.runtime.process.bounded import Limits, start_bounded
from hz.runtime.process.environment import child_environment
from tests.fakes.agent import is_gone, recorded_pids

# Signals, the watchdog and a clock: the serial lane.
pytestmark = pytest.mark.serial

AGENT = str(Path(__file__).resolve().parents[1] / "fakes" / "agent.py")
REPO = Path(__file__).resolve().parents[2]


def fake(*args: str) -> list[str]:
    return [sys.executable, AGENT, *args]


def started_leader(pids: Path) -> dict[str, object]:
    """The child's own record, once it is up (it writes it before it reads stdin)."""
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the started child never came up"
        time.sleep(0.02)
    [leader] = recorded_pids(pids)
    return leader


def test_a_started_child_runs_in_its_own_group_before_its_stdin_and_echoes_it(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    with start_bounded(fake("echo", "--pids", str(pids)), cwd="/", env=child_environment()) as c:
        leader = started_leader(pids)
        assert leader["pgid"] == leader["pid"] != os.getpgrp()
        outcome = c.run(b"hello later", limits=Limits(timeout=60))
    assert (outcome.exit_code, outcome.stdout, outcome.timed_out) == (0, b"hello later", False)


def test_the_wall_clock_starts_at_the_hand_over_not_at_the_spawn(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    child = start_bounded(fake("echo", "--pids", str(pids)), cwd="/", env=child_environment())
    started_leader(pids)
    time.sleep(0.6)  # longer than the timeout below: counted from the spawn, it is over
    outcome = child.run(b"in time", limits=Limits(timeout=0.5))
    assert (outcome.exit_code, outcome.stdout, outcome.timed_out) == (0, b"in time", False)


def test_discarding_kills_the_unused_child_and_leaving_the_block_does_too(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    child = start_bounded(fake("sleep", "--pids", str(first)), cwd="/", env=child_environment())
    pid = int(str(started_leader(first)["pid"]))
    child.discard()
    assert is_gone(pid)
    child.discard()  # once is enough; again is nothing
    with start_bounded(fake("sleep", "--pids", str(second)), cwd="/", env=child_environment()):
        pid = int(str(started_leader(second)["pid"]))
    assert is_gone(pid)


def test_a_started_child_runs_once_and_discarding_after_the_run_is_nothing() -> None:
    child = start_bounded(["cat"], cwd="/", env=child_environment())
    assert child.run(b"x", limits=Limits(timeout=60)).stdout == b"x"
    child.discard()
    with pytest.raises(RuntimeError, match="a started child runs once"):
        child.run(b"y", limits=Limits(timeout=60))


def test_a_program_that_cannot_start_is_a_launch_error_at_the_hand_over(tmp_path: Path) -> None:
    child = start_bounded([str(tmp_path / "missing")], cwd="/", env=child_environment())
    outcome = child.run(b"x", limits=Limits(timeout=60))
    assert outcome.launch_error == f"{tmp_path / 'missing'}: program not found"
    assert outcome.exit_code is None


def test_the_watchdog_kills_a_started_child_when_hz_dies_before_the_hand_over(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    # hz (here a fresh interpreter) starts the child, waits for it, then is SIGKILLed.
    script = (
        "import os, signal, sys, time\n"
        "from hz.runtime.process.bounded import start_bounded\n"
        "from hz.runtime.process.environment import child_environment\n"
        f"child = start_bounded({fake('sleep', '--pids', str(pids))!r}, cwd='/', "
        "env=child_environment())\n"
        f"while not os.path.exists({str(pids)!r}): time.sleep(0.02)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == -9, done.stderr
    pid = int(str(started_leader(pids)["pid"]))
    assert is_gone(pid, wait=10)

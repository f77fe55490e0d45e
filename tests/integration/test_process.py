"""run_bounded with real processes: exit, caps, timeouts, leftovers, launch errors."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.process.bounded import DRAIN_SECONDS, Limits, run_bounded
from hz.runtime.process.environment import child_environment
from tests.fakes.agent import is_gone, recorded_pids

AGENT = str(Path(__file__).resolve().parents[1] / "fakes" / "agent.py")
MIB = 1024 * 1024


def fake(*args: str) -> list[str]:
    return [sys.executable, AGENT, *args]


def run(
    argv: list[str], limits: Limits | None = None, stdin: bytes | None = None, **kw: Any
) -> Any:
    return run_bounded(
        argv,
        stdin=stdin,
        cwd=kw.pop("cwd", "/"),
        env=child_environment(),
        limits=limits or Limits(timeout=60),
        **kw,
    )


def test_prompt_on_stdin_is_echoed_and_stdin_closed() -> None:
    outcome = run(fake("echo"), stdin="grüß dich\n".encode())
    assert (outcome.exit_code, outcome.stdout, outcome.signal) == (0, "grüß dich\n".encode(), None)
    assert outcome.ok
    assert (outcome.timed_out, outcome.stdout_truncated, outcome.leftover_killed) == (False,) * 3


def test_no_stdin_means_end_of_file_at_once() -> None:
    outcome = run(["cat"], Limits(timeout=30))
    assert (outcome.exit_code, outcome.stdout) == (0, b"")
    assert outcome.duration_seconds < 10


def test_child_that_never_reads_a_large_stdin_does_not_block_us() -> None:
    outcome = run(fake("no-read"), stdin=b"p" * (32 * MIB))
    assert (outcome.exit_code, outcome.stdout) == (0, b"ok\n")


@pytest.mark.serial
def test_missing_program_is_a_value_within_milliseconds() -> None:
    outcome = run(["hz-no-such-program-anywhere"])
    assert outcome.launch_error == "hz-no-such-program-anywhere: program not found on PATH"
    assert (outcome.exit_code, outcome.signal) == (None, None)
    assert outcome.duration_seconds < 1.0
    assert outcome.describe_exit() == (
        "did not start: hz-no-such-program-anywhere: program not found on PATH"
    )


def test_missing_path_and_non_executable_file_are_values(tmp_path: Path) -> None:
    plain = tmp_path / "plain.sh"
    plain.write_text("echo hi\n")
    missing = tmp_path / "missing"
    assert run([str(missing)]).launch_error == f"{missing}: program not found"
    assert run([str(plain)]).launch_error == (
        f"{plain}: permission denied (is it an executable file?)"
    )


def test_missing_working_directory_is_a_value(tmp_path: Path) -> None:
    gone = str(tmp_path / "gone")
    assert run(["true"], cwd=gone).launch_error == f"working directory {gone} does not exist"


def test_failure_keeps_exit_code_and_stderr() -> None:
    outcome = run(fake("fail", "--code", "7", "--stderr", "boom: it broke\n"))
    assert (outcome.exit_code, outcome.stderr) == (7, b"boom: it broke\n")
    assert outcome.stderr_tail(5) == "roke\n"
    assert outcome.describe_exit() == "exited with code 7"


def test_child_runs_in_its_own_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    assert run(fake("echo", "--pids", str(pids)), stdin=b"x").ok
    [leader] = recorded_pids(pids)
    assert leader["pgid"] == leader["pid"]
    assert leader["pgid"] != os.getpgrp()


@pytest.mark.serial
def test_wall_timeout_terminates_the_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    outcome = run(fake("sleep", "--pids", str(pids)), Limits(timeout=0.5))
    assert outcome.timed_out
    assert (outcome.exit_code, outcome.signal) == (None, signal.SIGTERM)
    assert 0.5 <= outcome.duration_seconds < 10
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))
    assert outcome.describe_exit() == "killed by signal SIGTERM"


@pytest.mark.serial
def test_sigterm_ignored_means_sigkill_after_the_grace(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    outcome = run(fake("ignore-term", "--pids", str(pids)), Limits(timeout=0.5, kill_grace=0.5))
    assert outcome.timed_out
    assert (outcome.signal, outcome.stdout) == (signal.SIGKILL, b"ready\n")
    assert 1.0 <= outcome.duration_seconds < 10
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))


@pytest.mark.serial
def test_grandchild_holding_the_pipe_does_not_hang_us_and_is_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    outcome = run(fake("grandchild", "--pids", str(pids), "--draft", "done\n"), Limits(timeout=60))
    assert (outcome.exit_code, outcome.stdout, outcome.timed_out) == (0, b"done\n", False)
    assert outcome.leftover_killed
    assert outcome.duration_seconds < 20
    roles = {str(p["role"]): int(p["pid"]) for p in recorded_pids(pids)}
    assert set(roles) == {"leader", "grandchild"}
    assert all(is_gone(pid) for pid in roles.values())


@pytest.mark.serial
def test_a_descendant_that_left_the_group_cannot_hold_us_past_the_drain(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    outcome = run(fake("escape", "--pids", str(pids), "--draft", "done\n"), Limits(timeout=60))
    deadline = time.monotonic() + 10
    while len(roles := {str(p["role"]): int(p["pid"]) for p in recorded_pids(pids)}) < 2:
        assert time.monotonic() < deadline, "the escapee never recorded its pid"
        time.sleep(0.05)
    try:
        assert (outcome.exit_code, outcome.stdout, outcome.leftover_killed) == (0, b"done\n", False)
        assert DRAIN_SECONDS <= outcome.duration_seconds < 20
        assert is_gone(roles["leader"])
    finally:
        os.kill(roles["escapee"], signal.SIGKILL)  # the documented limit: hz can't find it


@pytest.mark.serial
def test_inactivity_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    outcome = run(fake("sleep", "--pids", str(pids)), Limits(timeout=120, inactivity=0.5))
    assert (outcome.inactivity_timed_out, outcome.timed_out) == (True, False)
    assert outcome.duration_seconds < 30
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))


@pytest.mark.serial
def test_result_then_hang_finishes_after_done_grace(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    seen: list[bytes] = []

    def on_line(line: bytes) -> bool:
        seen.append(line)
        return line == b"RESULT\n"

    outcome = run(
        fake("result-hang", "--pids", str(pids), "--draft", "partial\nRESULT\n"),
        Limits(timeout=60, done_grace=0.3),
        on_stdout_line=on_line,
    )
    assert (outcome.finished_after_done, outcome.timed_out) == (True, False)
    assert seen == [b"partial\n", b"RESULT\n"]
    assert outcome.duration_seconds < 30
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))


def test_output_is_capped_and_flagged() -> None:
    outcome = run(
        fake("flood", "--stdout-bytes", str(3 * MIB), "--stderr-bytes", str(2 * MIB)),
        Limits(timeout=60, max_stdout=MIB, max_stderr=1000),
    )
    assert outcome.exit_code == 0
    assert (len(outcome.stdout), len(outcome.stderr)) == (MIB, 1000)
    assert (outcome.stdout_truncated, outcome.stderr_truncated) == (True, True)


def test_lines_for_callbacks_are_capped() -> None:
    lines: list[bytes] = []
    outcome = run(
        fake("flood", "--stdout-bytes", str(2 * MIB)),
        Limits(timeout=60, max_line=100),
        on_stdout_line=lines.append,
    )
    assert outcome.exit_code == 0
    assert [len(line) for line in lines] == [100, 100, 4]
    assert lines[-1] == b"end\n"
    assert outcome.long_lines == 2


def test_failing_callback_propagates_and_kills_the_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"

    def explode(line: bytes) -> None:
        raise RuntimeError("parser bug")

    with pytest.raises(RuntimeError, match="parser bug"):
        run(fake("ignore-term", "--pids", str(pids)), on_stdout_line=explode)
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))


def test_stop_over_cap_stops_an_endless_flood_at_the_cap() -> None:
    """A provider's answer is of no use once over its cap: the child is stopped then, not read
    and discarded until its timeout (an endless flood would take all of it)."""
    flood = "import sys\nwhile True:\n    sys.stdout.buffer.write(b'x' * 65536)\n"
    limits = Limits(timeout=120, max_stdout=1000, stop_over_cap=True)
    outcome = run([sys.executable, "-c", flood], limits)
    assert (outcome.stopped_over_cap, outcome.timed_out) == (True, False)
    assert (outcome.stdout, outcome.stdout_truncated) == (b"x" * 1000, True)
    assert outcome.signal == signal.SIGTERM


@pytest.mark.serial
def test_the_leaders_exit_after_its_output_closed_ends_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The leader closes stdout and stderr, then exits: with only the tick to notice the exit,
    # every run waited up to a tick after it. The tick is made an hour here; the leader's pidfd
    # in the selector ends the wait as it exits.
    import threading

    from hz.runtime.process import bounded

    monkeypatch.setattr(bounded, "_TICK", 3600.0)
    script = "import os, time; os.close(1); os.close(2); time.sleep(0.2)"
    outcomes: list[Any] = []
    thread = threading.Thread(
        target=lambda: outcomes.append(run([sys.executable, "-c", script])), daemon=True
    )
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert outcomes[0].exit_code == 0

"""Stopping a process group, written once: the grace, the clock it waits by, the cancel token
the chokepoint polls, and the signals that set it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hz.runtime.process.bounded import Limits, run_bounded
from hz.runtime.process.cancel import CancelToken, cancelling
from hz.runtime.process.environment import child_environment
from hz.runtime.process.group import KILL_GRACE, Termination, terminate_group
from hz.runtime.process.proc import group_members, start_time
from hz.runtime.process.signals import CANCEL_SIGNALS, Escalation, routed
from tests.fakes.agent import is_gone
from tests.helpers.clock import FakeClock

AGENT = str(Path(__file__).resolve().parents[1] / "fakes" / "agent.py")


def stubborn_group() -> subprocess.Popen[bytes]:
    """A group whose leader ignores SIGTERM, started in its own session; ready when returned."""
    proc = subprocess.Popen(
        [sys.executable, AGENT, "ignore-term"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    with proc.stdout:
        assert proc.stdout.readline() == b"ready\n"
    return proc


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace_by_its_clock() -> None:
    """The grace is waited on the injected clock: two seconds of it take no real time."""
    proc = stubborn_group()
    clock = FakeClock()
    begun = time.monotonic()
    terminate_group(proc.pid, clock=clock)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    assert time.monotonic() - begun < KILL_GRACE  # not waited in real time
    assert clock.now - 1000.0 >= KILL_GRACE  # but on the clock it was
    assert group_members(proc.pid) == []


def test_a_group_that_ends_on_sigterm_gets_no_sigkill() -> None:
    proc = subprocess.Popen(
        [sys.executable, AGENT, "sleep", "--seconds=60"],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert start_time(proc.pid) is not None
    terminate_group(proc.pid, grace=30.0)
    assert proc.wait(timeout=10) == -signal.SIGTERM


def test_a_termination_steps_sigterm_then_sigkill_at_the_grace_or_at_once_when_urgent() -> None:
    proc = stubborn_group()
    ending = Termination(proc.pid, grace=5.0)
    ending.step(100.0)
    assert (ending.termed_at, ending.killed) == (100.0, False)
    ending.step(104.9)
    assert proc.poll() is None  # SIGTERM ignored, the grace not over
    ending.step(105.0)
    assert ending.killed
    assert proc.wait(timeout=10) == -signal.SIGKILL
    other = stubborn_group()
    Termination(other.pid, grace=60.0).step(0.0, urgent=True)
    assert other.wait(timeout=10) == -signal.SIGKILL


def test_a_cancelled_token_makes_the_chokepoint_kill_the_group_at_once(tmp_path: Path) -> None:
    """Nothing is raised into the caller: the outcome says ``cancelled``, the group is gone."""
    pids = tmp_path / "pids"
    token = CancelToken()
    threading.Timer(0.5, token.cancel, ("SIGTERM",)).start()
    begun = time.monotonic()
    with cancelling(token):
        outcome = run_bounded(
            [sys.executable, AGENT, "stubborn", "--pids", str(pids)],
            stdin=None,
            cwd="/",
            env=child_environment(),
            limits=Limits(timeout=60, kill_grace=30),
        )
    assert outcome.cancelled
    assert (outcome.signal, outcome.timed_out) == (signal.SIGKILL, False)
    assert time.monotonic() - begun < 10  # not the 30 s grace
    from tests.fakes.agent import recorded_pids

    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))


def test_the_first_signal_calls_the_handler_the_second_again_later_ones_nothing() -> None:
    calls: list[str] = []
    escalation = Escalation(lambda n: calls.append(f"first {n}"), lambda n: calls.append(n))
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        escalation(name)
    assert calls == ["first SIGINT", "SIGTERM"]
    assert escalation.count == 3


def test_routed_signals_reach_the_handler_and_are_restored_when_none_came() -> None:
    before = {s: signal.getsignal(s) for s in CANCEL_SIGNALS}
    got: list[str] = []
    with routed(got.append):
        assert all(signal.getsignal(s) is not before[s] for s in CANCEL_SIGNALS)
    assert {s: signal.getsignal(s) for s in CANCEL_SIGNALS} == before
    assert got == []


@pytest.mark.serial
def test_routed_signals_set_a_token_and_stay_handled_once_one_came() -> None:
    token = CancelToken()
    before = signal.getsignal(signal.SIGHUP)
    try:
        with routed(token.cancel):
            os.kill(os.getpid(), signal.SIGHUP)
            assert token.wait(5)
            os.kill(os.getpid(), signal.SIGTERM)  # ignored: no exception, no second reason
        assert (token.cancelled, token.reason) == (True, "SIGHUP")
        assert signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL
    finally:
        for signum in CANCEL_SIGNALS:
            signal.signal(signum, before if signum == signal.SIGHUP else signal.getsignal(signum))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)

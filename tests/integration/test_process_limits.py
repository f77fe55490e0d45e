"""Limits reject ambiguous values; hz never signals a group that isn't the child's own."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from hz.runtime.process.bounded import Limits, ProcessOutcome
from hz.runtime.process.group import UnsafeGroupError, check_own_group, signal_group


def test_defaults() -> None:
    limits = Limits(timeout=5)
    assert (limits.kill_grace, limits.inactivity, limits.done_grace) == (2.0, None, 2.0)
    assert (limits.max_stdout, limits.max_stderr) == (8 * 1024 * 1024, 8 * 1024 * 1024)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"timeout": 0}, ValueError, "Limits.timeout must be a finite number > 0, not 0"),
        ({"timeout": -1.5}, ValueError, "Limits.timeout must be a finite number > 0, not -1.5"),
        (
            {"timeout": float("nan")},
            ValueError,
            "Limits.timeout must be a finite number > 0, not nan",
        ),
        (
            {"timeout": float("inf")},
            ValueError,
            "Limits.timeout must be a finite number > 0, not inf",
        ),
        ({"timeout": True}, TypeError, "Limits.timeout must be a number of seconds, not True"),
        ({"timeout": "10"}, TypeError, "Limits.timeout must be a number of seconds, not '10'"),
        (
            {"timeout": 1, "kill_grace": 0},
            ValueError,
            "Limits.kill_grace must be a finite number > 0, not 0",
        ),
        (
            {"timeout": 1, "inactivity": False},
            TypeError,
            "Limits.inactivity must be a number of seconds, not False",
        ),
        (
            {"timeout": 1, "done_grace": -1},
            ValueError,
            "Limits.done_grace must be a finite number > 0, not -1",
        ),
        ({"timeout": 1, "max_stdout": 0}, ValueError, "Limits.max_stdout must be > 0, not 0"),
        (
            {"timeout": 1, "max_stderr": 1.5},
            TypeError,
            "Limits.max_stderr must be an integer number of bytes, not 1.5",
        ),
        (
            {"timeout": 1, "max_line": True},
            TypeError,
            "Limits.max_line must be an integer number of bytes, not True",
        ),
    ],
)
def test_ambiguous_limits_are_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as e:
        Limits(**kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize("pgid", [0, 1, -1, os.getpgrp()])
def test_never_signals_group_zero_init_all_or_our_own(pgid: int) -> None:
    with pytest.raises(UnsafeGroupError) as e:
        signal_group(pgid, signal.SIGTERM)
    assert str(e.value) == f"refusing to signal process group {pgid}"


def test_a_process_without_its_own_group_is_refused() -> None:
    if os.getpgrp() == os.getpid():  # we lead our own group: the check for ours applies
        with pytest.raises(UnsafeGroupError):
            check_own_group(os.getpid())
    else:
        with pytest.raises(UnsafeGroupError) as e:
            check_own_group(os.getpid())
        assert (
            str(e.value) == f"child {os.getpid()} is in process group {os.getpgrp()}, not its own"
        )


def test_outcome_describes_how_it_ended() -> None:
    assert ProcessOutcome(exit_code=0).describe_exit() == "exited with code 0"
    assert ProcessOutcome(exit_code=None, signal=9).describe_exit() == "killed by signal SIGKILL"
    assert ProcessOutcome(exit_code=None, signal=99).describe_exit() == "killed by signal 99"
    tail = ProcessOutcome(exit_code=1, stderr=b"x" * 10 + b"\xffend").stderr_tail(4)
    assert tail == "\ufffdend"

"""The typed limits of one child process and the value it ends in.

See ``hz.runtime.process.bounded``, the one chokepoint that uses them.
"""

from __future__ import annotations

import math
import signal as _signal
from dataclasses import dataclass

from hz.runtime.process.group import KILL_GRACE

MIB = 1024 * 1024
#: What hz keeps of one stream of a child (stdout, stderr), and what one agent session's
#: output may add to its result in all (``hz.runtime.runners.output_cap``).
MAX_OUTPUT = 8 * MIB


def _seconds(name: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    # bool is an int subclass: ``timeout=True`` is a bug, not one second.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"Limits.{name} must be a number of seconds, not {value!r}")
    if math.isnan(value) or math.isinf(value) or value <= 0:
        raise ValueError(f"Limits.{name} must be a finite number > 0, not {value!r}")


def _size(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Limits.{name} must be an integer number of bytes, not {value!r}")
    if value <= 0:
        raise ValueError(f"Limits.{name} must be > 0, not {value!r}")


@dataclass(frozen=True, slots=True)
class Limits:
    """How long and how loud one child process may be. Rejects ambiguous values at once.

    - ``timeout``: wall-clock seconds from start; then SIGTERM to the group.
    - ``kill_grace``: seconds between SIGTERM and SIGKILL.
    - ``inactivity``: optional seconds without a byte on stdout or stderr; then as ``timeout``.
    - ``max_stdout`` / ``max_stderr``: bytes kept per stream; the rest is read and discarded.
    - ``max_line``: bytes of one line handed to a line callback; longer lines are cut there.
    - ``done_grace``: seconds the process may linger after a line callback said "done"
      (returned True) before its group is stopped; such a run counts as finished.
    - ``stop_over_cap``: stdout past ``max_stdout`` stops the group at once (SIGTERM, then
      SIGKILL): for a child whose whole answer is of no use once it is over the cap (a
      provider's), rather than reading and discarding until it ends or times out.
    """

    timeout: float
    kill_grace: float = KILL_GRACE
    inactivity: float | None = None
    max_stdout: int = MAX_OUTPUT
    max_stderr: int = MAX_OUTPUT
    max_line: int = 1 * MIB
    done_grace: float = 2.0
    stop_over_cap: bool = False

    def __post_init__(self) -> None:
        _seconds("timeout", self.timeout)
        _seconds("kill_grace", self.kill_grace)
        _seconds("inactivity", self.inactivity, optional=True)
        _seconds("done_grace", self.done_grace)
        _size("max_stdout", self.max_stdout)
        _size("max_stderr", self.max_stderr)
        _size("max_line", self.max_line)


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """What one bounded child process ended in. Never raised, always returned.

    - ``exit_code``: the leader's exit status; ``None`` when it died of a signal (then
      ``signal`` holds the number) or never started (then ``launch_error`` says why).
    - ``stdout`` / ``stderr``: at most ``Limits.max_*`` bytes; ``*_truncated`` when more came.
    - ``timed_out``: the wall timeout stopped it. ``inactivity_timed_out``: the inactivity
      timeout stopped it. ``finished_after_done``: a line callback reported the final result
      and the process was stopped while lingering afterwards — a completed run, not a timeout.
    - ``leftover_killed``: processes of its group were still alive after the leader exited
      (they were SIGKILLed).
    - ``long_lines``: how many lines handed to a callback were cut at ``Limits.max_line``.
    - ``stopped_over_cap``: stdout passed the cap and ``Limits.stop_over_cap`` stopped it.
    - ``cancelled``: hz was told to stop while it ran (``hz.runtime.process.cancel``): its
      group was killed at once.
    """

    exit_code: int | None
    signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    inactivity_timed_out: bool = False
    finished_after_done: bool = False
    launch_error: str | None = None
    duration_seconds: float = 0.0
    leftover_killed: bool = False
    long_lines: int = 0
    cancelled: bool = False
    stopped_over_cap: bool = False

    @property
    def ok(self) -> bool:
        """Exited on its own with status 0."""
        return self.exit_code == 0 and self.launch_error is None

    def stderr_tail(self, limit: int = 4096) -> str:
        """The last ``limit`` bytes of stderr as text (undecodable bytes replaced)."""
        return self.stderr[-limit:].decode("utf-8", errors="replace")

    def describe_exit(self) -> str:
        """``exited with code 3`` / ``killed by signal SIGKILL`` / ``did not start: …``."""
        if self.launch_error is not None:
            return f"did not start: {self.launch_error}"
        if self.signal is not None:
            try:
                name = _signal.Signals(self.signal).name
            except ValueError:
                name = str(self.signal)
            return f"killed by signal {name}"
        return f"exited with code {self.exit_code}"

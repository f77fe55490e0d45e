"""The chokepoint for a child driven line by line (a JSON-RPC server on stdio).

``run_bounded`` writes stdin once and reads to the end; a protocol client must write a request,
read until its answer, write again. ``Interactive`` does that with the same guarantees:

- The child gets its own session (its process group id is its pid), exactly ``env``, no
  shell; a missing program or working directory is a ``launch_error`` string, not an
  exception.
- Every wait has a fixed ceiling that nothing the child says can lengthen (``Ceilings``, set
  by hz where the child is started, never by the child): ``write_line``
  gives up after ``write`` seconds (a child that stopped reading), ``read_line`` returns at the
  caller's deadline. stdout lines are cut at ``max_line`` bytes (``last_line_cut`` says so of
  the line ``read_line`` returned); stderr is kept up to
  ``max_stderr`` bytes, the rest read and discarded, so a flooding child never blocks.
- ``stop`` ends it in bounded time: stdin closed, ``reap`` seconds for the leader to exit by
  itself (``graceful``) — then SIGKILL to the group and at most ``reap`` until none of
  it is left —, ``collect`` to collect the leader, ``drain`` to drain stderr
  (a detached helper may still hold it). A further interrupt cannot cut that short.

With the ``write`` of one last request (an interrupt), a child that stopped reading,
stopped exiting and left a helper holding stderr is settled within ten seconds (``CEILINGS``).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hz.runtime.process import cancel
from hz.runtime.process.bounded import spawn
from hz.runtime.process.group import check_own_group, living_members, pipe, signal_group
from hz.runtime.process.limits import MAX_OUTPUT
from hz.runtime.process.streams import StreamCapture
from hz.runtime.process.uninterrupted import to_the_end

_TICK = 0.05
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Ceilings:
    """The fixed waits (seconds) of one child: not configurable by an operator, never derived
    from anything the child says. Tests inject shorter ones (STYLE 21)."""

    #: For the child to take one line on its stdin.
    write: float = 5.0
    #: For the leader to exit by itself once stdin is closed; again for the group to die.
    reap: float = 2.0
    #: To collect the killed leader.
    collect: float = 2.0
    #: To drain stderr that a process outside the group may hold open.
    drain: float = 1.0

    def __post_init__(self) -> None:
        for name in ("write", "reap", "collect", "drain"):
            value = getattr(self, name)
            if not 0 < value <= 60:
                raise ValueError(f"Ceilings.{name} must be in (0, 60] seconds, got {value!r}")


#: hz's ceilings for every interactive child.
CEILINGS = Ceilings()


@dataclass(frozen=True, slots=True)
class Stopped:
    """How the child ended once ``stop`` returned."""

    exit_code: int | None
    signal: int | None
    stderr: bytes
    stderr_truncated: bool
    #: The leader could not be collected within its ceiling (still unreaped, SIGKILLed).
    uncollected: bool
    #: Members of the group were still alive after the leader exited, and were killed.
    leftover_killed: bool
    duration_seconds: float


class Interactive:
    """One child and its pipes; see the module docstring. Use ``start``, then ``stop``."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        max_line: int,
        max_stderr: int,
        ceilings: Ceilings = CEILINGS,
    ) -> None:
        self.proc = proc
        self.ceilings = ceilings
        self.started = time.monotonic()
        self.pgid = check_own_group(proc.pid)
        self._lines: deque[tuple[bytes, bool]] = deque()
        self._out = StreamCapture(1, max_line, self._line)
        self._err = StreamCapture(max_stderr, max_line, None)
        self._sel = selectors.DefaultSelector()
        self.eof = False
        self._cancel_seen = False
        #: Lines cut at ``max_line`` so far, and whether the line read last was one of them.
        self.long_lines = 0
        self.last_line_cut = False
        self._stopped: Stopped | None = None
        for stream, name, capture in (
            (proc.stdout, "stdout", self._out),
            (proc.stderr, "stderr", self._err),
        ):
            fd = pipe(stream, name).fileno()
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ, capture)
        os.set_blocking(pipe(proc.stdin, "stdin").fileno(), False)

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        max_line: int = MAX_OUTPUT,
        max_stderr: int = 1024 * 1024,
        ceilings: Ceilings = CEILINGS,
    ) -> Interactive | str:
        """The running child, or why it could not start."""
        proc = spawn(argv, stdin_pipe=True, cwd=cwd, env=env)
        if isinstance(proc, str):
            return proc
        try:
            return cls(proc, max_line, max_stderr, ceilings)
        except BaseException:
            to_the_end(lambda: _kill_and_wait(proc, ceilings.collect))
            raise

    def _line(self, line: bytes) -> None:
        cut = self._out.long_lines > self.long_lines  # counted just before the line is handed
        self.long_lines = self._out.long_lines
        self._lines.append((line, cut))

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def write_line(self, line: bytes) -> bool:
        """Write ``line`` (a newline is added) within ``ceilings.write``; False when the child
        did not take all of it in time or closed its stdin. Output is read meanwhile."""
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return False
        pending = memoryview(line + b"\n")
        until = time.monotonic() + self.ceilings.write
        while pending:
            try:
                written = os.write(stdin.fileno(), pending[:_CHUNK])
            except BlockingIOError:
                written = 0
            except OSError:  # EPIPE: it closed stdin or exited
                return False
            pending = pending[written:]
            if not pending:
                return True
            left = until - time.monotonic()
            if left <= 0:
                return False
            with selectors.DefaultSelector() as writable:
                writable.register(stdin.fileno(), selectors.EVENT_WRITE)
                writable.select(min(left, _TICK))
            self._pump(0)
        return True

    def read_line(self, until: float) -> bytes | None:
        """The next stdout line, or None at ``until`` (``time.monotonic()``) or at the end of
        stdout (then ``eof`` is True). ``Cancelled`` once, when the current context's cancel
        token (``hz.runtime.process.cancel``) is set while it waits: the caller settles the
        conversation and stops the child; later reads go on as before."""
        token = cancel.current()
        while True:
            if token is not None and token.cancelled and not self._cancel_seen:
                self._cancel_seen = True
                token.check()
            if self._lines:
                line, self.last_line_cut = self._lines.popleft()
                return line
            if self.eof:
                return None
            left = until - time.monotonic()
            if left <= 0:
                return None
            self._pump(min(left, _TICK))

    def _pump(self, timeout: float) -> None:
        if not self._sel.get_map():  # both pipes ended: only waiting is left
            self.eof = True
            time.sleep(timeout)
            return
        for key, _ in self._sel.select(timeout):
            capture: StreamCapture = key.data
            try:
                chunk = os.read(key.fd, _CHUNK)
            except BlockingIOError:
                continue
            if chunk:
                capture.feed(chunk)
                continue
            self._sel.unregister(key.fd)
            capture.finish()
            if capture is self._out:
                self.eof = True

    def stop(self, *, graceful: bool) -> Stopped:
        """End the child within the ceilings (idempotent); see the module docstring."""
        if self._stopped is None:
            to_the_end(lambda: self._stop(graceful))
        if self._stopped is None:  # _stop sets it as its last step, or raises
            raise RuntimeError("the child's stop ended without saying how it stopped")
        return self._stopped

    def _stop(self, graceful: bool) -> None:
        stdin = self.proc.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()
        if graceful:
            until = time.monotonic() + self.ceilings.reap
            while not _leader_exited(self.proc.pid) and time.monotonic() < until:
                self._pump(_TICK)
        leftovers = living_members(self.pgid, exclude=self.proc.pid)
        # While the leader is unreaped its group id cannot be reused: ours to signal.
        signal_group(self.pgid, signal.SIGKILL)
        until = time.monotonic() + self.ceilings.reap
        while living_members(self.pgid, exclude=-1) and time.monotonic() < until:
            self._pump(_TICK)
        uncollected = False
        try:
            self.proc.wait(timeout=self.ceilings.collect)
        except subprocess.TimeoutExpired:
            uncollected = True
        until = time.monotonic() + self.ceilings.drain
        while self._sel.get_map() and time.monotonic() < until:
            self._pump(min(_TICK, max(until - time.monotonic(), 0)))
        for key in list(self._sel.get_map().values()):
            key.data.finish()  # held open by a process that left the group
        self._sel.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        code = self.proc.returncode
        self._stopped = Stopped(
            exit_code=code if code is not None and code >= 0 else None,
            signal=-code if code is not None and code < 0 else None,
            stderr=self._err.data,
            stderr_truncated=self._err.truncated,
            uncollected=uncollected,
            leftover_killed=bool(leftovers),
            duration_seconds=self.elapsed,
        )


def _leader_exited(pid: int) -> bool:
    # WNOWAIT leaves the leader a zombie, so its group id stays ours until it is collected.
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_and_wait(proc: subprocess.Popen[bytes], collect: float) -> None:
    proc.kill()
    proc.wait(timeout=collect)

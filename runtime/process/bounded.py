"""The one chokepoint for child processes: ``run_bounded`` starts, bounds and reaps one.

POSIX only, and written for Linux (it reads ``/proc`` to find a group's survivors and grows
pipes with ``F_SETPIPE_SZ``). Every runner starts its agent through ``run_bounded``:

- The child gets its own session (``start_new_session``), so its process group id is its pid;
  hz never signals group 0, 1, a negative group or its own.
- ``stdin`` (bytes) is written and then closed, or the child gets ``/dev/null``. Writing is
  non-blocking and interleaved with reading, so a child that never reads can't deadlock hz.
- stdout and stderr are drained concurrently and capped (``Limits.max_*``); beyond the cap
  hz keeps reading and discards, so a flooding child never blocks and hz's memory stays flat.
- The end is the leader's exit (``waitid``), not the end of output: a grandchild holding the
  pipes open can't hang hz. When the leader has exited, whatever is left in its group is
  SIGKILLed, output is drained for at most ``DRAIN_SECONDS`` more, and the leader is reaped.
- At ``Limits.timeout`` (or after ``Limits.inactivity`` seconds without output) the group gets
  SIGTERM, and SIGKILL ``Limits.kill_grace`` seconds later (``group.Termination``).
- A cancellation of hz itself (the ``CancelToken`` of ``hz.runtime.process.cancel``, set by a
  signal's handler) is polled at every tick: the group is SIGKILLed at once and the value
  says ``cancelled``. Nothing is raised into the runner.
- ``on_stdout_line`` / ``on_stderr_line`` receive each line (at most ``Limits.max_line``
  bytes) as it arrives; returning True means "the final result is in": if the process then
  lingers for ``Limits.done_grace`` seconds it is stopped and the run counts as finished.
  They run on the calling thread; an exception from one kills the group and propagates.
- A missing or non-executable program, or a missing ``cwd``, is ``launch_error`` in the
  returned value, never an exception.
- ``start_bounded`` splits ``run_bounded`` in two: it spawns the child now (its own session,
  its watchdog: from the spawn on it dies with hz), and ``Started.run`` hands it its stdin
  and its limits later. The wall clock, the inactivity clock and the caps start at the
  hand-over; until then nothing of its output is read (a child that writes blocks on the
  full pipe). ``Started.discard`` (or leaving its ``with`` block unrun) kills the group
  unused. For a child that prepares itself before it reads its work: the render child
  imports Jinja2 while hz validates and compiles (decision 0022).

- The group dies with hz: a watchdog (``/bin/sh``, in a session of its own so a terminal's
  Ctrl-C does not reach it) holds the read end of a pipe only hz writes to. When hz ends
  without dismissing it — SIGKILL, a crash, the OOM killer — the pipe reads end-of-file and the
  watchdog SIGKILLs the group and removes the private directories that existed when the run
  started (``private_directory``: the prompt and contract files). hz dismisses it before it
  reaps the leader (while the group id is still held by the leader's zombie), so it never
  signals a reused group id.

Not contained: a descendant that leaves the group (``setsid``) — hz stops reading from it
after the drain, but cannot find it to kill it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence

from hz.runtime.process import cancel, observe
from hz.runtime.process.group import (
    Termination,
    check_own_group,
    living_members,
    pipe,
    signal_group,
)
from hz.runtime.process.leftovers import live_private_dirs
from hz.runtime.process.limits import Limits, ProcessOutcome
from hz.runtime.process.streams import LineCallback, StreamCapture
from hz.runtime.process.uninterrupted import to_the_end

__all__ = [
    "DRAIN_SECONDS",
    "Limits",
    "LineCallback",
    "ProcessOutcome",
    "Started",
    "run_bounded",
    "start_bounded",
]

#: How long output is still read after the leader exited and its group was killed.
DRAIN_SECONDS = 1.0
#: The watchdog's program: kill group $1 unless hz says "done" before the pipe closes.
#: Then it removes the private directories given after the group id.
_WATCHDOG = (
    'read -r word; [ "$word" = done ] && exit; kill -s KILL -- "-$1" 2>/dev/null; shift; '
    '[ "$#" -gt 0 ] && chmod -R u+rwx -- "$@" 2>/dev/null; [ "$#" -gt 0 ] && rm -rf -- "$@"'
)
_TICK = 0.05
_CHUNK = 1024 * 1024


def run_bounded(
    argv: Sequence[str],
    *,
    stdin: bytes | None,
    cwd: str,
    env: Mapping[str, str],
    limits: Limits,
    on_stdout_line: LineCallback | None = None,
    on_stderr_line: LineCallback | None = None,
) -> ProcessOutcome:
    """Run ``argv`` (no shell) in ``cwd`` with exactly ``env``; see the module docstring."""
    started = time.monotonic()
    child = start_bounded(argv, stdin_pipe=stdin is not None, cwd=cwd, env=env)
    return child.run(
        stdin,
        limits=limits,
        on_stdout_line=on_stdout_line,
        on_stderr_line=on_stderr_line,
        _started=started,
    )


def start_bounded(
    argv: Sequence[str], *, stdin_pipe: bool = True, cwd: str, env: Mapping[str, str]
) -> Started:
    """Spawn ``argv`` now, in its own session and watched by its watchdog; ``Started.run``
    gives it its stdin and its limits. See the module docstring."""
    started = time.monotonic()
    proc = spawn(argv, stdin_pipe=stdin_pipe, cwd=cwd, env=env)
    if isinstance(proc, str):
        return Started(None, proc, started)
    child = Started(proc, None, started)
    try:
        child.pgid = check_own_group(proc.pid)
        child.watchdog = _start_watchdog(child.pgid)
        observe.spawned(proc.pid, child.pgid)
    except BaseException:
        to_the_end(child.discard)
        raise
    return child


class Started:
    """A child spawned by ``start_bounded``: ``run`` it once, or ``discard`` it."""

    def __init__(
        self, proc: subprocess.Popen[bytes] | None, launch_error: str | None, spawned: float
    ) -> None:
        self.proc = proc
        self.launch_error = launch_error
        self.spawned = spawned
        self.pgid: int | None = None
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.used = False

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def run(
        self,
        stdin: bytes | None,
        *,
        limits: Limits,
        on_stdout_line: LineCallback | None = None,
        on_stderr_line: LineCallback | None = None,
        _started: float | None = None,
    ) -> ProcessOutcome:
        """Write ``stdin`` (then close it; ``None``: close it at once) and supervise the child
        under ``limits`` from now on (``run_bounded``'s ``_started``: from before the spawn)."""
        if self.used:
            raise RuntimeError("a started child runs once")
        self.used = True
        started = time.monotonic() if _started is None else _started
        if self.proc is None or self.pgid is None:  # start_bounded sets both or neither
            return ProcessOutcome(
                exit_code=None,
                launch_error=self.launch_error or "not started",
                duration_seconds=time.monotonic() - started,
            )
        watchdog, self.watchdog = self.watchdog, None  # the supervisor dismisses it now
        supervisor = _Supervisor(
            self.proc, self.pgid, watchdog, limits, started, on_stdout_line, on_stderr_line
        )
        return supervisor.run(stdin)

    def discard(self) -> None:
        """Kill the child's group unused, dismiss its watchdog and reap it (once, and not after
        ``run``)."""
        if self.used:
            return
        self.used = True
        proc = self.proc
        if proc is None:
            return
        with contextlib.suppress(Exception):
            if self.pgid is not None:
                signal_group(self.pgid, signal.SIGKILL)  # the leader is unreaped: still ours
            else:
                proc.kill()
        watchdog, self.watchdog = self.watchdog, None
        if watchdog is not None:
            _dismiss(watchdog)
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def search_path(env: Mapping[str, str]) -> str:
    """``env``'s PATH with only its absolute entries: an empty entry (``/usr/bin:``) or a
    relative one means "the current directory", where a repository could plant a program."""
    entries = env.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(entry for entry in entries if os.path.isabs(entry))


def spawn(
    argv: Sequence[str], *, stdin_pipe: bool, cwd: str, env: Mapping[str, str]
) -> subprocess.Popen[bytes] | str:
    """``argv`` started (no shell) in its own session, stdout and stderr piped, stdin piped
    or ``/dev/null``; or why it could not start. Also used by ``interactive``."""
    if not argv:
        return "empty command"
    # A bare name is looked up here, in the absolute PATH entries only: the OS would also
    # try an empty or relative entry, i.e. the working directory a repository controls.
    program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=search_path(env))
    if program is None:
        return f"{argv[0]}: program not found on PATH"
    try:
        return subprocess.Popen(
            list(argv),
            executable=program,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError) as e:
        return _launch_message(argv[0], cwd, e)


def _launch_message(program: str, cwd: str, e: OSError | ValueError) -> str:
    if isinstance(e, ValueError):
        return f"{program}: {e}"
    if isinstance(e, FileNotFoundError) and e.filename == cwd:
        return f"working directory {cwd} does not exist"
    if isinstance(e, FileNotFoundError):
        where = "" if "/" in program else " on PATH"
        return f"{program}: program not found{where}"
    if isinstance(e, PermissionError):
        return f"{program}: permission denied (is it an executable file?)"
    if e.errno == errno.ENOEXEC:
        return f"{program}: not an executable format (a script without #! line?)"
    return f"{program}: {e.strerror or e}"


def _start_watchdog(pgid: int) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            ["/bin/sh", "-c", _WATCHDOG, "hz-watchdog", str(pgid), *live_private_dirs()],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
            start_new_session=True,
            close_fds=True,
        )
    except OSError:  # no /bin/sh: the run goes on, contained only while hz lives
        return None


def _dismiss(watchdog: subprocess.Popen[bytes]) -> None:
    stdin = pipe(watchdog.stdin, "stdin")
    with contextlib.suppress(OSError):
        stdin.write(b"done\n")
    with contextlib.suppress(OSError):
        stdin.close()
    try:
        watchdog.wait(timeout=5)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait()


def _leader_exited(pid: int) -> bool:
    # WNOWAIT leaves the leader a zombie: its pid, and so its group id, can't be reused
    # while we kill what is left of the group.
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped behind our back (a SIGCHLD handler elsewhere)
        return True


class _Supervisor:
    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        pgid: int,
        watchdog: subprocess.Popen[bytes] | None,
        limits: Limits,
        started: float,
        on_stdout: LineCallback | None,
        on_stderr: LineCallback | None,
    ) -> None:
        self.proc = proc
        self.limits = limits
        self.started = started
        self.out = StreamCapture(limits.max_stdout, limits.max_line, on_stdout)
        self.err = StreamCapture(limits.max_stderr, limits.max_line, on_stderr)
        self.sel = selectors.DefaultSelector()
        self.last_output = started
        self.done_at: float | None = None
        self.pending_stdin = memoryview(b"")
        self.flags: dict[str, bool] = {}
        self.pgid = pgid
        self.watchdog = watchdog
        #: Readable once the leader exited (a pidfd), or None: then the tick notices it.
        self.exit_fd: int | None = None

    def run(self, stdin: bytes | None) -> ProcessOutcome:
        try:
            pgid = self.pgid  # checked, watched and observed at the spawn (start_bounded)
            self._register(stdin)
            self._watch_leader()
            self._supervise(pgid)
            self._finish(pgid)
        except BaseException:
            # A failing line callback or an interrupt: nothing of the run may survive it, and
            # a further interrupt must not cut the killing short.
            to_the_end(self._kill_everything)
            to_the_end(self._close)
            raise
        self._close()
        return self._outcome()

    def _kill_everything(self) -> None:
        with contextlib.suppress(Exception):
            signal_group(self.pgid, signal.SIGKILL)
        self._dismiss_watchdog()
        self.proc.wait()

    def _dismiss_watchdog(self) -> None:
        watchdog, self.watchdog = self.watchdog, None
        if watchdog is not None:
            _dismiss(watchdog)

    def _register(self, stdin: bytes | None) -> None:
        for stream, name, capture in (
            (self.proc.stdout, "stdout", self.out),
            (self.proc.stderr, "stderr", self.err),
        ):
            fd = pipe(stream, name).fileno()
            os.set_blocking(fd, False)
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _CHUNK)  # fewer wakeups when flooded
            self.sel.register(fd, selectors.EVENT_READ, capture)
        if self.proc.stdin is not None:
            self.pending_stdin = memoryview(stdin or b"")
            fd = self.proc.stdin.fileno()
            os.set_blocking(fd, False)
            if self.pending_stdin:
                self.sel.register(fd, selectors.EVENT_WRITE, None)
            else:
                self._close_stdin()

    def _watch_leader(self) -> None:
        """The leader's exit as a descriptor (Linux's pidfd) in the selector, so that the loop
        below wakes as it exits instead of at its next tick (up to ``_TICK`` later, which every
        run paid once its output was closed); without a pidfd, the tick it is."""
        try:
            fd = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            return
        self.exit_fd = fd
        self.sel.register(fd, selectors.EVENT_READ, None)

    def _unwatch_leader(self) -> None:
        fd, self.exit_fd = self.exit_fd, None
        if fd is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(fd)
            os.close(fd)

    def _supervise(self, pgid: int) -> None:
        ending: Termination | None = None
        token = cancel.current()
        while not _leader_exited(self.proc.pid):
            now = time.monotonic()
            if token is not None and token.cancelled and not self.flags.get("cancelled"):
                # hz itself was told to stop (a signal to it): the group ends at once.
                self.flags["cancelled"] = True
                ending = ending or Termination(pgid, self.limits.kill_grace)
                ending.step(now, urgent=True)
            if ending is None:
                cause = self._stop_cause(now)
                if cause is not None:
                    self.flags[cause] = True
                    ending = Termination(pgid, self.limits.kill_grace)
            if ending is not None:
                ending.step(now)
            self._pump(_TICK)

    def _stop_cause(self, now: float) -> str | None:
        if self.limits.stop_over_cap and self.out.truncated:
            return "stopped_over_cap"
        if self.done_at is not None and now - self.done_at >= self.limits.done_grace:
            return "finished_after_done"
        if now - self.started >= self.limits.timeout:
            return "timed_out" if self.done_at is None else "finished_after_done"
        inactivity = self.limits.inactivity
        if inactivity is not None and now - self.last_output >= inactivity:
            return "inactivity_timed_out"
        return None

    def _finish(self, pgid: int) -> None:
        self._unwatch_leader()
        leftovers = living_members(pgid, exclude=self.proc.pid)
        # The leader is an unreaped zombie, so the group id is still ours to signal.
        signal_group(pgid, signal.SIGKILL)
        self.flags["leftover_killed"] = bool(leftovers)
        self._dismiss_watchdog()
        self.proc.wait()
        drain_until = time.monotonic() + DRAIN_SECONDS
        while self._reading() and time.monotonic() < drain_until:
            self._pump(min(_TICK, max(drain_until - time.monotonic(), 0)))
        for key in list(self.sel.get_map().values()):
            if key.data is not None:  # still open: held by a process that left the group
                key.data.finish()

    def _reading(self) -> bool:
        return any(key.data is not None for key in self.sel.get_map().values())

    def _pump(self, timeout: float) -> None:
        if not self.sel.get_map():
            time.sleep(timeout)
            return
        for key, _ in self.sel.select(timeout):
            if key.fd == self.exit_fd:
                continue  # the leader exited: the loop's own test says so
            if key.data is None:
                self._write_stdin(key.fd)
            else:
                self._read(key.fd, key.data)

    def _read(self, fd: int, capture: StreamCapture) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            self.sel.unregister(fd)
            capture.finish()
        else:
            self.last_output = time.monotonic()
            capture.feed(chunk)
        if self.done_at is None and (self.out.done or self.err.done):
            self.done_at = time.monotonic()

    def _write_stdin(self, fd: int) -> None:
        try:
            written = os.write(fd, self.pending_stdin[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # EPIPE: the child closed stdin or exited; it chose not to read.
            self._close_stdin()
            return
        self.pending_stdin = self.pending_stdin[written:]
        if not self.pending_stdin:
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.proc.stdin is None or self.proc.stdin.closed:
            return
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(self.proc.stdin.fileno())
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def _close(self) -> None:
        self._close_stdin()
        self._unwatch_leader()
        self.sel.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def _outcome(self) -> ProcessOutcome:
        code = self.proc.returncode
        return ProcessOutcome(
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            stdout=self.out.data,
            stderr=self.err.data,
            stdout_truncated=self.out.truncated,
            stderr_truncated=self.err.truncated,
            timed_out=self.flags.get("timed_out", False),
            inactivity_timed_out=self.flags.get("inactivity_timed_out", False),
            finished_after_done=self.flags.get("finished_after_done", False),
            duration_seconds=time.monotonic() - self.started,
            cancelled=self.flags.get("cancelled", False),
            stopped_over_cap=self.flags.get("stopped_over_cap", False),
            leftover_killed=self.flags.get("leftover_killed", False),
            long_lines=self.out.long_lines + self.err.long_lines,
        )

"""``hz worker`` as a real process, started and stopped one way for every test that needs a
long-running worker (signals, a fleet, a host lost): ``running_worker(space, ...)``."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Protocol


class Starts(Protocol):
    """Where a worker is started: a ledger space (tests/helpers/ledger_env.py), or an
    ``HzCommand`` for a test's own set-up."""

    def popen(self, *args: str, **extra: str) -> subprocess.Popen[str]: ...

    def kill_recorded(self) -> None: ...


@dataclass(frozen=True)
class HzCommand:
    """``ARGV ARGS`` (``ARGV`` runs hz) in the environment ``env``: a test's own set-up."""

    argv: Sequence[str]
    env: dict[str, str]

    def popen(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.argv, *args],
            env={**self.env, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def kill_recorded(self) -> None:
        """Its agents are the test's to find and kill."""


#: How long a stopping worker may take before it is killed (and the test fails): a worker
#: settles its runs within the kill grace (2 s) after SIGTERM, a loaded machine needs more.
STOP_WITHIN = 30.0


class Worker:
    """A started ``hz worker``: its stdout lines as they come, its stderr, its exit."""

    def __init__(self, s: Starts, *args: str, host: str | None = None, **env: str) -> None:
        if host is not None:
            env["HZ_HOST_ID"] = host
        self.host = host
        self.process = s.popen("worker", *args, **env)
        #: Lines of stdout without their newline, appended as the worker prints them.
        self.lines: list[str] = []
        self._out: list[str] = []
        self._err: list[str] = []
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(self.process.stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: IO[str], is_stdout: bool) -> None:
        for line in stream:
            if is_stdout:
                self._out.append(line)
                self.lines.append(line.rstrip("\n"))
            else:
                self._err.append(line)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    @property
    def stdout(self) -> str:
        """Everything it printed on stdout (all of it once it exited and ``wait`` returned)."""
        return "".join(self._out)

    @property
    def stderr(self) -> str:
        return "".join(self._err)

    @property
    def notes(self) -> str:
        """Its stderr after the line a worker starts with, which it must have said once."""
        said = self.stderr.splitlines(keepends=True)
        started = [line for line in said if line.startswith("hz: worker: started: ")]
        assert len(started) == 1, said
        return "".join(line for line in said if line not in started)

    def send(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self, timeout: float = STOP_WITHIN) -> int:
        """Its exit status, once it exited within ``timeout`` seconds; past that it is killed
        and the test fails."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"hz worker {self.pid} did not exit within {timeout:g} s; killed"
            ) from None
        self._close()
        return self.process.returncode

    def stop(self, timeout: float = STOP_WITHIN) -> int:
        """SIGTERM (when it still runs), then ``wait(timeout)``."""
        if self.running:
            self.send(signal.SIGTERM)
        return self.wait(timeout)

    def kill(self) -> int:
        """SIGKILL: its runs are left to the ledger to find."""
        if self.running:
            self.process.kill()
        self.process.wait(timeout=30)
        self._close()
        return self.process.returncode

    def _close(self) -> None:
        for reader in self._readers:
            reader.join(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def finish(self, timeout: float = STOP_WITHIN) -> None:
        """After a failure: stop it within ``timeout``, kill it past that; never raises."""
        with contextlib.suppress(AssertionError, OSError, subprocess.TimeoutExpired):
            self.stop(timeout)
        if self.running:
            self.kill()


@contextlib.contextmanager
def running_worker(
    s: Starts, *args: str, host: str | None = None, stop_within: float = STOP_WITHIN, **env: str
) -> Iterator[Worker]:
    """``hz worker ARGS`` for the block. Leaving the block stops it if it still runs: SIGTERM,
    then SIGKILL and a failed test past ``stop_within`` seconds (``worker.returncode``,
    ``stdout`` and ``stderr`` are then complete). When the block raised, the worker is stopped
    without a second failure and the space's recorded agents are killed too."""
    worker = Worker(s, *args, host=host, **env)
    try:
        yield worker
    except BaseException:
        worker.finish(stop_within)
        s.kill_recorded()
        raise
    worker.stop(stop_within)

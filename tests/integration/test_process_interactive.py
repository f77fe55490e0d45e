"""``hz.runtime.process.interactive``: a child driven line by line, with fixed ceilings."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from hz.runtime.process.interactive import CEILINGS, Ceilings, Interactive

ENV = {"PATH": os.environ["PATH"]}
#: Short ceilings: each test waits them out instead of hz's (``CEILINGS``: 5, 2, 2 and 1 s).
SHORT = Ceilings(write=0.5, reap=0.4, collect=0.5, drain=0.3)


def start(tmp_path: Path, code: str) -> Interactive:
    proc = Interactive.start(
        [sys.executable, "-c", code], cwd=str(tmp_path), env=ENV, ceilings=SHORT
    )
    assert isinstance(proc, Interactive)
    return proc


def test_a_line_answered(tmp_path: Path) -> None:
    proc = start(tmp_path, "import sys\nfor l in sys.stdin: print(l.upper(), end='', flush=True)")
    assert proc.write_line(b"hello")
    assert proc.read_line(time.monotonic() + 10) == b"HELLO\n"
    stopped = proc.stop(graceful=True)
    assert (stopped.exit_code, stopped.signal, stopped.uncollected) == (0, None, False)


@pytest.mark.serial
def test_read_line_returns_at_the_deadline_and_at_the_end(tmp_path: Path) -> None:
    proc = start(tmp_path, "import sys, time\nsys.stdin.readline()\nprint('bye')")
    began = time.monotonic()
    assert proc.read_line(began + 0.3) is None
    assert 0.3 <= time.monotonic() - began < 2
    assert not proc.eof
    assert proc.write_line(b"go")
    assert proc.read_line(time.monotonic() + 10) == b"bye\n"
    assert proc.read_line(time.monotonic() + 10) is None
    assert proc.eof
    assert proc.stop(graceful=True).exit_code == 0


@pytest.mark.serial
def test_a_child_that_stops_reading_costs_at_most_the_write_ceiling(tmp_path: Path) -> None:
    proc = start(tmp_path, "import time\ntime.sleep(60)")
    began = time.monotonic()
    assert not proc.write_line(b"x" * (8 * 1024 * 1024))
    assert SHORT.write <= time.monotonic() - began < SHORT.write + 2
    stopped = proc.stop(graceful=False)
    assert stopped.signal == signal.SIGKILL


@pytest.mark.serial
def test_stop_settles_against_a_wedged_child(tmp_path: Path) -> None:
    # It ignores SIGTERM and stdin's end, and a detached helper holds its stderr open.
    pidfile = tmp_path / "helper.pid"
    code = (
        "import signal, subprocess, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "h = subprocess.Popen(['/bin/sleep', '30'], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(h.pid))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = start(tmp_path, code)
    assert proc.read_line(time.monotonic() + 10) == b"ready\n"
    try:
        began = time.monotonic()
        stopped = proc.stop(graceful=True)
        took = time.monotonic() - began
    finally:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert stopped.signal == signal.SIGKILL
    assert stopped.uncollected is False
    # The reap ceiling for a graceful exit, the kill, the drain ceiling for the stderr the
    # helper holds.
    assert SHORT.reap + SHORT.drain <= took < SHORT.reap * 2 + SHORT.collect + SHORT.drain + 2
    assert proc.stop(graceful=True) is stopped  # idempotent


def test_stderr_is_kept_up_to_its_cap(tmp_path: Path) -> None:
    proc = Interactive.start(
        [sys.executable, "-c", "import sys\nsys.stderr.write('e' * 100000)"],
        cwd=str(tmp_path),
        env=ENV,
        max_stderr=1000,
    )
    assert isinstance(proc, Interactive)
    assert proc.read_line(time.monotonic() + 10) is None
    stopped = proc.stop(graceful=True)
    assert (stopped.stderr, stopped.stderr_truncated) == (b"e" * 1000, True)


def test_a_missing_program_is_a_launch_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    assert Interactive.start([missing], cwd=str(tmp_path), env=ENV) == (
        f"{missing}: program not found"
    )
    assert Interactive.start([], cwd=str(tmp_path), env=ENV) == "empty command"


def test_hz_own_ceilings() -> None:
    # What docs/runners/codex-app-server.md and the module's docstring promise.
    assert (CEILINGS.write, CEILINGS.reap, CEILINGS.collect, CEILINGS.drain) == (5, 2, 2, 1)


@pytest.mark.parametrize("value", [0, -1, 61, float("nan"), float("inf")])
def test_a_ceiling_out_of_bounds_is_refused(value: float) -> None:
    with pytest.raises(ValueError) as raised:
        Ceilings(drain=value)
    assert str(raised.value) == f"Ceilings.drain must be in (0, 60] seconds, got {value!r}"

"""``hz worker`` with stderr on a terminal says when it is idle: once each time it becomes
idle, however often it looks. A real process, its stderr a pseudo-terminal; both ledgers."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.ledger_env import Space, space, until

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

IDLE = "hz: worker: idle: nothing queued; waiting for runs (hz submit)"


@pytest.fixture(params=["sqlite", "postgres"])
def s(request: pytest.FixtureRequest, tmp_path: Path) -> Space:
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    return space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)


def test_a_worker_on_a_terminal_says_once_when_it_becomes_idle(s: Space) -> None:
    main, secondary = pty.openpty()
    worker = subprocess.Popen(
        [sys.executable, "-m", "hz", "worker"],
        cwd=s.root,
        env=s.env(),
        stdout=subprocess.PIPE,
        stderr=secondary,
        text=True,
    )
    os.close(secondary)
    said: list[str] = []

    def read() -> None:
        text = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the worker's end is closed
                break
            if not chunk:
                break
            text += chunk
            said[:] = text.decode().replace("\r\n", "\n").splitlines()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        until(lambda: IDLE in said, what="the first idle notice")
        began = time.monotonic()
        run_id = s.submit("Ann")
        until(lambda: said.count(IDLE) == 2, what="idle again after the run")
        time.sleep(max(0.0, 2.5 - (time.monotonic() - began)))  # two more looks, at least
    finally:
        worker.send_signal(signal.SIGTERM)
        out, _ = worker.communicate(timeout=30)
        reader.join(timeout=10)
        os.close(main)
    assert worker.returncode == 0
    assert out == f"{run_id}  completed  greet  greet.yaml\n"
    assert said == [s.worker_started().rstrip("\n"), IDLE, IDLE]


def test_off_a_terminal_a_worker_says_only_that_it_started(s: Space) -> None:
    done = s.hz("worker", "--drain")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", s.worker_started())

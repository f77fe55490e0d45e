"""A hostile fake agent for the conformance kit: one real process per scenario.

    python -m hz.runtime.testing.fake_agent SCENARIO STATE_DIR [ignored arguments...]

It ignores every other argument, so it can stand in for any agent CLI (a runner's
``*_executable`` pointing at a wrapper script that runs it). At start it writes its
environment to ``STATE_DIR/env.json`` and its pid and process group to ``STATE_DIR/pids``,
then:

- ``sleep``: ignores SIGTERM, starts a child in its group that sleeps too, sleeps an hour;
- ``crash``: writes to stderr, exits 3;
- ``flood``: writes 64 MiB to stdout without a newline, then sleeps;
- ``garbage``: writes invalid UTF-8, NUL bytes, terminal escapes, unbalanced JSON and a
  100,000-deep JSON array, one per line, then exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCENARIOS: tuple[str, ...] = ("sleep", "crash", "flood", "garbage")


def _record(state: Path) -> None:
    (state / "env.json.tmp").write_text(json.dumps(dict(os.environ)))
    (state / "env.json.tmp").replace(state / "env.json")
    with (state / "pids").open("a") as pids:
        pids.write(f"{os.getpid()} {os.getpgid(0)}\n")


def main(argv: list[str]) -> int:
    scenario, state = argv[0], Path(argv[1])
    _record(state)
    out = sys.stdout.buffer
    if scenario == "sleep":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with (state / "pids").open("a") as pids:
            pids.write(f"{child.pid} {os.getpgid(0)}\n")
        time.sleep(3600)
    elif scenario == "crash":
        sys.stderr.write("the fake agent crashed\n")
        return 3
    elif scenario == "flood":
        block = b"x" * (1024 * 1024)
        for _ in range(64):
            out.write(block)
        out.flush()
        time.sleep(3600)
    elif scenario == "garbage":
        for line in (
            b"\xff\xfe\xfa not utf-8",
            b"\x00\x00\x00",
            b"\x1b[2J\x1b]0;title\x07",
            b'{"type": "result", "unbalanced": [',
            b'{"type":"result","subtype":"success","total_cost_usd":NaN}',
            b"[" * 100_000 + b"]" * 100_000,
        ):
            out.write(line + b"\n")
        out.flush()
    else:
        sys.stderr.write(f"unknown scenario {scenario}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

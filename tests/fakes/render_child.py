"""The render child with filters that misbehave the way a missed check could.

``hz.compiler.render.bound.CHILD_MODULE`` set to this module makes renders run here:

- ``nap``: sleeps two minutes in C (untraced): only the wall clock stops it;
- ``spin``: loops in C (untraced): RLIMIT_CPU stops it;
- ``hog``: asks for 2 GiB (mapped, never touched: only RLIMIT_AS refuses it);
- ``leave``: raises ``SystemExit(7)``, which no handler of the render catches;
- ``flood``: writes a line to stdout outside the outcome, so the outcome is no JSON;
- ``killed``: SIGKILLs its own process, as the kernel's out-of-memory killer does.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

from hz.compiler.render.child import main as real_main
from hz.compiler.render.sandbox import environment


def nap(value: Any) -> Any:
    time.sleep(120)
    return value


def spin(value: Any) -> Any:
    sum(range(10**12))
    return value


def hog(value: Any) -> Any:
    return len(bytearray(2 * 1024**3))


def leave(value: Any) -> Any:
    raise SystemExit(7)


def flood(value: Any) -> Any:
    sys.stdout.write("not an outcome\n")
    return value


def killed(value: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)
    return value


def main() -> int:
    environment().filters.update(
        nap=nap, spin=spin, hog=hog, leave=leave, flood=flood, killed=killed
    )
    return real_main()

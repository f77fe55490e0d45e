"""Hard bounds on rendering: a deadline inside, and a child process with limits outside.

The sandbox checks sizes before work it can see, and a line tracer stops template code that
loops past the deadline. Neither sees C-level work a check missed (a filter building a huge
string, a regex, a big integer), so on POSIX the render runs in a forked child with an
address-space limit (RLIMIT_AS), a CPU-time limit (RLIMIT_CPU) and a wall-clock timeout:
whatever slips through ends the child, never hz. Forking costs a few milliseconds.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

#: Extra address space the child may take on top of what it inherits.
MEMORY_HEADROOM = 512 * 1024 * 1024
#: How long past its deadline a child may run before it is killed (its own tracer, and then
#: RLIMIT_CPU, normally end it first).
GRACE_SECONDS = 5.0
#: The template's own name in Jinja tracebacks, to find its frames.
TEMPLATE_NAME = "<template>"

#: The child's exit status when even sending its outcome ran out of memory.
_OUT_OF_MEMORY = 3
#: What a render gives back: ``("ok", prompt)`` or ``("fail", code, message, template_line)``.
Outcome = tuple[Any, ...]


class RenderTimeout(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Stop template code that runs past ``seconds``.

    Nested loops over ``range`` or a large input can spin for hours without producing a
    byte. A line tracer on the template's own frames checks the clock every few thousand
    lines (so the failure has a template line); other code runs untraced.
    """
    end = time.monotonic() + seconds
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        if count % 4096 == 0 and time.monotonic() > end:
            raise RenderTimeout
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == TEMPLATE_NAME else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        yield
    finally:
        sys.settrace(previous)


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit_child(seconds: float) -> None:
    import resource

    cpu = math.ceil(seconds) + 1  # past the tracer's deadline, so that one reports first
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    size = _address_space()
    if size is not None:
        limit = size + MEMORY_HEADROOM
        with contextlib.suppress(ValueError, OSError):  # a lower hard limit already bounds it
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_bounded(render: Callable[[], Outcome], seconds: float) -> Outcome:
    """``render()`` in a forked child under limits; in-process where there is no fork.

    Besides ``render()``'s own outcomes: ``("timeout",)`` past the wall clock or the CPU
    limit, ``("memory",)`` when the child ran out of memory outside ``render()``'s own
    handling, ``("crashed", exit_status)`` for anything else.
    """
    if not hasattr(os, "fork"):
        return render()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: render, send the outcome, leave without running any cleanup
        code = 0
        try:
            os.close(read_end)
            _limit_child(seconds)
            data = json.dumps(render()).encode("utf-8", "surrogatepass")
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view) :]
        except MemoryError:
            code = _OUT_OF_MEMORY
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    return _collect(pid, read_end, seconds)


def _collect(pid: int, read_end: int, seconds: float) -> Outcome:
    end = time.monotonic() + seconds + GRACE_SECONDS
    chunks: list[bytes] = []
    timed_out = False
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                timed_out = True
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if timed_out:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    signalled = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    if timed_out or signalled == signal.SIGXCPU:
        return ("timeout",)
    if signalled == signal.SIGKILL or os.waitstatus_to_exitcode(status) == _OUT_OF_MEMORY:
        return ("memory",)  # SIGKILL that was not ours: the kernel's out-of-memory killer
    if not chunks or signalled is not None or os.waitstatus_to_exitcode(status) != 0:
        return ("crashed", os.waitstatus_to_exitcode(status))
    outcome = json.loads(b"".join(chunks).decode("utf-8", "surrogatepass"))
    return tuple(outcome)

"""The bounded render process, started by ``hz.compiler.render.bound`` (``child_argv``).

Reads one job from stdin — ``{"template": str, "inputs": {...}, "seconds": float,
"memory_headroom": int}`` — limits itself (address space: what it holds once the job is read,
plus ``memory_headroom``; CPU time: ``seconds`` past what it has used, plus one), says so on
stdout (``TAKEN``), renders, and writes the outcome after it as JSON
(``hz.compiler.render.outcome``). Exit status 0 when an
outcome was written, ``EXIT_OUT_OF_MEMORY`` when even that ran out of memory, 1 for anything else.
``hz.compiler.render.bound`` starts it and reads the rest from how it ended.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import sys
import traceback

from hz.compiler.render.outcome import EXIT_OUT_OF_MEMORY, TAKEN


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def limit_self(seconds: float, memory_headroom: int) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    # Past the tracer's deadline, so that one reports first (with a template line).
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    size = _address_space()
    if size is not None:
        limit = size + memory_headroom
        with contextlib.suppress(ValueError, OSError):  # a lower hard limit already bounds it
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> int:
    try:
        from hz.compiler.render.generate import generate
        from hz.compiler.render.outcome import finished_json

        job = json.loads(sys.stdin.buffer.read())
        seconds = float(job["seconds"])
        limit_self(seconds, int(job["memory_headroom"]))
        sys.stdout.buffer.write(TAKEN)
        sys.stdout.buffer.flush()  # out now: a death after it is the render's
        text = finished_json(generate(job["template"], job["inputs"], seconds))
        sys.stdout.write(text)
        sys.stdout.flush()
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    except BaseException:  # a failure of hz, or SystemExit from a filter: for the record
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Hard bounds on rendering: a deadline inside, and a child process with limits outside.

The sandbox checks sizes before work it can see, and a line tracer stops template code that
loops past the deadline. Neither sees C-level work a check missed (a filter building a huge
string, a regex, a big integer), so on POSIX the render runs in a child process
(``hz.compiler.render.child``) started through the one process chokepoint
(``hz.runtime.process.bounded.run_bounded``) with an address-space limit (RLIMIT_AS), a CPU-time
limit (RLIMIT_CPU) and a wall-clock timeout: whatever slips through ends the child, never hz.
A fresh interpreter rather than a fork, because hz may have threads, and forking a threaded
process can leave the child holding locks nobody will release. It costs more than a fork did:
the child starts Python and imports Jinja, about 60 ms more CPU time per render (100 ms instead
of 40 ms on the 2-core development machine), once per ``hz render`` or ``hz run``.
docs/decisions/0022-render-isolation-cost.md says why neither a fork nor rendering in process
replaces it, and that it is started early instead: ``start_early`` spawns the child as a
command that will render begins (``hz run CONTRACT``, ``hz render``), so that its interpreter
and Jinja2 start beside hz's own imports, validation and compile; the first render hands it
the job (``start_bounded``: its clock starts then), and ``discard_early`` kills it unused
when nothing rendered. The early child waits for as long as hz validates, compiles and
fetches: if it ends before it has read its job (the OOM killer under unrelated pressure, an
operator's kill, a spawn that failed), the render starts a fresh child, once, instead of
blaming the template (the child's ``TAKEN`` on stdout says it had the job). This module
imports neither Jinja2 nor the renderer until a render runs in process, so that starting
early costs the command nothing it would not pay anyway.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hz
from hz.compiler.render.outcome import (
    EXIT_OUT_OF_MEMORY,
    TAKEN,
    Crashed,
    Outcome,
    OutOfMemory,
    TimedOut,
    finished_from_json,
)

if sys.platform != "win32":  # the chokepoint is POSIX-only; elsewhere renders stay in-process
    from hz.runtime.process.bounded import Limits, ProcessOutcome, start_bounded
if TYPE_CHECKING:
    from hz.runtime.process.bounded import Started

#: How long past its deadline a child may run before it is stopped (its own tracer, and then
#: RLIMIT_CPU, normally end it first).
GRACE_SECONDS = 5.0
#: Whether renders run in a bounded child process (POSIX).
ISOLATED = sys.platform != "win32"
#: The module whose ``main()`` the child runs.
CHILD_MODULE = "hz.compiler.render.child"
#: Room for the child's JSON outcome: the prompt cap, escaped to ASCII.
_MAX_OUTPUT = 16 * 1024 * 1024
#: The child started early (at most one), until a render takes it or it is discarded.
_early: list[Started] = []
_early_lock = threading.Lock()


def start_early() -> None:
    """Start the render child now, for the first render of this process to use."""
    if not ISOLATED:
        return
    with _early_lock:
        if not _early:
            _early.append(_spawn())


def discard_early() -> None:
    """Kill the child started early if no render took it."""
    with _early_lock:
        unused = _early.pop() if _early else None
    if unused is not None:
        unused.discard()


def _spawn() -> Started:
    # Nothing of hz's environment (no credential), the root as its working directory.
    return start_bounded(child_argv(), cwd=os.path.abspath(os.sep), env={})


def _child() -> Started:
    with _early_lock:
        early = _early.pop() if _early else None
    return early if early is not None else _spawn()


def render_bounded(template: str, values: dict[str, Any], seconds: float) -> Outcome:
    """Render ``template`` with ``values`` in a bounded child; in-process where there is none.

    Besides the render's own outcomes (``Rendered``, ``Failed``): ``TimedOut`` past the wall
    clock or the CPU limit, ``OutOfMemory`` when the child ran out of memory outside the
    render's own handling, ``Crashed`` for anything else.
    """
    from hz.compiler.render.generate import MEMORY_HEADROOM, generate

    if not ISOLATED:
        return generate(template, values, seconds)
    job = {
        "template": template,
        "inputs": values,
        "seconds": seconds,
        "memory_headroom": MEMORY_HEADROOM,
    }
    given = json.dumps(job).encode("ascii")
    limits = Limits(
        timeout=seconds + GRACE_SECONDS,
        kill_grace=0.5,
        max_stdout=_MAX_OUTPUT,
        max_stderr=64 * 1024,
    )
    ended = _child().run(given, limits=limits)
    if not _taken(ended) and not ended.cancelled:
        # It ended, or never started, without the job: killed while it waited (started early,
        # it lives through validation, compile and fetches), or a spawn that failed now. No
        # fault of the template: a fresh child, once; a second such end is reported.
        ended = _spawn().run(given, limits=limits)
    return outcome_of(ended)


def _taken(ended: ProcessOutcome) -> bool:
    """Whether the child read its job and limited itself (``TAKEN``) before it ended."""
    return ended.stdout.startswith(TAKEN)


def outcome_of(ended: ProcessOutcome) -> Outcome:
    """What a child's end means for the render. Memory is blamed only once the child had its
    job and its limits: an end before that is no outcome of the template's."""
    if ended.launch_error is not None:
        return Crashed(None, ended.launch_error)
    if ended.timed_out or ended.signal == signal.SIGXCPU:
        return TimedOut()
    if _taken(ended) and (ended.signal == signal.SIGKILL or ended.exit_code == EXIT_OUT_OF_MEMORY):
        return OutOfMemory()  # SIGKILL that was not ours: the kernel's out-of-memory killer
    status = -ended.signal if ended.signal is not None else ended.exit_code
    if status != 0 or ended.stdout_truncated or not _taken(ended):
        return Crashed(status)
    try:
        return finished_from_json(ended.stdout[len(TAKEN) :])
    except ValueError:  # no outcome, or not one (json.JSONDecodeError is a ValueError)
        return Crashed(0)


def child_argv() -> list[str]:
    """This interpreter, isolated from the environment and the site (``-I -S``), with just the
    folders hz and Jinja were imported from appended to its path: the child renders with the
    very code this process would, and nothing on the path can shadow the standard library.
    Jinja's folders are found without importing it (``find_spec`` of a top-level package)."""
    folders = [str(Path(hz.__file__ or "").parent.parent)]
    for name in ("jinja2", "markupsafe"):
        spec = importlib.util.find_spec(name)
        folders.append(str(Path((spec and spec.origin) or "").parent.parent))
    code = (
        f"import sys; sys.path += {list(dict.fromkeys(folders))!r}; "
        f"from {CHILD_MODULE} import main; sys.exit(main())"
    )
    return [sys.executable, "-I", "-S", "-c", code]

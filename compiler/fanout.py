"""``hz validate`` of many files: the per-file work split over processes when it pays.

A check of hundreds of contracts spends most of its time per file (loading, the checks), all
of it CPU. ``check_each`` gives ``validate_each``'s verdicts — each valid contract's name
instead of the contract, which is all ``hz validate`` reports — in the order of ``files``.
With enough files and more than one CPU it validates the first file itself (paying the lazy
imports once, so that every child inherits them), forks one child per further CPU, each with
a contiguous share of the files, checks the first share itself and then reads each child's
verdicts, in order, from a pipe. A child that fails in any way (killed, an exception, a
short read) costs only time: the parent checks that share itself, so the output, the exit
status and any "unexpected error" are those of a serial check. No fork happens when the
process runs threads (forking one is unsafe), reads stdin or ignores SIGCHLD (its children's
ends would go unseen), and no more children are forked than the load average leaves CPUs
idle (or exactly as many as the caller asks for: ``hz`` reads ``HZ_PROCESSES``).

No child outlives the parent (decision 0027). A child keeps only its own pipe: it closes the
read ends the parent holds for the children forked before it (else a child blocked on a full
pipe would wait for a reader that is gone). It asks the kernel for SIGKILL when the parent
dies (Linux: ``PR_SET_PDEATHSIG``), so not even a SIGKILLed ``hz`` leaves one at work. And
when the parent leaves early (an exception, KeyboardInterrupt, a signal turned into an
exception, a consumer that stops reading), it SIGKILLs every child it has not collected and
reaps it: never a wait on a child that may be blocked or still busy.
"""

from __future__ import annotations

import functools
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar

from hz.compiler.checks.tools import PolicySource
from hz.compiler.contract import Contract
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.validate import (
    DEFAULT_MAX_USD_CEILING,
    Ceiling,
    expand_paths,
    gather,
    validate_each,
    validate_paths,
)
from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.publish_targets import TARGETS, Target
from hz.runtime.process.uninterrupted import to_the_end

#: Files per process below which a fork costs more than it saves (≈ 0.5 ms a file against a
#: few ms to fork and collect, and ≈ 10 % more CPU in all; benchmarks/README.md).
MIN_FILES_PER_PROCESS = 100
#: At most this many processes, whatever the machine.
MAX_PROCESSES = 8

#: linux/prctl.h
_PR_SET_PDEATHSIG = 1

Verdict = tuple[str | None, list[Diagnostic]]
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class CheckRun:
    """What ``hz validate`` reports: the names of the valid contracts and every diagnostic;
    the valid contracts themselves only when asked for (``keep``)."""

    names: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    files_checked: int
    empty_dirs: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    contracts: tuple[Contract, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


def check_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    max_usd_ceiling: Ceiling = DEFAULT_MAX_USD_CEILING,
    stdin: BinaryIO | None = None,
    tools: PolicySource | None = None,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
    processes: int | None = None,
    keep: bool = False,
) -> CheckRun:
    """``validate_paths`` for a report: the same diagnostics, the valid contracts' names;
    with ``keep`` the contracts too (checked in this process: they do not cross processes)."""
    if keep:
        run = validate_paths(
            paths,
            max_usd_ceiling=max_usd_ceiling,
            stdin=stdin,
            tools=tools,
            operations=operations,
            targets=targets,
        )
        names = tuple(c.name for c in run.contracts)
        return CheckRun(
            names, run.diagnostics, run.files_checked, run.empty_dirs, run.skipped, run.contracts
        )
    expansion = expand_paths(paths)
    names, diags = gather(
        expansion,
        check_each(
            expansion.files,
            max_usd_ceiling=max_usd_ceiling,
            stdin=stdin,
            tools=tools,
            operations=operations,
            targets=targets,
            processes=processes,
        ),
    )
    return CheckRun(names, diags, len(expansion.files), expansion.empty_dirs, expansion.skipped)


def check_each(
    files: Sequence[str],
    *,
    max_usd_ceiling: Ceiling = DEFAULT_MAX_USD_CEILING,
    stdin: BinaryIO | None = None,
    tools: PolicySource | None = None,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
    processes: int | None = None,
) -> Iterator[Verdict]:
    """The verdict of each file, in order; ``processes`` caps the processes (default: the
    CPUs this process may use)."""

    def serial(share: Sequence[str]) -> list[Verdict]:
        found = validate_each(
            share,
            max_usd_ceiling=max_usd_ceiling,
            stdin=stdin,
            tools=tools,
            operations=operations,
            targets=targets,
        )
        return [(None if c is None else c.name, d) for c, d in found]

    if "-" in files:  # stdin is read once, by this process
        yield from serial(files)
        return
    yield from fan_out(files, serial, processes=processes)


def fan_out(
    items: Sequence[str],
    work: Callable[[Sequence[str]], list[R]],
    *,
    processes: int | None = None,
) -> Iterator[R]:
    """``work``'s results for ``items``, in order: ``work`` of a share of the items returns
    one picklable result per item. Split over forked processes as the module docstring
    says (``processes``: that many, whatever the CPUs and the load; default: the CPUs this
    process may use, no more than the load average leaves idle); otherwise ``work(items)``
    here. Either way at least ``MIN_FILES_PER_PROCESS`` items a process."""
    count = _processes(len(items) - 1, processes)
    if count < 2 or threading.active_count() > 1 or _children_vanish():
        yield from work(items)
        return
    yield from work(items[:1])  # the lazy imports, once, before the fork
    shares = _split(items[1:], count)
    children: list[_Child] = []
    try:
        for share in shares[1:]:  # one at a time: an interrupt leaves each forked one listed
            children.append(_fork(work, share, [c.fd for c in children]))
        mine = work(shares[0])
        yield from mine
        for i, share in enumerate(shares[1:]):
            got = _collect(children[i])
            yield from got if got is not None else work(share)
    finally:
        # After an exception or an early stop: no child is left behind, and none waited for
        # (it may be blocked on a full pipe, or busy with a share nobody will read). Repeated
        # when a further interrupt cuts it short.
        to_the_end(lambda: _stop(children))


def _children_vanish() -> bool:
    """Whether this process was started with SIGCHLD ignored: its children are then reaped by
    the kernel as they end, so no wait status tells how one ended, and its pid may be another
    process's by the time a SIGKILL is sent to it."""
    return signal.getsignal(signal.SIGCHLD) is signal.SIG_IGN


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _processes(files: int, asked: int | None) -> int:
    most = min(MAX_PROCESSES, files // MIN_FILES_PER_PROCESS)
    if asked is not None:
        return max(1, min(asked, most))
    return max(1, min(_cpus(), most, _idle_cpus() if most > 1 else 1))


def _idle_cpus() -> int:
    """This process's CPU and those the load average leaves idle (``make -l`` judges the
    same way): on a saturated machine a child only adds its overhead."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1
    cpus = _cpus()
    return min(cpus, 1 + max(0, round(cpus - load)))


def _split(files: Sequence[str], count: int) -> list[Sequence[str]]:
    """``count`` contiguous shares of nearly equal size."""
    size, extra = divmod(len(files), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (i < extra)
        out.append(files[start:end])
        start = end
    return out


@dataclass(slots=True)
class _Child:
    pid: int  # -1 when it could not be started or has been reaped
    fd: int  # the read end of its pipe; -1 when closed


def _fork(
    work: Callable[[Sequence[str]], list[R]], share: Sequence[str], others: Sequence[int]
) -> _Child:
    """Fork a child for ``share``; ``others`` are the read ends this process holds for the
    children forked before, which the child closes."""
    try:
        read, write = os.pipe()
    except OSError:
        return _Child(-1, -1)
    die_with_me = _parent_death_signal()  # looked up here: once, not in every child
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return _Child(-1, -1)
    if pid == 0:  # the child: never returns into the parent's frames
        status = 1
        try:
            die_with_me()
            if os.getppid() != parent:  # the parent died before the request took effect
                os._exit(1)
            for fd in (read, *others):
                if fd >= 0:
                    os.close(fd)
            data = pickle.dumps(work(share), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    return _Child(pid, read)


def _collect(child: _Child) -> list[Any] | None:
    """The child's verdicts, or None when it did not deliver them (its share is redone)."""
    fd, child.fd = child.fd, -1  # the file object closes it from here on
    if fd < 0:
        return None
    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    if _reap(child) != 0 or not data:
        return None
    try:
        got: list[Any] = pickle.loads(data)  # noqa: S301 - our own forked child's bytes
    except Exception:
        return None
    return got


def _reap(child: _Child) -> int:
    """Close the pipe, wait for the child; its wait status (-1 when there is none). Called
    once the child has written all it will (its pipe read to the end) or been killed."""
    if child.fd >= 0:
        os.close(child.fd)
        child.fd = -1
    if child.pid < 0:
        return -1
    _, status = os.waitpid(child.pid, 0)
    child.pid = -1
    return status


def _stop(children: Sequence[_Child]) -> None:
    """SIGKILL every child not yet reaped, then reap them all: bounded whatever a child is
    doing. Idempotent (a reaped child is marked so)."""
    for child in children:
        if child.fd >= 0:
            os.close(child.fd)
            child.fd = -1
        if child.pid >= 0:
            os.kill(child.pid, signal.SIGKILL)  # not reaped yet: the pid is still ours
    for child in children:
        _reap(child)


@functools.cache
def _parent_death_signal() -> Callable[[], None]:
    """What a child calls first: ask the kernel to SIGKILL it when this process dies
    (``prctl(PR_SET_PDEATHSIG)``, Linux). Elsewhere nothing: the parent's cleanup and the
    EPIPE on the child's write then end it."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    import ctypes  # only a process that forks pays its import

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

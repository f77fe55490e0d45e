"""The fan-out's forked processes (compiler/fanout.py) never outlive hz, never hang it and never
spoil a compile (decision 0027). Real ``hz`` processes: the fork and the signals are the point.
``HZ_PROCESSES=3`` forks two children whatever the machine's CPUs and load; a sitecustomize
hook holds each process at a known point and reports through a pipe, so nothing sleeps."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from gen_contracts import generate  # noqa: E402

#: 3 processes of 100 files each, after the first file (MIN_FILES_PER_PROCESS).
FILES = 301
#: Bound on any one wait: a hang fails the test instead of the suite.
WAIT = 60

# The per-file work of validate and compile both go through validate_each: the hook wraps it.
# A child reports "PID PIPES" (PIPES: the pipe descriptors it holds but the hook's) once its
# share is done (for compile: staged); in "hold" it then blocks on HOLD for good, and the
# parent blocks in its own share until GO says "bug" (raise) or a signal comes. In "die5" a
# child SIGKILLs itself once it has staged 5 jobs.
HOOK = """
import os, stat
PARENT = os.getpid()
MODE = os.environ["FANOUT_HOOK"]
READY, GO, HOLD = (int(os.environ[f"FANOUT_{n}_FD"]) for n in ("READY", "GO", "HOLD"))
import hz.compiler.fanout as fanout
import hz.compiler.validate as validate
real = validate.validate_each

def pipes():
    held = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in (READY, GO, HOLD):
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    held.append(fd)
            except OSError:
                pass
    return len(held)

def hooked(files, **kw):
    files = list(files)
    if len(files) < 2:  # the first file, checked before the fork
        yield from real(files, **kw)
        return
    if os.getpid() == PARENT:
        if MODE == "hold" and os.read(GO, 16) == b"bug":
            raise RuntimeError("a bug")
        yield from real(files, **kw)
        return
    for n, verdict in enumerate(real(files, **kw)):
        if MODE == "die5" and n == 5:
            os.kill(os.getpid(), 9)
        yield verdict
    os.write(READY, f"{os.getpid()} {pipes()}\\n".encode())
    if MODE == "hold":
        os.read(HOLD, 1)

validate.validate_each = hooked
fanout.validate_each = hooked
"""


@dataclass
class Hooked:
    """An ``hz`` process under the hook, and the test's ends of its pipes."""

    process: subprocess.Popen[str]
    ready: int
    go: int
    hold: int

    def reports(self, count: int) -> list[tuple[int, int]]:
        """The first ``count`` children's reports (pid, pipes held)."""
        data = b""
        while data.count(b"\n") < count:
            readable, _, _ = select.select([self.ready], [], [], WAIT)
            assert readable, f"no report within {WAIT} s: {data!r}"
            chunk = os.read(self.ready, 4096)
            assert chunk, f"the pipe closed after {data!r}"
            data += chunk
        return [
            (int(p), int(n))
            for p, n in (line.split() for line in data.decode().split("\n")[:count])
        ]

    def end(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=WAIT)
        return self.process.returncode, out, err


#: ``start(MODE, *ARGS, processes="3")``: ``hz ARGS`` under the hook in MODE.
Start = Callable[..., Hooked]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "hz.toml").touch()
    generate(tmp_path / "contracts", FILES)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    return tmp_path


@pytest.fixture
def start(project: Path, hz_argv: list[str]) -> Iterator[Start]:
    started: list[Hooked] = []

    def run(mode: str, *args: str, processes: str = "3", sigchld: str = "SIG_DFL") -> Hooked:
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        hold_r, hold_w = os.pipe()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(project / "hook"), str(REPO)]),
            "HZ_PROCESSES": processes,
            "FANOUT_HOOK": mode,
            "FANOUT_READY_FD": str(ready_w),
            "FANOUT_GO_FD": str(go_r),
            "FANOUT_HOLD_FD": str(hold_r),
        }
        # hz as a parent that set SIGCHLD's disposition would start it (kept across exec).
        exec_hz = (
            "import os, signal, sys\n"
            f"signal.signal(signal.SIGCHLD, signal.{sigchld})\n"
            "os.execv(sys.argv[1], sys.argv[1:])\n"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", exec_hz, *hz_argv, *args],
            cwd=project,
            env=env,
            pass_fds=(ready_w, go_r, hold_r),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for fd in (ready_w, go_r, hold_r):
            os.close(fd)
        started.append(Hooked(process, ready_r, go_w, hold_w))
        return started[-1]

    yield run
    for hooked in started:  # whatever the test saw: nothing of it stays behind
        if hooked.process.poll() is None:
            hooked.process.kill()
        for fd in (hooked.ready, hooked.go, hooked.hold):
            os.close(fd)  # a child still held reads EOF on HOLD and ends
        hooked.process.communicate(timeout=WAIT)  # its stdout: until no child holds it


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_child_holds_no_pipe_but_its_own(start: Start) -> None:
    hz = start("fds", "validate", "contracts")
    reports = hz.reports(2)
    # Before, the second child also held the read end of the first one's pipe: the first,
    # blocked writing into a full pipe, never got EPIPE once the parent closed its end.
    assert [pipes for _, pipes in reports] == [1, 1]
    assert hz.end()[0] == 0


def test_ctrl_c_while_children_work_ends_at_once_with_none_left(start: Start) -> None:
    hz = start("hold", "validate", "contracts")
    children = [pid for pid, _ in hz.reports(2)]
    hz.process.send_signal(signal.SIGINT)
    # Before, the parent waited for children blocked in their share (or on a full pipe):
    # forever.
    assert hz.end() == (130, "", "\nhz: aborted\n")
    assert [gone(pid) for pid in children] == [True, True]


def test_a_bug_in_the_parent_while_children_work_exits_3_with_none_left(start: Start) -> None:
    hz = start("hold", "validate", "contracts")
    children = [pid for pid, _ in hz.reports(2)]
    os.write(hz.go, b"bug")
    code, out, err = hz.end()
    assert (code, out) == (3, "")
    assert err.startswith("hz: unexpected error: RuntimeError: a bug\n")
    assert [gone(pid) for pid in children] == [True, True]


def test_a_compile_child_that_dies_costs_only_time(start: Start, project: Path) -> None:
    serial = start("die5", "compile", "contracts", "--out", "serial", processes="1")
    assert serial.end()[0] == 0
    fanned = start("die5", "compile", "contracts", "--out", "jobs")
    # Before, the parent's redo of the dead children's shares found their staged files:
    # "cannot write .../.hz-compile-*/NAME.job.json: File exists", exit 2.
    code, out, err = fanned.end()
    assert (code, out) == (0, "")
    assert err.endswith(f"{FILES} jobs in jobs: {FILES} written, 0 unchanged, 0 removed\n")
    names = sorted(p.name for p in (project / "serial").iterdir())
    assert sorted(p.name for p in (project / "jobs").iterdir()) == names
    assert len(names) == FILES
    for name in names:
        assert (project / "jobs" / name).read_bytes() == (project / "serial" / name).read_bytes()


def test_sigterm_to_compile_kills_the_children_and_removes_the_staging(
    start: Start, project: Path
) -> None:
    hz = start("hold", "compile", "contracts", "--out", "jobs")
    children = [pid for pid, _ in hz.reports(2)]  # each has staged its share
    # The first file (the parent's, before the fork) and the children's shares.
    assert len(list((project / "jobs").glob(".hz-compile-*/*.job.json"))) == 1 + 200
    hz.process.send_signal(signal.SIGTERM)
    # Before, hz died at once, its children went on staging jobs into jobs/ (here: stayed
    # held), and the staging directory stayed.
    assert hz.end() == (143, "", "hz: aborted\n")
    assert [gone(pid) for pid in children] == [True, True]
    assert not (project / "jobs").exists()  # made by the compile, removed with it


def test_children_die_with_a_sigkilled_compile(start: Start, project: Path) -> None:
    hz = start("hold", "compile", "contracts", "--out", "jobs")
    children = [os.pidfd_open(pid) for pid, _ in hz.reports(2)]
    try:
        hz.process.kill()  # no cleanup is possible: the kernel ends the children
        assert hz.process.wait(timeout=WAIT) == -signal.SIGKILL
        for pidfd in children:
            readable, _, _ = select.select([pidfd], [], [], WAIT)
            assert readable == [pidfd]  # the child has ended (held on HOLD, it never would)
    finally:
        for pidfd in children:
            os.close(pidfd)
    [stale] = (project / "jobs").glob(".hz-compile-*")
    # The next compile removes the staging directory nobody holds any more.
    again = start("none", "compile", "contracts", "--out", "jobs", processes="1")
    assert again.end()[0] == 0
    assert not stale.exists()
    assert len(list((project / "jobs").iterdir())) == FILES


def test_hz_started_with_sigchld_ignored_does_not_fork(start: Start) -> None:
    hz = start("fds", "validate", "contracts", sigchld="SIG_IGN")
    # Before, the kernel reaped each child as it ended, and the parent's wait for it raised
    # ChildProcessError: "unexpected error", exit 3.
    code, _, err = hz.end()
    assert (code, err.count("error:")) == (0, 0)
    assert os.read(hz.ready, 4096) == b""  # no child reported: none was forked

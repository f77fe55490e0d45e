"""The outer bound on rendering: a child process with memory, CPU and wall-clock limits."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

import hz.cli
import hz.compiler.render.bound
import hz.compiler.render.packet
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.render.bound import outcome_of, render_bounded
from hz.compiler.render.generate import OUT_OF_MEMORY
from hz.compiler.render.outcome import Crashed, Failed, OutOfMemory, Rendered, TimedOut
from hz.compiler.render.packet import TemplatePlace, render_prompt
from hz.runtime.process.bounded import Started
from hz.runtime.process.limits import ProcessOutcome
from tests.fakes.agent import is_gone


@pytest.fixture
def misbehaving(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.bound, "CHILD_MODULE", "tests.fakes.render_child")


@pytest.mark.usefixtures("misbehaving")
def test_a_child_past_its_wall_clock_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.bound, "GRACE_SECONDS", 0.5)
    started = time.monotonic()
    assert render_bounded("{{ 1 | nap }}", {}, 0.5) == TimedOut()
    assert time.monotonic() - started < 30


@pytest.mark.usefixtures("misbehaving")
def test_a_child_past_its_cpu_limit_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.bound, "GRACE_SECONDS", 60.0)
    started = time.monotonic()
    assert render_bounded("{{ 1 | spin }}", {}, 0.5) == TimedOut()  # SIGXCPU after ~2 s of CPU
    assert time.monotonic() - started < 45


@pytest.mark.usefixtures("misbehaving")
def test_a_child_past_its_memory_limit_fails_alone() -> None:
    assert render_bounded("x\n{{ 1 | hog }}", {}, 10.0) == Failed("HZ708", OUT_OF_MEMORY, 2)


@pytest.mark.usefixtures("misbehaving")
def test_a_child_that_fails_otherwise_is_reported_with_its_status() -> None:
    assert render_bounded("{{ 1 | leave }}", {}, 10.0) == Crashed(1)
    assert render_prompt("{{ 1 | leave }}", {}, TemplatePlace("j")) == (
        None,
        [
            Diagnostic(
                "HZ707",
                "prompt: rendering stopped unexpectedly (its process exited with status 1)",
                "j",
            )
        ],
    )


@pytest.mark.usefixtures("misbehaving")
def test_a_child_that_writes_no_outcome_crashed() -> None:
    assert render_bounded("{{ 1 | flood }}", {}, 10.0) == Crashed(0)


def test_outcomes_round_trip_through_the_child() -> None:
    text = "é😀\n\x00\ud800"
    assert render_bounded("{{ inputs.t }}", {"t": text}, 10.0) == Rendered(text)
    assert render_bounded("\n{{ x }}", {}, 10.0) == Failed(
        "HZ707", "undefined: 'x' is undefined", 2
    )


@pytest.mark.parametrize(
    ("ended", "outcome"),
    [
        (ProcessOutcome(exit_code=None, signal=signal.SIGTERM, timed_out=True), TimedOut()),
        (ProcessOutcome(exit_code=None, signal=signal.SIGXCPU), TimedOut()),
        (ProcessOutcome(exit_code=None, signal=signal.SIGKILL, stdout=b"+"), OutOfMemory()),
        (ProcessOutcome(exit_code=3, stdout=b'+{"prompt": "x"'), OutOfMemory()),
        # Ended before it had its job (killed while it waited): no fault of the template's.
        (ProcessOutcome(exit_code=None, signal=signal.SIGKILL), Crashed(-signal.SIGKILL)),
        (ProcessOutcome(exit_code=3), Crashed(3)),
        (ProcessOutcome(exit_code=0, stdout=b'{"prompt": "x"}'), Crashed(0)),
        (ProcessOutcome(exit_code=None, signal=signal.SIGSEGV), Crashed(-signal.SIGSEGV)),
        (
            ProcessOutcome(exit_code=None, launch_error="x: program not found"),
            Crashed(None, "x: program not found"),
        ),
        (
            ProcessOutcome(exit_code=0, stdout=b'+{"prompt": "x"}', stdout_truncated=True),
            Crashed(0),
        ),
        (ProcessOutcome(exit_code=0, stdout=b'+{"prompt": 1}'), Crashed(0)),
        (ProcessOutcome(exit_code=0, stdout=b'+{"prompt": "x"}'), Rendered("x")),
    ],
)
def test_how_a_child_ended_is_its_outcome(ended: ProcessOutcome, outcome: object) -> None:
    assert outcome_of(ended) == outcome


def test_the_outcomes_of_a_child_are_worded(monkeypatch: pytest.MonkeyPatch) -> None:
    place = TemplatePlace("j")
    for outcome, message in [
        (OutOfMemory(), OUT_OF_MEMORY),
        (Crashed(-11), "rendering stopped unexpectedly (its process exited with status -11)"),
        (
            Crashed(None, "x: program not found"),
            "rendering could not start its process: x: program not found",
        ),
    ]:
        monkeypatch.setattr(hz.compiler.render.packet, "render_bounded", lambda *a, o=outcome: o)
        code = "HZ708" if isinstance(outcome, OutOfMemory) else "HZ707"
        assert render_prompt("", {}, place) == (None, [Diagnostic(code, f"prompt: {message}", "j")])


@pytest.mark.usefixtures("misbehaving")
def test_c_level_work_in_a_filter_cannot_hang_render(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.packet, "MAX_RENDER_SECONDS", 0.5)
    monkeypatch.setattr(hz.compiler.render.bound, "GRACE_SECONDS", 0.5)
    started = time.monotonic()
    assert render_prompt("a\n{{ 1 | nap }}", {}, TemplatePlace("j")) == (
        None,
        [Diagnostic("HZ707", "prompt: rendering took longer than 0.5 s", "j")],
    )
    assert time.monotonic() - started < 30


def test_without_child_processes_rendering_runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.bound, "ISOLATED", False)
    monkeypatch.setattr(hz.compiler.render.bound, "start_bounded", None)  # never reached
    assert render_prompt("{{ inputs.x }}", {"x": None}, TemplatePlace("j")) == ("null", [])


def _early_pid() -> int:
    [early] = hz.compiler.render.bound._early
    assert early.proc is not None
    return early.proc.pid


def test_a_render_takes_the_child_started_early() -> None:
    hz.compiler.render.bound.start_early()
    hz.compiler.render.bound.start_early()  # one at a time: a second start is nothing
    pid = _early_pid()
    assert render_bounded("Hi {{ inputs.who }}", {"who": "Ann"}, 10.0) == Rendered("Hi Ann")
    assert hz.compiler.render.bound._early == []
    assert is_gone(pid)  # it rendered, and was reaped
    hz.compiler.render.bound.discard_early()  # nothing left to discard


def test_a_child_started_early_and_unused_is_killed() -> None:
    hz.compiler.render.bound.start_early()
    pid = _early_pid()
    hz.compiler.render.bound.discard_early()
    assert hz.compiler.render.bound._early == []
    assert is_gone(pid)


@pytest.fixture
def spawns(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the render children spawned (one started early too)."""
    started: list[int] = []
    spawn = hz.compiler.render.bound._spawn

    def recorded() -> Started:
        child = spawn()
        assert child.proc is not None
        started.append(child.proc.pid)
        return child

    monkeypatch.setattr(hz.compiler.render.bound, "_spawn", recorded)
    return started


def test_a_child_started_early_and_killed_before_its_job_is_replaced(spawns: list[int]) -> None:
    # The OOM killer under unrelated pressure, or an operator, while hz validated, compiled
    # and fetched: the render starts a fresh child rather than blame the template's memory.
    hz.compiler.render.bound.start_early()
    pid = _early_pid()
    os.kill(pid, signal.SIGKILL)
    assert is_gone(pid)
    assert render_bounded("Hi {{ inputs.who }}", {"who": "Ann"}, 10.0) == Rendered("Hi Ann")
    early, fresh = spawns
    assert early == pid
    assert hz.compiler.render.bound._early == []
    assert is_gone(fresh)


def test_an_early_spawn_that_failed_is_tried_again(spawns: list[int]) -> None:
    # A transient EAGAIN (a process limit reached for a moment) as hz started.
    failed = Started(None, "python3: Resource temporarily unavailable", time.monotonic())
    hz.compiler.render.bound._early.append(failed)
    assert render_bounded("Hi {{ inputs.who }}", {"who": "Ann"}, 10.0) == Rendered("Hi Ann")
    assert len(spawns) == 1


def test_a_child_that_dies_before_its_job_twice_is_no_memory_failure(
    spawns: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed as it starts, each time: one fresh child is tried, then the end is reported as
    # what it is, never as "needs more than 512 MiB".
    suicide = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    monkeypatch.setattr(
        hz.compiler.render.bound, "child_argv", lambda: [sys.executable, "-c", suicide]
    )
    assert render_bounded("Hi", {}, 10.0) == Crashed(-signal.SIGKILL)
    assert len(spawns) == 2  # the one a render starts, and one more
    assert render_prompt("Hi", {}, TemplatePlace("j")) == (
        None,
        [
            Diagnostic(
                "HZ707",
                f"prompt: rendering stopped unexpectedly (its process exited with status "
                f"{-signal.SIGKILL})",
                "j",
            )
        ],
    )


@pytest.mark.usefixtures("misbehaving")
def test_a_child_killed_while_it_renders_ran_out_of_memory(spawns: list[int]) -> None:
    # SIGKILL after the child had its job and its limits: the kernel's out-of-memory killer.
    assert render_bounded("{{ 1 | killed }}", {}, 10.0) == OutOfMemory()
    assert len(spawns) == 1  # not tried again
    assert render_prompt("x\n{{ 1 | killed }}", {}, TemplatePlace("j")) == (
        None,
        [Diagnostic("HZ708", f"prompt: {OUT_OF_MEMORY}", "j")],
    )


@pytest.mark.parametrize(
    ("args", "renders"),
    [
        (["run", "c.yaml"], True),
        (["--debug", "render", "docs/C.YML", "-o", "p.json"], True),
        (["run", "weekly.md"], True),
        (["render", "build/jobs/x.job.json", "--input", "who=Ann"], True),
        (["run", "build/jobs/x.job.json", "--inputs=values.json"], True),
        (["run", "packet.json"], False),
        (["run", "c.yaml", "--help"], False),
        (["validate", "c.yaml"], False),
        (["compile", "contracts/", "--out", "jobs"], False),
        ([], False),
    ],
)
def test_which_commands_start_the_render_child_early(args: list[str], renders: bool) -> None:
    assert hz.cli._renders(args) is renders

"""The outer bound on rendering: a forked child with memory, CPU and wall-clock limits."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

import hz.compiler.render.bound
import hz.compiler.render.packet
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.render.bound import Outcome, run_bounded
from hz.compiler.render.packet import TemplatePlace, environment, render_prompt


def _sleep() -> Outcome:
    time.sleep(120)  # C-level and untraced: only the wall clock stops it
    return ("ok", "")


def _spin() -> Outcome:
    sum(range(10**12))  # a C loop the tracer never sees: RLIMIT_CPU stops it
    return ("ok", "")


def _hog() -> Outcome:
    return ("ok", str(len(bytearray(64 * 1024**3))))


def test_a_child_past_its_wall_clock_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.bound, "GRACE_SECONDS", 0.5)
    started = time.monotonic()
    assert run_bounded(_sleep, 0.5) == ("timeout",)
    assert time.monotonic() - started < 30


def test_a_child_past_its_cpu_limit_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hz.compiler.render.bound, "GRACE_SECONDS", 60.0)
    started = time.monotonic()
    assert run_bounded(_spin, 0.5) == ("timeout",)  # SIGXCPU after 2 s of CPU time
    assert time.monotonic() - started < 45


def test_a_child_past_its_memory_limit_fails_alone() -> None:
    assert run_bounded(_hog, 10.0) == ("memory",)


def test_a_child_that_fails_otherwise_is_reported_with_its_status() -> None:
    def leave() -> Outcome:
        raise SystemExit(7)

    assert run_bounded(leave, 10.0) == ("crashed", 1)


def test_outcomes_round_trip_through_the_child() -> None:
    assert run_bounded(lambda: ("ok", "é😀\n\x00"), 10.0) == ("ok", "é😀\n\x00")
    assert run_bounded(lambda: ("fail", "HZ707", "m", 3), 10.0) == ("fail", "HZ707", "m", 3)


def test_c_level_work_in_a_filter_cannot_hang_render(monkeypatch: pytest.MonkeyPatch) -> None:
    def nap(value: Any) -> Any:
        time.sleep(120)
        return value

    monkeypatch.setitem(environment().filters, "nap", nap)
    monkeypatch.setattr(hz.compiler.render.packet, "MAX_RENDER_SECONDS", 0.5)
    monkeypatch.setattr(hz.compiler.render.bound, "GRACE_SECONDS", 0.5)
    started = time.monotonic()
    assert render_prompt("a\n{{ 1 | nap }}", {}, TemplatePlace("j")) == (
        None,
        [Diagnostic("HZ707", "prompt: rendering took longer than 0.5 s", "j")],
    )
    assert time.monotonic() - started < 30


def test_without_fork_rendering_runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    assert render_prompt("{{ inputs.x }}", {"x": None}, TemplatePlace("j")) == ("null", [])

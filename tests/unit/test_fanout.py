"""How ``hz validate`` splits its files (compiler/fanout.py); the fork itself is tested in a
fresh interpreter (tests/integration/test_validate_fanout.py)."""

from __future__ import annotations

import pytest

from hz.compiler import fanout


@pytest.mark.parametrize(
    ("load", "idle"), [(0.0, 2), (0.6, 2), (1.4, 2), (1.6, 1), (2.7, 1), (9.0, 1)]
)
def test_children_only_for_cpus_the_load_leaves_idle(
    monkeypatch: pytest.MonkeyPatch, load: float, idle: int
) -> None:
    monkeypatch.setattr(fanout, "_cpus", lambda: 2)
    monkeypatch.setattr(fanout.os, "getloadavg", lambda: (load, 0.0, 0.0))
    assert fanout._idle_cpus() == idle


@pytest.mark.parametrize(("files", "processes"), [(99, 1), (199, 1), (200, 2), (5000, 2)])
def test_a_process_per_hundred_files_up_to_the_cpus(
    monkeypatch: pytest.MonkeyPatch, files: int, processes: int
) -> None:
    monkeypatch.setattr(fanout, "_cpus", lambda: 2)
    monkeypatch.setattr(fanout.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert fanout._processes(files, None) == processes


@pytest.mark.parametrize(
    ("files", "asked", "processes"), [(5000, 3, 3), (5000, 20, 8), (250, 8, 2), (99, 4, 1)]
)
def test_processes_asked_for_whatever_the_cpus_and_load(
    monkeypatch: pytest.MonkeyPatch, files: int, asked: int, processes: int
) -> None:
    """``HZ_PROCESSES``: that many, still a hundred files each and at most MAX_PROCESSES."""
    monkeypatch.setattr(fanout, "_cpus", lambda: 1)
    monkeypatch.setattr(fanout.os, "getloadavg", lambda: (9.0, 0.0, 0.0))
    assert fanout._processes(files, asked) == processes


def test_shares_are_contiguous_and_nearly_equal() -> None:
    files = [f"f{i}" for i in range(11)]
    shares = fanout._split(files, 3)
    assert [list(s) for s in shares] == [files[0:4], files[4:8], files[8:11]]

"""Whether a run's owner is gone, when hz cannot see its process for certain (attack on issue
21, H2): an owner in another pid namespace (a container, ``unshare --pid``) on the same machine
id and boot, or one that /proc (mounted ``hidepid``) hides, is judged by its lease, never by a
pid that names another process — or none — here. The view of this host is injected; the one
real case (``unshare --pid``) is in tests/integration/test_ledger_pid_namespace.py."""

from __future__ import annotations

import dataclasses
import subprocess
import time

import pytest

from hz.runtime.ledger import host
from hz.runtime.ledger.reconcile import kill_group, owner_gone
from hz.runtime.ledger.rows import RUN_COLUMNS, RunRow
from hz.runtime.ledger.sight import HostView
from hz.runtime.ledger.store import LeaseClock

NS = "pid:[4026531836]"
OTHER_NS = "pid:[4026532178]"
NOW = 1_800_000_000.0


def view(
    *, pidns: str | None = NS, hides: bool = False, seen: dict[int, int] | None = None
) -> HostView:
    processes = seen if seen is not None else {}
    return HostView("host-a", "boot-1", pidns, hides, processes.get)


def owned(**columns: object) -> RunRow:
    """A running run owned by pid 100 (started at tick 5) of host-a, boot-1, namespace NS,
    whose lease runs until NOW + 10."""
    raw: dict[str, object] = {name: None for name in RUN_COLUMNS}
    raw |= {
        "id": "run_20260101_000000000000",
        "request_key": "k",
        "state": "running",
        "attempt": 1,
        "job_name": "greet",
        "job_digest": "d",
        "inputs_sha256": "i",
        "workdir": "/w",
        "packet_json": "{}",
        "max_usd": 0.5,
        "reserved_usd": 0.5,
        "generation": 1,
        "not_before": 0.0,
        "created_at": NOW - 60,
        "queue": "default",
        "priority": 0,
        "owner": "host-a:100",
        "owner_pid": 100,
        "owner_start": 5,
        "owner_boot": "boot-1",
        "owner_host": "host-a",
        "owner_pidns": NS,
        "lease_until": NOW + 10,
    }
    row = RunRow.read(raw | columns)
    assert not row.malformed, row.bad
    return row


LIVE_LEASE = LeaseClock(now=NOW)
LAPSED_LEASE = LeaseClock(now=NOW + 60)


def test_an_owner_seen_here_is_judged_by_its_process_whatever_the_lease() -> None:
    assert owner_gone(owned(), LAPSED_LEASE, view(seen={100: 5})) is False
    assert owner_gone(owned(), LIVE_LEASE, view(seen={})) is True  # its pid is free
    assert owner_gone(owned(), LIVE_LEASE, view(seen={100: 6})) is True  # pid reused


def test_an_owner_in_another_pid_namespace_is_judged_by_its_lease() -> None:
    """Its pid 100 here is another process, or none: neither says anything about it."""
    for seen in ({}, {100: 6}, {100: 5}):
        other = view(pidns=OTHER_NS, seen=seen)
        assert owner_gone(owned(), LIVE_LEASE, other) is False
        assert owner_gone(owned(), LAPSED_LEASE, other) is True


def test_an_owner_hidden_by_hidepid_is_judged_by_its_lease() -> None:
    hidden = view(hides=True, seen={})
    assert owner_gone(owned(), LIVE_LEASE, hidden) is False
    assert owner_gone(owned(), LAPSED_LEASE, hidden) is True
    # A pid /proc shows with another start time is provably another process.
    assert owner_gone(owned(), LIVE_LEASE, view(hides=True, seen={100: 6})) is True


def test_an_owner_recorded_without_a_namespace_or_start_is_judged_by_its_lease() -> None:
    """A row of an older hz (no pid namespace), or one whose start time was not readable."""
    for row in (owned(owner_pidns=None), owned(owner_start=None)):
        assert owner_gone(row, LIVE_LEASE, view(seen={})) is False
        assert owner_gone(row, LAPSED_LEASE, view(seen={})) is True


def test_an_owner_of_this_host_on_an_earlier_boot_is_gone_whatever_its_lease() -> None:
    assert owner_gone(owned(owner_boot="boot-0"), LIVE_LEASE, view()) is True
    assert owner_gone(owned(owner_host="host-b"), LIVE_LEASE, view()) is False


@pytest.mark.parametrize("hidepid", ["2", "invisible", "noaccess", "1", "ptraceable"])
def test_hidepid_is_read_from_mountinfo(hidepid: str) -> None:
    proc = "22 27 0:21 / /proc rw,relatime - proc proc rw"
    assert host.mounted_hiding(f"{proc},hidepid={hidepid}\n") is True
    assert host.mounted_hiding(f"{proc}\n") is False
    assert host.mounted_hiding(f"{proc},hidepid=0\n") is False
    # The last mount on /proc is the one seen; none at all says nothing.
    assert host.mounted_hiding(f"{proc},hidepid=2\n{proc},hidepid=off\n") is False
    assert host.mounted_hiding("25 1 0:5 / /dev rw - devtmpfs udev rw\n") is True


def test_a_group_in_another_pid_namespace_is_never_signalled() -> None:
    """Its process group's number names another group here: only the run's own namespace may
    kill it."""
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        started = host.start_time(child.pid)
        row = owned(
            host_id=host.host_id(),
            boot_id=host.boot_id(),
            pid=child.pid,
            pgid=child.pid,
            proc_start=started,
            pidns=OTHER_NS if host.pid_namespace() != OTHER_NS else NS,
        )
        assert kill_group(row) is False
        time.sleep(0.1)
        assert child.poll() is None
        assert kill_group(dataclasses.replace(row, pidns=host.pid_namespace())) is True
        assert child.wait(timeout=5) == -15
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()

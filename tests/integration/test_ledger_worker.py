"""The run ledger end to end: hz worker as a real process where signals, crashes (SIGKILL) and
cancels timed from another process are the point; submits, drains and reads in this process
(``Space.cli``). Reconciliation, cancellation by phase, the spend ceiling."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.ledger_env import REPO, Space, space, until
from tests.helpers.workers import Worker, running_worker

# Coverage measures the children (`child_coverage`) of the tests whose children alone reach
# some lines; the others' children run code that in-process tests reach.

# The tests that measure time (a signal's or a cancel's ceiling, a window for a wrong start to
# show, a growing wait) are marked `serial`: `make test` runs them alone, on an otherwise quiet
# machine. The rest wait only for what they assert, under generous ceilings.


def test_submitted_runs_complete_once_each(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    ids = [s.submit(who) for who in ("Ann", "Bo", "Cy")]
    done = s.cli("worker", "-j", "2", "--drain", "--format", "json")
    assert done.returncode == 0, done.stderr
    finished = json.loads(done.stdout)
    assert sorted(r["id"] for r in finished["runs"]) == sorted(ids)
    assert {r["state"] for r in finished["runs"]} == {"completed"}
    assert len(s.starts()) == 3
    shown = json.loads(s.cli("runs", "show", ids[0], "--format", "json").stdout)
    assert [e["state"] for e in shown["timeline"]] == [
        "queued",
        "queued",
        "prepared",
        "dispatching",
        "running",
        "completed",
    ]
    assert shown["result"]["draft"] == "Say hi to Ann.\n"
    verified = s.cli("receipts", "verify", "state/receipts")
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.child_coverage
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_worker_whose_stdout_reader_goes_away_runs_on_and_says_so(
    tmp_path: Path, fmt: str
) -> None:
    """``hz worker --drain | head -c 0``: the worker exited 1, saying nothing, four of six
    runs left queued (attack on issue 21, H12). The runs do not depend on the reader: the
    worker drains the queue, says once on stderr that stdout is gone, and exits 0."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}")
    ids = [s.submit(who) for who in ("Ann", "Bo", "Cy", "Di")]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the worker writes a line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hz", "worker", "--drain", "-j", "2", "--format", fmt],
            cwd=s.root,
            env=s.env(),
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    what = "finished runs" if fmt == "text" else "its runs"
    assert (done.returncode, done.stderr) == (
        0,
        s.worker_started(slots=2)
        + f"hz: standard output was closed (its reader went away); {what} are no longer printed "
        "there\n",
    )
    assert sorted((r["id"], r["state"]) for r in s.rows()) == sorted(
        (run_id, "completed") for run_id in ids
    )


def test_a_request_key_is_not_started_twice(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    first = s.submit("Ann", "--request-key", "mine")
    again = s.cli("submit", "greet.yaml", "--input", "who=Ann", "--request-key", "mine")
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == (
        f"hz: error: run {first} (queued) already holds this request key; nothing was queued\n"
        f"  hint: see hz runs show {first}; --force-new queues the request again under this key, "
        "another key (or none) queues a new run\n"
    )
    forced = s.submit("Ann", "--request-key", "mine", "--force-new")
    unkeyed = [s.submit("Ann"), s.submit("Ann")]  # without a key: a new run each time
    assert len({first, forced, *unkeyed}) == 4


@pytest.mark.serial
def test_sigkill_of_a_worker_with_four_running_leaves_uncertain_runs_and_no_orphans(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "sleep", dsn=dsn)
    cleanup.append(s)
    ids = [s.submit(str(n)) for n in range(4)]
    with running_worker(s, "-j", "4") as worker:
        until(lambda: len(s.starts()) == 4, what="four started agents")
        worker.kill()
    rows = s.rows()
    private = [Path(r["private_dir"]) for r in rows]
    # The process chokepoint's watchdog may have killed the groups and removed the private
    # directories already; the state and the receipts are the ledger's to settle.
    listed = s.cli("runs", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)["runs"]
    assert [(r["id"], r["state"]) for r in runs] == [(i, "uncertain") for i in ids[::-1]]
    assert listed.stderr.count("-> uncertain: owner") == 4
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))
    assert not any(p.exists() for p in private)
    receipts = sorted((tmp_path / "state/receipts").glob("*.json"))
    statuses = [json.loads(p.read_text())["status"] for p in receipts]
    assert statuses == ["uncertain"] * 4
    assert s.cli("receipts", "verify", "state/receipts").returncode == 0
    # Never relaunched: another worker and another reconcile start nothing.
    assert s.cli("worker", "--drain").returncode == 0
    assert s.cli("runs", "reconcile").stdout == "nothing to reconcile\n"
    assert len(s.starts()) == 4
    shown = s.cli("runs", "show", ids[0])
    assert "hz will not run it again" in shown.stdout
    assert shown.stdout.count("uncertain") >= 2


CRASH_AFTER_PREPARED = """
import os
from hz.runtime.config.layers import load_config
from hz.runtime.ledger.session import ledger_for
from hz.runtime.ledger.store import Owner
ledger = ledger_for(load_config())
run_id, generation = ledger.claim_next(Owner.this_process())
ledger.prepare(run_id, generation, "command", "digest")
os._exit(0)  # dies between prepared and dispatching
"""


def test_a_crash_between_prepared_and_dispatching_is_retried_and_runs_once(
    dsn: str | None,
    tmp_path: Path,
) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    first = s.submit("Ann")
    crash = subprocess.run(
        [sys.executable, "-c", CRASH_AFTER_PREPARED],
        env=s.env(),
        capture_output=True,
        text=True,
    )
    assert crash.returncode == 0, crash.stderr
    assert [r["state"] for r in s.rows()] == ["prepared"]
    done = s.cli("worker", "--drain")
    assert done.returncode == 0, done.stderr
    old, new = s.rows()
    assert (old["id"], old["state"], old["failure_kind"]) == (first, "failed", "not_started")
    assert (new["state"], new["attempt"], new["retry_of"]) == ("completed", 2, first)
    assert len(s.starts()) == 1


def test_cancel_while_queued_runs_nothing(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    run_id = s.submit("Ann")
    done = s.cli("runs", "cancel", run_id, "--format", "json")
    [run] = json.loads(done.stdout)["runs"]
    who = f"user {pwd.getpwuid(os.geteuid()).pw_name} on host {socket.gethostname()}"
    who += "" if dsn is None else ", database role postgres"  # the server's word for it
    assert (run["state"], run["failure_kind"], run["timeline"][-1]["detail"]) == (
        "cancelled",
        "aborted",
        f"cancelled while queued by hz runs cancel ({who}): nothing ran",
    )
    shown = s.cli("runs", "show", run_id).stdout.splitlines()
    assert shown[-2].endswith(
        f"cancelled   cancelled while queued by hz runs cancel ({who}): nothing ran"
    )
    assert shown[-1] == "draft:       none"
    assert s.cli("worker", "--drain").returncode == 0
    assert s.starts() == []


@pytest.mark.child_coverage
@pytest.mark.serial
def test_cancel_of_a_term_ignoring_agent_with_a_grandchild_settles_within_ten_seconds(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "stubborn", dsn=dsn)
    cleanup.append(s)
    run_id = s.submit("Ann")
    with running_worker(s) as worker:
        until(lambda: len(recorded_pids(s.pids)) == 2 if s.pids.exists() else False)
        started = time.monotonic()
        done = s.hz("runs", "cancel", run_id, "--format", "json")
        elapsed = time.monotonic() - started
        [run] = json.loads(done.stdout)["runs"]
        assert (run["state"], run["failure_kind"]) == ("cancelled", "aborted")
        assert elapsed < 10, elapsed
        assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))
        assert [e["state"] for e in run["timeline"]][-2:] == ["cancel", "cancelled"]
    assert worker.returncode == 0


@pytest.mark.serial
def test_sigterm_stops_a_worker_and_cancels_what_runs(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "sleep", dsn=dsn)
    cleanup.append(s)
    run_id = s.submit("Ann")
    with running_worker(s) as worker:
        until(s.starts, what="the agent's start")
        started = time.monotonic()
        worker.send(signal.SIGTERM)
        worker.wait(15)
    out, err = worker.stdout, worker.stderr
    assert (worker.returncode, err) == (0, s.worker_started())
    assert time.monotonic() - started < 10
    assert out == f"{run_id}  cancelled (aborted)  greet  greet.yaml\n"
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))


@pytest.mark.child_coverage
@pytest.mark.serial
def test_the_daily_ceiling_holds_concurrent_submissions(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(
        tmp_path,
        "sleep",
        "--seconds=0.5",
        max_usd=0.4,
        extra="[system.budget]\nmax_usd_per_day = 1.0\n",
        dsn=dsn,
    )
    cleanup.append(s)
    for n in range(10):  # set-up: all ten are queued before the worker takes any
        s.submit(str(n))
    with running_worker(s, "-j", "10"):
        until(lambda: len(s.rows("ended_at IS NOT NULL")) == 2, what="two ended runs", ceiling=60)
        # Time for a wrongly admitted third start: three polls on SQLite (0.2 s), six on
        # PostgreSQL (the test spaces' 0.1 s), besides the looks the ends woke.
        time.sleep(0.6)
        assert len(s.starts()) == 2
        # Waiting: queued, or taken for a moment to find the ceiling still in the way.
        assert len(s.rows("dispatched_at IS NULL")) == 8
        waiting = s.cli("runs", "show", s.rows("dispatched_at IS NULL")[0]["id"]).stdout
        assert "would cross [system.budget] max_usd_per_day of $1.00 ($0.80 reserved" in waiting
    cost = json.loads(s.cli("runs", "cost", "--format", "json").stdout)
    assert [(g["runs"], g["reserved_usd"], g["unknown_cost_runs"]) for g in cost["groups"]] == [
        (2, 0.8, 2)
    ]


def test_every_json_document_follows_the_published_schema(dsn: str | None, tmp_path: Path) -> None:
    import jsonschema

    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    served = s.cli("schema", "runs")
    assert served.returncode == 0, served.stderr
    schema = json.loads(served.stdout)
    assert schema == json.loads((REPO / "schemas" / "runs.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    first = s.cli("submit", "greet.yaml", "--input", "who=Ann", "--format", "json")
    second = s.submit("Bo")
    run_id = json.loads(first.stdout)["runs"][0]
    documents = [first.stdout, s.cli("runs", "cancel", second, "--format", "json").stdout]
    documents.append(s.cli("worker", "--drain", "--format", "json").stdout)
    for args in (
        ("runs", "list"),
        ("runs", "list", "--state", "completed", "--since", "1h"),
        ("runs", "show", run_id),
        ("runs", "wait", run_id),
        ("runs", "reconcile"),
        ("runs", "cost", "--by", "job"),
        ("runs", "retry", second),
    ):
        done = s.cli(*args, "--format", "json")
        assert done.returncode == 0, (args, done.stderr)
        documents.append(done.stdout)
    for text in documents:
        errors = [e.message for e in validator.iter_errors(json.loads(text))]
        assert errors == [], text
    refused = s.cli("runs", "retry", run_id)
    assert (refused.returncode, refused.stderr) == (
        2,
        f"hz: error: run {run_id} completed; a completed run is not retried\n",
    )


def ignores_sigterm(pid: int) -> bool:
    """Whether ``pid`` has set SIGTERM to ignored (its ``SigIgn`` mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(status.split("SigIgn:")[1].split()[0], 16)
    return bool(mask & (1 << (signal.SIGTERM - 1)))


@contextlib.contextmanager
def worker_with_a_term_ignoring_agent(s: Space) -> Iterator[tuple[str, Worker, int]]:
    """A submitted run, a worker running it, and its agent's pid once it ignores SIGTERM."""
    run_id = s.submit("Ann")
    with running_worker(s) as worker:
        [agent] = until(s.starts, what="the agent's start")
        pid = int(str(agent["pid"]))
        until(lambda: ignores_sigterm(pid), what="the agent ignoring SIGTERM")
        yield run_id, worker, pid


@pytest.mark.serial
def test_a_second_signal_kills_a_stopping_workers_runs_at_once(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "ignore-term", dsn=dsn)
    cleanup.append(s)
    with worker_with_a_term_ignoring_agent(s) as (run_id, worker, pid):
        worker.send(signal.SIGTERM)
        started = time.monotonic()
        until(lambda: s.rows("cancel_requested_at IS NOT NULL"), what="the cancel intent")
        worker.send(signal.SIGINT)  # without it, SIGKILL would come 2 s after SIGTERM
        assert is_gone(pid)
        assert time.monotonic() - started < 1.5
        worker.wait(15)
    out, err = worker.stdout, worker.stderr
    assert (worker.returncode, out, err) == (
        0,
        f"{run_id}  cancelled (aborted)  greet  greet.yaml\n",
        s.worker_started(),
    )
    shown = json.loads(s.cli("runs", "show", run_id, "--format", "json").stdout)
    assert [(e["state"], e["detail"]) for e in shown["timeline"]][-2:] == [
        ("cancel", "the worker got SIGTERM"),
        ("cancelled", "cancelled (aborted)"),
    ]


@pytest.mark.serial
def test_signals_after_the_second_cannot_stop_a_worker_settling_its_runs(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "ignore-term", dsn=dsn)
    cleanup.append(s)
    with worker_with_a_term_ignoring_agent(s) as (run_id, worker, _):
        for signum in (
            signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM
        ):  # fmt: skip
            worker.send(signum)
            time.sleep(0.05)
        worker.wait(15)
    out, err = worker.stdout, worker.stderr
    assert (worker.returncode, out, err) == (
        0,
        f"{run_id}  cancelled (aborted)  greet  greet.yaml\n",
        s.worker_started(),
    )
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))
    assert [r["state"] for r in s.rows()] == ["cancelled"]


def test_runs_show_prints_the_transcript_as_receipts_show_does(
    dsn: str | None, tmp_path: Path
) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    assert s.cli("run", "greet.yaml", "--input", "who=Ann", "-q").returncode == 0
    [row] = s.rows()
    assert row["receipt_path"] == str(s.state / "receipts" / "000001-greet.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def hz(*args: str) -> CliResult:  # from another directory: the paths are the ledger's
        return s.cli(*args, cwd=elsewhere)

    receipts = hz("receipts", "show", str(s.state / "receipts"), "--transcript")
    assert receipts.returncode == 0, receipts.stderr
    transcript = receipts.stdout[receipts.stdout.index("\ntranscript ") + 1 :]
    assert transcript.startswith("transcript 000001-greet.transcript.jsonl (command: 1 event)\n")
    plain = hz("runs", "show", row["id"])
    shown = hz("runs", "show", row["id"], "--transcript")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout == plain.stdout + transcript
    document = json.loads(hz("runs", "show", row["id"], "--transcript", "--format", "json").stdout)
    as_json = hz("receipts", "show", row["receipt_path"], "--transcript", "--format", "json")
    assert document["transcript"] == json.loads(as_json.stdout)["transcript"]
    import jsonschema

    schema = json.loads(hz("schema", "runs").stdout)
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)] == []
    bare = s.cli("run", "greet.yaml", "--input", "who=Bo", "--no-receipt", "-q")
    assert bare.returncode == 0
    none = hz("runs", "show", s.rows()[1]["id"], "--transcript")
    assert (none.returncode, none.stdout) == (2, "")
    assert none.stderr == (
        f"hz: error: run {s.rows()[1]['id']} has no receipt, so no transcript\n"
        "  hint: a run keeps its transcript beside its receipt; it had --no-receipt, or has "
        "not ended\n"
    )


def waits(s: Space, run_id: str) -> list[str]:
    """The "waiting" records of a run's timeline (a worker holding it for a spend ceiling)."""
    shown = json.loads(s.cli("runs", "show", run_id, "--format", "json").stdout)
    return [e["detail"] for e in shown["timeline"] if (e["detail"] or "").startswith("waiting: ")]


def test_a_worker_holds_a_run_over_the_ceiling_until_the_window_allows_it(tmp_path: Path) -> None:
    """A worker never fails a run for a spend ceiling: it waits in the queue until the
    reservations of the day leave room (here: until the first run ends and its $0.60
    reservation becomes its reported cost of $0.10)."""
    s = space(
        tmp_path,
        "json",
        "--cost=0.1",
        "--delay=1.5",
        max_usd=0.6,
        extra='command_output = "json"\n[system.budget]\nmax_usd_per_day = 1.0\n',
    )
    ids = [s.submit(who) for who in ("Ann", "Bo")]
    done = s.cli("worker", "-j", "2", "--drain", "--format", "json")
    assert done.returncode == 0, done.stderr
    finished = json.loads(done.stdout)["runs"]
    assert sorted((r["id"], r["state"], r["cost_usd"]) for r in finished) == sorted(
        (run_id, "completed", 0.1) for run_id in ids
    )
    first, second = sorted(s.rows(), key=lambda r: r["dispatched_at"])
    assert second["dispatched_at"] >= first["ended_at"]
    assert waits(s, second["id"]) == [
        "waiting: reserving $0.60 would cross [system.budget] max_usd_per_day of $1.00 "
        "($0.60 reserved or spent today)"
    ]
    timeline = json.loads(s.cli("runs", "show", second["id"], "--format", "json").stdout)[
        "timeline"
    ]
    assert [e["state"] for e in timeline][-3:] == ["dispatching", "running", "completed"]
    assert len(s.starts()) == 2


WAITING = (
    "waiting: reserving $0.60 would cross [system.budget] max_usd_per_day of $1.00 "
    "($0.60 reserved or spent today)"
)


def held_space(tmp_path: Path, dsn: str | None, delay: float, waits: str, *agent: str) -> Space:
    """$0.60 runs that cost $0.10 against a $1.00 day: while one runs, the next is held;
    ``waits`` sets the wait between looks at a held run (``[system.budget] hold_wait_*``)."""
    return space(
        tmp_path,
        "json",
        "--cost=0.1",
        f"--delay={delay:g}",
        *agent,
        max_usd=0.6,
        extra=f'command_output = "json"\n[system.budget]\nmax_usd_per_day = 1.0\n{waits}',
        dsn=dsn,
    )


@pytest.mark.child_coverage
@pytest.mark.serial
def test_a_held_run_is_recorded_once_and_looked_at_less_and_less(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    """Held for a spend ceiling, a run costs one timeline record and, on PostgreSQL, no job
    beside its own; the wait between looks grows from ``hold_wait_min_seconds`` (0.2 s here) up
    to ``hold_wait_max_seconds`` (0.6 s; the defaults are 1 s and 30 s)."""
    s = held_space(tmp_path, dsn, 60, "hold_wait_min_seconds = 0.2\nhold_wait_max_seconds = 0.6\n")
    cleanup.append(s)
    first = s.submit("Ann")
    with running_worker(s, "-j", "2") as worker:
        until(lambda: s.rows("id = ? AND state = 'running'", (first,)), what="the first run")
        second = s.submit("Bo")
        aheads, held = [], time.monotonic()
        # The waits are half the time held, from 0.2 s up to 0.6 s (reached once held 1.2 s;
        # on PostgreSQL a due look also waits for the worker's next fetch, up to 1 s). Watched
        # for 3 s; the first run takes 60 s.
        while time.monotonic() - held < 3:
            [row] = s.rows("id = ?", (second,))
            assert row["state"] == "queued"
            if row["not_before"] is not None:
                aheads.append(row["not_before"] - time.time())
            time.sleep(0.05)
        assert 0.45 < max(aheads) <= 0.65, aheads  # longer than the first wait, never the longest
        assert waits(s, second) == [WAITING]
        shown = json.loads(s.cli("runs", "show", second, "--format", "json").stdout)
        assert [e["state"] for e in shown["timeline"]] == ["queued", "queued"]
        if dsn is not None:
            # One job per run, however often it was looked at. A look hands the held run to a
            # new job and then its own job ends: between the two (a loaded machine widens it)
            # the old job is still 'doing'. Jobs left behind would never come down to two.
            until(lambda: len(s.jobs()) == 2, ceiling=10, what="one job per run")
    assert worker.returncode == 0


@pytest.mark.child_coverage
@pytest.mark.serial
def test_a_held_run_starts_at_once_when_the_run_ahead_ends_below_its_reservation(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    """Once the run ahead ends below its reservation the held run starts at once, not at its
    next look (30 s away here: the waits are fixed at 30 s). The runs take until the test
    releases them: the first, once the second is held; the second finds it released."""
    release = tmp_path / "release"
    s = held_space(
        tmp_path,
        dsn,
        0,
        "hold_wait_min_seconds = 30\nhold_wait_max_seconds = 30\n",
        f"--until={release}",
    )
    cleanup.append(s)
    first = s.submit("Ann")
    with running_worker(s, "-j", "2"):
        until(lambda: s.rows("id = ? AND state = 'running'", (first,)), what="the first run")
        second = s.submit("Bo")
        # Held while the first run's $0.60 was reserved: its waiting record says so.
        until(lambda: waits(s, second), what="the second run held")
        assert s.rows("id = ? AND state = 'running'", (first,))  # held while the first ran
        release.touch()
        until(
            lambda: s.rows("id = ? AND state = 'completed'", (second,)),
            ceiling=25,  # its next look would be 30 s after the first
            what="the held run woken and completed",
        )
    one, two = (s.rows("id = ?", (i,))[0] for i in (first, second))
    assert two["dispatched_at"] - one["ended_at"] < 2.5  # woken by the release
    assert waits(s, second) == [WAITING]
    shown = json.loads(s.cli("runs", "show", second, "--format", "json").stdout)
    assert [e["state"] for e in shown["timeline"]] == [
        "queued",
        "queued",
        "queued",
        "prepared",
        "dispatching",
        "running",
        "completed",
    ]
    if dsn is not None:
        assert sorted(s.jobs().values()) == ["succeeded", "succeeded"]


def test_a_per_runner_ceiling_refuses_a_run_of_that_runner_only(tmp_path: Path) -> None:
    s = space(
        tmp_path,
        "echo",
        "--prompt-file={prompt_file}",
        max_usd=0.4,
        extra="[system.budget]\nper_runner = { command = 0.5 }\n",
    )
    first = s.cli("run", "greet.yaml", "--input", "who=Ann", "-q")
    assert first.returncode == 0, first.stderr
    refused = s.cli("run", "greet.yaml", "--input", "who=Bo")
    held = s.rows("state = 'failed'")
    assert [(r["failure_kind"], r["dispatched_at"]) for r in held] == [("budget_ceiling", None)]
    assert (refused.returncode, refused.stdout) == (6, "")
    assert refused.stderr == (
        "hz: failed (budget_ceiling): reserving $0.40 would cross [system.budget] "
        "per_runner.command of $0.50 ($0.40 reserved or spent today); nothing was started\n"
        f"  run {held[0]['id']} (hz runs show {held[0]['id']})\n"
    )
    assert len(s.starts()) == 1
    # The ceiling is the command runner's: a run of another runner is not held to it.
    other = s.cli("run", "greet.yaml", "--input", "who=Cy", "-q", HZ_RUNNER="echo")
    assert other.returncode == 0, other.stderr
    # A worker holds a run over it in the queue rather than failing it.
    waiting = s.submit("Di")
    with running_worker(s) as worker:
        until(lambda: waits(s, waiting), what="the run held for the ceiling")
        assert waits(s, waiting)[0].startswith(
            "waiting: reserving $0.40 would cross [system.budget] per_runner.command of $0.50"
        )
        assert s.rows("id = ?", (waiting,))[0]["state"] == "queued"
    assert worker.returncode == 0
    assert len(s.starts()) == 1


@pytest.mark.child_coverage
@pytest.mark.serial
def test_cancel_settles_uncertain_when_the_live_owner_ignores_it_past_the_ceiling(
    tmp_path: Path, cleanup: list[Space]
) -> None:
    """The owner (a foreground hz run) lives but does not act on the cancel: stopped with
    SIGSTOP, it neither signals its agent nor settles the run. hz runs cancel takes the run
    over before its ceiling, kills the group itself and settles ``uncertain`` (nothing read
    the agent's end); the owner, resumed, cannot write over that."""
    s = space(tmp_path, "sleep")
    cleanup.append(s)
    owner = s.popen("run", "greet.yaml", "--input", "who=Ann", "--format", "json", "-q")
    try:
        [agent] = until(s.starts, what="the agent's start")
        until(lambda: s.rows("state = 'running'"), what="the running record")
        [row] = s.rows()
        owner.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        done = s.hz("runs", "cancel", row["id"], "--format", "json")
        elapsed = time.monotonic() - started
    finally:
        owner.send_signal(signal.SIGCONT)
    out, err = owner.communicate(timeout=30)
    assert done.returncode == 0, done.stderr
    assert elapsed < 10, elapsed
    [run] = json.loads(done.stdout)["runs"]
    assert (run["state"], run["failure_kind"], run["result"]) == ("uncertain", None, None)
    assert [(e["state"], e["detail"]) for e in run["timeline"]][-2:] == [
        (
            "cancel",
            f"cancel requested by hz runs cancel (user {pwd.getpwuid(os.geteuid()).pw_name} on "
            f"host {socket.gethostname()})",
        ),
        (
            "uncertain",
            f"cancelled; owner {row['owner']} did not settle it within the ceiling; "
            "its process group was killed; its private directory was removed",
        ),
    ]
    assert is_gone(int(str(agent["pid"])))
    # The resumed owner is fenced out: the run stays as the canceller settled it.
    assert owner.returncode == 9, err
    assert json.loads(out)["status"] != "completed"
    assert [(r["state"], r["result_json"]) for r in s.rows()] == [("uncertain", None)]
    statuses = [
        json.loads(p.read_text())["status"] for p in (s.state / "receipts").glob("0*-greet.json")
    ]
    assert statuses == ["uncertain"]
    assert len(s.starts()) == 1


def test_a_worker_fails_a_run_that_no_window_can_take(tmp_path: Path) -> None:
    """A run whose budget alone is over a ceiling would wait for ever: it fails at once."""
    s = space(
        tmp_path,
        "echo",
        "--prompt-file={prompt_file}",
        max_usd=0.6,
        extra="[system.budget]\nmax_usd_per_day = 0.5\n",
    )
    run_id = s.submit("Ann")
    done = s.cli("worker", "--drain")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"{run_id}  failed (budget_ceiling)  greet  greet.yaml\n",
        s.worker_started(),
    )
    shown = json.loads(s.cli("runs", "show", run_id, "--format", "json").stdout)
    assert shown["timeline"][-1]["detail"] == (
        "not started: its budget of $0.60 is over [system.budget] max_usd_per_day of $0.50 "
        "on its own"
    )
    assert waits(s, run_id) == []
    assert s.starts() == []

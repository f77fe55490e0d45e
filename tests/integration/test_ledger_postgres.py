"""The PostgreSQL ledger with procrastinate on a real server: separate ``hz worker`` processes
stand in for machines (``HZ_HOST_ID``), a timed cancel comes from another process; submits and
reads run in this process. What every backend shares runs on
both in test_ledger_worker.py and test_ledger_run.py; here is what only many machines show."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import psycopg
import pytest

from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.ledger_env import Space, space, until, watchdogs
from tests.helpers.workers import running_worker

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

# The tests that measure time or attack the worker (a cancel's ceiling, a lost worker, cut
# connections) are marked `serial`: `make test` runs them alone, on an otherwise quiet machine.


def test_a_request_key_is_held_across_concurrent_submissions(tmp_path: Path, pg_dsn: str) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn)
    racing = [
        s.popen("submit", "greet.yaml", "--input", "who=Ann", "--request-key", "once")
        for _ in range(6)
    ]
    outcomes = [(p.communicate(timeout=60), p.returncode) for p in racing]
    assert sorted(code for _, code in outcomes) == [0, 2, 2, 2, 2, 2]
    [row] = s.rows()
    held = [err for (_, err), code in outcomes if code == 2]
    assert set(held) == {
        f"hz: error: run {row['id']} (queued) already holds this request key; nothing was "
        f"queued\n  hint: see hz runs show {row['id']}; --force-new queues the request again "
        "under this key, another key (or none) queues a new run\n"
    }
    assert list(s.jobs().values()) == ["todo"]  # one job, deferred with its run


def test_hz_run_interrupted_while_it_waits_for_a_lock_is_cancelled_in_one_line(
    tmp_path: Path, pg_dsn: str
) -> None:
    """SIGTERM to hz run blocked on a lock while recording its run: it printed psycopg's
    "error ignored in rollback of <psycopg.Transaction …>" and a traceback of its own signal
    (attack on issue 21, H12), when the handler raised into the statement. The handler only
    sets a value now: once the lock is free (another hz's short transaction ended) the run is
    recorded and cancelled before its agent starts, exit 7, one line."""
    from hz.runtime.ledger.pg.db import lock_slot

    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn)
    holder = psycopg.connect(pg_dsn)  # another hz's transaction, holding the key's lock
    holder.execute(
        "SELECT 1 FROM hz.locks WHERE slot = %s FOR UPDATE", (lock_slot("request_key:k"),)
    )

    def waiting() -> bool:
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            row = c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE '%hz.locks%'"
            ).fetchone()
        return row is not None and row[0] == 1

    def delivered(pid: int) -> bool:
        status = Path(f"/proc/{pid}/status").read_text()
        pending = [int(line.split()[1], 16) for line in status.splitlines() if "Pnd:" in line]
        return not any(mask & (1 << (signal.SIGTERM - 1)) for mask in pending)

    hz = s.popen("run", "greet.yaml", "--input", "who=Ann", "--request-key", "k")
    try:
        until(waiting, what="hz run waiting for the lock")
        hz.send_signal(signal.SIGTERM)
        until(lambda: delivered(hz.pid), what="SIGTERM delivered")
        holder.close()  # the other transaction ends: the lock is free
        out, err = hz.communicate(timeout=60)
    finally:
        holder.close()
        if hz.poll() is None:
            hz.kill()
            hz.communicate()
    [row] = s.rows()
    assert (hz.returncode, out, err, row["state"]) == (
        7,
        "",
        "hz: cancelled (aborted): hz was interrupted (SIGTERM) before the agent started; nothing "
        f"was started\n  run {row['id']} (hz runs show {row['id']})\n",
        "cancelled",
    )


def test_a_request_key_is_bounded_before_the_database_is_asked(tmp_path: Path, pg_dsn: str) -> None:
    """An 8 KiB key failed in PostgreSQL's index (its row size) with a hint that the server
    might be down; the longest key taken, of the widest characters, fits."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn)
    long = s.cli("submit", "greet.yaml", "--input", "who=Ann", "--request-key", "k" * 8192)
    assert (long.returncode, long.stdout) == (2, "")
    assert long.stderr.endswith(
        "Error: Invalid value for --request-key: a key of 8192 characters is too long; a "
        "request key is 1 to 256 letters, digits, punctuation marks, symbols and spaces (not at "
        "either end); no control or invisible characters\n"
    )
    widest = "\U0001f34e" * 256
    assert (
        s.cli("submit", "greet.yaml", "--input", "who=Ann", "--request-key", widest).returncode == 0
    )
    assert [r["request_key"] for r in s.rows()] == [widest]


def test_queues_and_priorities_through_procrastinate(tmp_path: Path, pg_dsn: str) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn)
    plain = s.submit("Ann")
    low = s.submit("Bo", "--queue", "reviews")
    high = s.submit("Cy", "--queue", "reviews", "--priority", "7")
    rows = {r["id"]: r for r in s.rows()}
    assert [(rows[i]["queue"], rows[i]["priority"]) for i in (plain, low, high)] == [
        ("default", 0),
        ("reviews", 0),
        ("reviews", 7),
    ]
    assert s.jobs() == {rows[i]["job_id"]: "todo" for i in (plain, low, high)}
    done = s.cli("worker", "--queue", "reviews", "--drain", HZ_HOST_ID="reviewer")
    assert done.returncode == 0, done.stderr
    # One slot: the higher priority first.
    assert (
        done.stdout
        == f"{high}  completed  greet  greet.yaml\n{low}  completed  greet  greet.yaml\n"
    )
    assert s.jobs()[rows[plain]["job_id"]] == "todo"
    assert {s.jobs()[rows[i]["job_id"]] for i in (low, high)} == {"succeeded"}
    listed = json.loads(s.cli("runs", "list", "--format", "json").stdout)["runs"]
    by_id = {r["id"]: r for r in listed}
    assert by_id[high]["worker"].startswith("hz@reviewer:")
    assert (by_id[high]["host_id"], by_id[plain]["worker"]) == ("reviewer", None)
    text = s.cli("runs", "list").stdout
    assert by_id[high]["worker"] in text
    refused = s.cli("submit", "greet.yaml", "--queue", "no queue")
    assert refused.returncode == 2
    assert "'no queue' is not a queue name" in refused.stderr


@pytest.mark.serial
def test_cancel_reaches_the_queue_and_the_running_job(
    tmp_path: Path, pg_dsn: str, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "sleep", dsn=pg_dsn)
    cleanup.append(s)
    waiting = s.submit("Ann", "--queue", "later")
    cancelled = s.cli("runs", "cancel", waiting)
    assert cancelled.stdout == f"{waiting}  cancelled (aborted)\n"
    [row] = s.rows()
    assert s.jobs() == {row["job_id"]: "cancelled"}  # out of the queue: no worker gets it
    running = s.submit("Bo")
    with running_worker(s, host="one"):
        until(s.starts, what="the agent's start")
        started = time.monotonic()
        done = s.hz("runs", "cancel", running, HZ_HOST_ID="two")  # another machine
        assert time.monotonic() - started < 10
        assert done.stdout == f"{running}  cancelled (aborted)\n"
        assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))
        job = s.rows("id = %s", (running,))[0]["job_id"]
        until(lambda: s.jobs()[job] == "aborted", what="the job aborted")
    assert len(s.starts()) == 1


@pytest.mark.serial
def test_a_lost_worker_runs_become_uncertain_elsewhere_and_its_host_kills_its_orphans(
    tmp_path: Path, pg_dsn: str, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "sleep", dsn=pg_dsn)
    cleanup.append(s)
    ids = sorted(s.submit(str(n)) for n in range(2))
    with running_worker(s, "-j", "2", host="alpha") as lost:
        until(lambda: len(s.starts()) == 2, what="two started agents")
        # The machine is lost with everything hz had on it; its agents live on (a partition).
        found = until(lambda: len(watchdogs(lost.pid)) == 2 and watchdogs(lost.pid))
        for watchdog in found:
            os.kill(watchdog, signal.SIGKILL)
        lost.kill()
    agents = [int(str(p["pid"])) for p in s.starts()]
    with running_worker(s, host="beta") as beta:
        until(
            lambda: [r["state"] for r in s.rows()] == ["uncertain", "uncertain"],
            what="uncertain after the lease expired",
        )
        assert sorted(r["id"] for r in s.rows()) == ids
        # Another host never signals alpha's processes: they still run.
        assert not any(is_gone(pid, wait=0.5) for pid in agents)
        assert set(s.jobs().values()) == {"failed"}  # ended without a retry
        with running_worker(s, host="alpha") as alpha:  # alpha comes back
            until(
                lambda: len(s.rows("swept_at IS NOT NULL")) == 2,
                what="its orphans swept",
                ceiling=30,
            )
            assert all(is_gone(pid) for pid in agents)
    said = [(w.stdout, w.stderr) for w in (alpha, beta)]
    assert len(s.starts()) == 2  # never relaunched
    for run_id in ids:
        shown = json.loads(s.cli("runs", "show", run_id, "--format", "json").stdout)
        details = [e["detail"] for e in shown["timeline"]]
        assert "its orphaned process group was killed" in details, (details, said)
        assert any("is gone; the agent may have run" in (d or "") for d in details)


@pytest.mark.serial
def test_a_worker_whose_connections_are_cut_keeps_working(tmp_path: Path, pg_dsn: str) -> None:
    # The default poll (1 s): an abort poll that meets a cut connection before the pool has
    # discarded it is said in one line ("poll_jobs_to_abort error"); a short poll makes that
    # likely, the default makes it rare, and the notes below allow it either way.
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn, poll=1.0)
    with running_worker(s) as worker:
        first = s.submit("Ann")
        until(lambda: s.rows("id = %s AND state = 'completed'", (first,)), what="first run")
        # Every connection of the worker cut (a database restart as the worker sees it):
        # procrastinate's pool and listener reconnect, hz's ledger connections too; a side
        # task that fails instead gets procrastinate's worker restarted.
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            killed = c.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
        assert killed
        second = s.submit("Bo")
        until(lambda: s.rows("id = %s AND state = 'completed'", (second,)), what="second run")
    out, err = worker.stdout, worker.stderr
    assert worker.returncode == 0
    assert out == f"{first}  completed  greet  greet.yaml\n{second}  completed  greet  greet.yaml\n"
    # Only hz's one-line notes: a restart of procrastinate's worker, psycopg's pool
    # discarding a connection that was cut (when it looked at one before reconnecting), and
    # procrastinate's abort poll meeting a cut connection before the pool discarded it.
    assert err.startswith(s.worker_started())
    notes = err.removeprefix(s.worker_started()).splitlines()
    assert all(
        re.fullmatch(r"hz: worker: procrastinate's worker stopped \(.+\); restarting", note)
        or note == "hz: worker: poll_jobs_to_abort error: Database error."
        or re.fullmatch(
            r"hz: worker: discarding closed connection: "
            r"<psycopg\.AsyncConnection \[BAD\] at 0x[0-9a-f]+>",
            note,
        )
        for note in notes
    ), notes

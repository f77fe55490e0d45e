"""The PostgreSQL ledger attacked by its environment and its operator: a hostile DSN, lease,
queue or priority, jobs deferred by hand, Ctrl-C twice while a worker starts. Each is a
diagnostic or a typed result (exit 2, a failed job, a run left alone), never an unexpected
error (exit 3) or a traceback. Rows edited by hand are attacked on both ledgers alike:
test_hostile_ledger.py."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import psycopg
import pytest

from tests.helpers.ledger_env import DSN_VARIABLE, Space, pg_rows, space, until
from tests.helpers.workers import running_worker

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

NOT_A_DSN = (
    f"hz: error: environment variable {DSN_VARIABLE}: not a PostgreSQL connection string "
    "(libpq key=value pairs or a postgresql:// URI)\n"
)


@pytest.fixture
def s(tmp_path: Path, pg_dsn: str) -> Space:
    return space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=pg_dsn)


def submit(s: Space, who: str) -> str:
    done = s.cli("submit", "greet.yaml", "--input", f"who={who}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "host=" + "a" * 5000,
            f"hz: error: environment variable {DSN_VARIABLE}: a DSN of at most 4096 characters "
            "without NUL is expected\n",
        ),
        ("=\x1b]0;owned\x07", NOT_A_DSN),
        ("host='unterminated\n", NOT_A_DSN),
    ],
    ids=["huge", "escape codes", "newline"],
)
def test_a_hostile_dsn_is_a_diagnostic(s: Space, value: str, expected: str) -> None:
    done = s.cli("runs", "list", **{DSN_VARIABLE: value})
    assert (done.returncode, done.stdout, done.stderr) == (2, "", expected)


def test_escape_codes_in_a_dsn_host_are_never_printed_raw(s: Space) -> None:
    done = s.cli("runs", "list", **{DSN_VARIABLE: "host=\x1b[2Jx\nuser=y dbname=z"})
    assert done.returncode == 2
    assert done.stderr.startswith("hz: error: postgresql database z on \\x1b[2Jx: ")
    assert "\x1b" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("lease", ["nan", "inf", "0", "1e300", "-1"])
def test_a_hostile_lease_is_a_diagnostic(s: Space, lease: str) -> None:
    s.config.write_text(
        s.config.read_text().replace("lease_seconds = 2", f"lease_seconds = {lease}")
    )
    line = s.config.read_text().splitlines().index(f"lease_seconds = {lease}") + 1
    shown = {"1e300": "1e+300"}.get(lease, lease)
    done = s.cli("runs", "list")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"hz: error: {s.config}:{line}:1: [system.queue] lease_seconds must be a number of "
        f"seconds from 1 to 3600, got {shown}\n"
        "  hint: the default is 15: an owner renews its lease every third of it\n",
    )


@pytest.mark.parametrize(
    ("command", "name", "shown"),
    [
        ("submit", "a\x1b[31mb\n", "'a\\x1b[31mb\\n'"),
        ("submit", "q" * 10_000, f"'{'q' * 64}' (… 10000 characters)"),
        ("worker", "q" * 10_000, f"'{'q' * 64}' (… 10000 characters)"),
    ],
    ids=["control characters", "10 kB", "10 kB to a worker"],
)
def test_a_hostile_queue_name_is_refused_briefly(
    s: Space, command: str, name: str, shown: str
) -> None:
    args = ("greet.yaml", "--input", "who=a") if command == "submit" else ("--drain",)
    done = s.cli(command, *args, "--queue", name)
    usage = "PACKET|JOB|CONTRACT..." if command == "submit" else ""
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"Usage: hz {command} [OPTIONS]{' ' + usage if usage else ''}\n"
        f"Try 'hz {command} --help' for help.\n\n"
        f"Error: Invalid value for --queue: {shown} is not a queue name (1 to 64 letters, "
        "digits, '.', '_' or '-')\n"
    )
    assert s.rows() == []


@pytest.mark.parametrize("priority", ["99999999999", "-1001"])
def test_a_priority_out_of_range_is_refused(s: Space, priority: str) -> None:
    done = s.cli("submit", "greet.yaml", "--input", "who=a", "--priority", priority)
    assert done.returncode == 2
    assert done.stderr.endswith(
        f"Error: Invalid value for '--priority': {priority} is not in the range -1000<=x<=1000.\n"
    )


def test_jobs_deferred_by_hand_end_failed_with_one_line_each(s: Space) -> None:
    """Jobs of hz's task that name no run of this ledger (another database's, none, not a run
    id, other arguments) run nothing, end failed and are never retried; the worker says so in
    one line each and goes on with the real run."""
    real = submit(s, "real")
    assert s.dsn is not None
    with psycopg.connect(s.dsn, autocommit=True) as c:
        for args in (
            '{"run_id": "run_20260101_000000000000"}',
            '{"run_id": "nope\\u001b[2J"}',
            '{"run_id": 5}',
            "{}",
            '{"run_id": "run_20260101_aaaaaaaaaaaa", "context": 1}',
        ):
            c.execute(
                "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW('default', 'hz.run', 0, NULL, "
                "NULL, %s::jsonb, now())::procrastinate_job_to_defer_v1])",
                (args,),
            )
    done = s.cli("worker", "--drain")
    assert (done.returncode, done.stdout) == (0, f"{real}  completed  greet  greet.yaml\n")
    assert done.stderr.startswith(s.worker_started())
    said = done.stderr.removeprefix(s.worker_started())
    lines = re.sub(r"lasted [0-9.]+ s", "lasted … s", said).splitlines()
    assert len(lines) == 5, done.stderr
    assert lines[0].startswith(
        "hz: worker: Job hz.run[2](run_id='run_20260101_000000000000') ended with status: "
        "Error, lasted … s: no run run_20260101_000000000000 in the ledger at postgresql "
        "database "
    )
    assert lines[0].endswith("; nothing was run")
    wrong = "hz.run takes one argument, run_id, an hz run id; nothing was run"
    assert lines[1:] == [
        "hz: worker: Job hz.run[3](run_id='nope\\x1b[2J') ended with status: Error, "
        f"lasted … s: {wrong}",
        f"hz: worker: Job hz.run[4](run_id=5) ended with status: Error, lasted … s: {wrong}",
        f"hz: worker: Job hz.run[5]() ended with status: Error, lasted … s: {wrong}",
        "hz: worker: Job hz.run[6](run_id='run_20260101_aaaaaaaaaaaa', context=1) ended with "
        f"status: Error, lasted … s: {wrong}",
    ]
    assert s.jobs() == {
        1: "succeeded",
        2: "failed",
        3: "failed",
        4: "failed",
        5: "failed",
        6: "failed",
    }
    assert len(s.starts()) == 1


def test_sigint_twice_while_a_worker_reconciles_at_start_aborts_cleanly(s: Space) -> None:
    assert s.dsn is not None
    assert s.cli("queue", "init").returncode == 0
    with psycopg.connect(s.dsn) as c:
        c.execute("LOCK TABLE hz.runs IN ACCESS EXCLUSIVE MODE")  # its reconciliation waits
        with running_worker(s) as worker:
            until(
                lambda: pg_rows(
                    s.dsn or "",
                    "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> %s",
                    (c.info.backend_pid,),
                ),
                what="the worker waiting for the runs table",
            )
            worker.send(signal.SIGINT)
            time.sleep(0.05)
            worker.send(signal.SIGINT)
            time.sleep(0.3)
            c.rollback()
            assert worker.wait() == 130
    assert (worker.stdout, worker.stderr) == ("", "\nhz: aborted\n")

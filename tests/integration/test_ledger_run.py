"""hz run through the run ledger: every foreground run recorded, batches (hz in this process,
the agents real processes); a SIGKILL or SIGINT of hz and many concurrent runs on one ledger
(hz as real processes), each recovered or read by the next command."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.ledger_env import Space, space, until
from tests.helpers.workers import running_worker


def run(s: Space, who: str, *args: str) -> tuple[int, dict[str, object], str]:
    done = s.cli("run", "greet.yaml", "--input", f"who={who}", "--format", "json", "-q", *args)
    return done.returncode, json.loads(done.stdout) if done.stdout else {}, done.stderr


@pytest.mark.child_coverage
def test_a_foreground_run_is_recorded_and_a_request_key_is_opt_in(
    dsn: str | None, tmp_path: Path
) -> None:
    """Without a key every hz run is a new run (the second run of a contract, a run again after
    a failure); with one the key has one run, and --force-new runs it again under the key."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    code, result, _ = run(s, "Ann")
    assert (code, result["status"]) == (0, "completed")
    [row] = s.rows()
    assert (row["state"], row["runner"], row["attempt"]) == ("completed", "command", 1)
    assert json.loads(row["result_json"]) == result
    assert run(s, "Ann")[0] == 0
    assert run(s, "Ann", "--request-key", "weekly 2026-W49")[0] == 0
    again = s.cli("run", "greet.yaml", "--input", "who=Ann", "--request-key", "weekly 2026-W49")
    assert (again.returncode, again.stdout) == (2, "")
    keyed = s.rows("request_key = ?", ("weekly 2026-W49",))
    assert again.stderr == (
        f"hz: error: run {keyed[0]['id']} (completed) already holds this request key; "
        "nothing was started\n"
        f"  hint: see hz runs show {keyed[0]['id']}; --force-new runs the request again under "
        "this key, another key (or none) starts a new run\n"
    )
    assert run(s, "Ann", "--request-key", "weekly 2026-W49", "--force-new")[0] == 0
    assert run(s, "Ann", "--no-ledger")[0] == 0
    rows = s.rows()
    assert len(rows) == 4
    assert len({r["request_key"] for r in rows}) == 3  # the keyed request twice
    assert len(s.starts()) == 5


@pytest.mark.child_coverage
def test_sigkill_of_hz_run_is_recovered_by_the_next_command(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "sleep", dsn=dsn)
    cleanup.append(s)
    hz = s.popen("run", "greet.yaml", "--input", "who=Ann", "-q", "--request-key", "once")
    until(s.starts, what="the agent's start")
    hz.kill()
    hz.communicate()
    [row] = s.rows()
    assert row["state"] == "running"
    leader = int(str(recorded_pids(s.pids)[0]["pid"]))
    listed = s.cli("runs", "list", "--format", "json")
    [shown] = json.loads(listed.stdout)["runs"]
    assert (shown["id"], shown["state"]) == (row["id"], "uncertain")
    # Group and private files go here, or already went with the chokepoint's watchdog.
    told = listed.stderr
    for done in ("; its process group was killed", "; its private directory was removed"):
        told = told.replace(done, "")
    assert told == (
        f"hz: reconciled {row['id']}: running -> uncertain: owner {row['owner']} is gone; "
        "the agent may have run\n"
    )
    assert is_gone(leader)
    assert not Path(row["private_dir"]).exists()
    [receipt] = (tmp_path / "state/receipts").glob("*.json")
    assert json.loads(receipt.read_text())["status"] == "uncertain"
    # Never again under its key: the request is held by the uncertain run.
    again = s.cli("run", "greet.yaml", "--input", "who=Ann", "--request-key", "once")
    assert again.returncode == 2
    assert f"run {row['id']} (uncertain) already holds this request key" in again.stderr
    assert len(s.starts()) == 1


def test_ten_concurrent_runs_and_a_worker_share_one_ledger(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    submitted = s.cli("submit", "greet.yaml", "--input", "who=queued", "--format", "json")
    assert submitted.returncode == 0, submitted.stderr
    with running_worker(s, "-j", "2"):
        # Five requests, each asked for twice at once under its key: one run per key, never two.
        # (Each key is one race; more keys only repeat it, at ~1 CPU-s per hz process.)
        runs = [
            s.popen(
                "run",
                "greet.yaml",
                "--input",
                f"who={n % 5}",
                "--format",
                "json",
                "-q",
                "--request-key",
                f"greet {n % 5}",
            )
            for n in range(10)
        ]
        outcomes = [(p.communicate(timeout=120), p.returncode) for p in runs]
        until(lambda: not s.rows("state NOT IN ('completed')"), what="every run completed")
    codes = sorted(code for _, code in outcomes)
    assert codes == [0] * 5 + [2] * 5
    rows = s.rows()
    assert len(rows) == 6
    assert len({r["request_key"] for r in rows}) == 6
    assert len(s.starts()) == 6
    if dsn is None:
        with sqlite3.connect(s.state / "ledger.sqlite3") as c:
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    verified = s.cli("receipts", "verify", "state/receipts")
    assert verified.stdout == "ok: 6 receipts in state/receipts, the chain is intact\n"


def test_a_batch_runs_n_at_once_with_one_json_line_per_run(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    for n in range(3):
        (tmp_path / f"g{n}.yaml").write_text(
            (tmp_path / "greet.yaml").read_text().replace("name: greet", f"name: greet-{n}")
        )
    done = s.cli(
        "run", "g0.yaml", "g1.yaml", "g2.yaml", "--input", "who=Ann", "-j", "2", "--format", "jsonl"
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(d["job_name"] for d in lines) == ["greet-0", "greet-1", "greet-2"]
    assert {d["state"] for d in lines} == {"completed"}


def test_a_batch_exit_status_names_the_first_run_that_did_not_complete(
    dsn: str | None, tmp_path: Path
) -> None:
    s = space(tmp_path, "fail", "--code=3", dsn=dsn)
    done = s.cli("run", "greet.yaml", "-j", "1", "--input", "who=Ann", "--format", "json")
    assert done.returncode == 4
    [run_doc] = json.loads(done.stdout)["runs"]
    assert (run_doc["state"], run_doc["failure_kind"]) == ("failed", "runtime_error")


def test_a_run_over_the_daily_ceiling_starts_nothing(dsn: str | None, tmp_path: Path) -> None:
    s = space(
        tmp_path,
        "echo",
        "--prompt-file={prompt_file}",
        max_usd=0.6,
        extra="[system.budget]\nmax_usd_per_day = 1.0\n",
        dsn=dsn,
    )
    assert run(s, "Ann")[0] == 0
    done = s.cli("run", "greet.yaml", "--input", "who=Bo")
    [_, row] = s.rows()
    assert (done.returncode, done.stdout) == (6, "")
    assert done.stderr == (
        "hz: failed (budget_ceiling): reserving $0.60 would cross [system.budget] "
        "max_usd_per_day of $1.00 ($0.60 reserved or spent today); nothing was started\n"
        f"  run {row['id']} (hz runs show {row['id']})\n"
    )
    assert (row["state"], row["failure_kind"], row["dispatched_at"]) == (
        "failed",
        "budget_ceiling",
        None,
    )
    assert len(s.starts()) == 1


@pytest.mark.child_coverage
def test_sigint_cancels_through_the_ledger_within_the_ceiling(
    dsn: str | None, tmp_path: Path, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "stubborn", dsn=dsn)
    cleanup.append(s)
    hz = s.popen("run", "greet.yaml", "--input", "who=Ann", "--format", "json", "-q")
    until(lambda: s.pids.exists() and len(recorded_pids(s.pids)) == 2, what="agent and helper")
    started = time.monotonic()
    hz.send_signal(signal.SIGINT)
    out, err = hz.communicate(timeout=30)
    assert time.monotonic() - started < 10
    result = json.loads(out)
    assert (hz.returncode, err) == (7, "")
    assert (result["status"], result["reason"]) == (
        "cancelled",
        "hz was interrupted (SIGINT); the run's processes were killed",
    )
    [row] = s.rows()
    assert row["state"] == "cancelled"
    shown = s.cli("runs", "show", row["id"], "--format", "json").stdout
    timeline = [(e["state"], e["detail"]) for e in json.loads(shown)["timeline"]]
    assert timeline[-2:] == [  # the intent committed, then the end
        ("cancel", "hz was interrupted (SIGINT)"),
        ("cancelled", "cancelled (aborted)"),
    ]
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))


@pytest.mark.child_coverage
def test_a_stopped_batch_reads_no_further_target(tmp_path: Path, cleanup: list[Space]) -> None:
    s = space(tmp_path, "sleep")
    cleanup.append(s)
    batch = s.popen("run", "greet.yaml", "greet.yaml", "greet.yaml", "--input", "who=Ann",
                    "-j", "1", "--format", "json")  # fmt: skip
    [agent] = until(s.starts, what="the first agent's start")
    batch.send_signal(signal.SIGINT)
    out, err = batch.communicate(timeout=30)
    assert batch.returncode == 7, err
    assert err == "hz: 2 of 3 targets were not started: the batch was stopped\n"
    [run_doc] = json.loads(out)["runs"]
    assert (run_doc["state"], run_doc["failure_kind"]) == ("cancelled", "aborted")
    assert [r["state"] for r in s.rows()] == ["cancelled"]  # the others were never read
    assert is_gone(int(str(agent["pid"])))
    assert len(s.starts()) == 1

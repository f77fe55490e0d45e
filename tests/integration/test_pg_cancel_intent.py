"""Issue 21, item 3: on PostgreSQL only the cancel intent in hz's table cancels a run. A role
with no privileges on hz's schema could send procrastinate's ``abort_job_requested``
notification with a running job's id, and the run ended ``cancelled`` "by hz runs cancel", its
processes killed; a role with rights on procrastinate's tables only could do the same through
the job's abort flag. Neither is acted on now; ``hz runs cancel`` by a role with grants is, and
the timeline names who cancelled."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import socket
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.ledger_env import DSN_VARIABLE, Space, space, until
from tests.helpers.workers import running_worker

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage


def role(pg_cluster: Any, pg_dsn: str, grants: str = "") -> str:
    """A new login role of the test's cluster (roles are the cluster's), and its DSN."""
    name = f"r_{secrets.token_hex(4)}"
    pg_cluster.admin(f"CREATE ROLE {name} LOGIN")
    if grants:
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            c.execute(grants.format(role=name))  # type: ignore[arg-type]
    return pg_dsn.replace("user=postgres", f"user={name}")


@pytest.mark.serial
def test_an_abort_without_hzs_intent_cancels_nothing(
    tmp_path: Path, pg_dsn: str, pg_cluster: Any, cleanup: list[Space]
) -> None:
    # The agent outlives the forged abort by many of the worker's abort polls (0.1 s here).
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", "--delay", "2.5", dsn=pg_dsn)
    cleanup.append(s)
    run_id = s.submit("Ann")
    [row] = s.rows()
    job = int(row["job_id"])
    with running_worker(s):
        until(s.starts, what="the agent's start")
        nobody = role(pg_cluster, pg_dsn)
        with psycopg.connect(nobody, autocommit=True) as c:
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as denied:
                c.execute("UPDATE hz.runs SET cancel_requested_at = 1")  # a forged intent
            assert str(denied.value).startswith("permission denied for schema hz")
            payload = json.dumps({"type": "abort_job_requested", "job_id": job})
            for channel in ("procrastinate_any_queue_v1", "procrastinate_queue_v1#default"):
                c.execute("SELECT pg_notify(%s, %s)", (channel, payload))
        queue_only = role(
            pg_cluster,
            pg_dsn,
            "GRANT USAGE ON SCHEMA public TO {role}; GRANT SELECT, UPDATE ON procrastinate_jobs "
            "TO {role}; GRANT INSERT ON procrastinate_events TO {role}; "
            "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}",
        )
        with psycopg.connect(queue_only, autocommit=True) as c:
            c.execute("SELECT procrastinate_cancel_job_v1(%s, true, false)", (job,))
        # As hz runs cancel run by that role: refused, nothing recorded.
        refused = s.cli("runs", "cancel", run_id, **{DSN_VARIABLE: nobody})
        assert (refused.returncode, refused.stdout) == (2, "")
        assert "the PostgreSQL ledger refused this role: permission denied for schema hz" in (
            refused.stderr
        )
        assert s.rows("state = 'running'")  # the abort flag was there while the run ran
        until(lambda: s.rows("state = 'completed'"), what="the run's own end")
    [row] = s.rows()
    assert (row["state"], row["cancel_requested_at"]) == ("completed", None)
    timeline = s.cli("runs", "show", run_id, "--format", "json").stdout
    assert [e["state"] for e in json.loads(timeline)["timeline"]] == [
        "queued",
        "queued",
        "prepared",
        "dispatching",
        "running",
        "completed",
    ]
    assert s.jobs()[job] == "succeeded"
    assert len(s.starts()) == 1


def test_hz_runs_cancel_by_a_role_with_grants_cancels_and_is_named(
    tmp_path: Path, pg_dsn: str, pg_cluster: Any, cleanup: list[Space]
) -> None:
    s = space(tmp_path, "sleep", dsn=pg_dsn)
    cleanup.append(s)
    run_id = s.submit("Ann")
    fleet = role(
        pg_cluster,
        pg_dsn,
        "GRANT USAGE ON SCHEMA hz, public TO {role}; GRANT SELECT ON hz.meta TO {role}; "
        "GRANT SELECT, INSERT, UPDATE ON hz.runs, hz.events, hz.publish_steps TO {role}; "
        "GRANT SELECT, INSERT, UPDATE, DELETE ON procrastinate_jobs, procrastinate_events, "
        "procrastinate_periodic_defers, procrastinate_workers TO {role}; "
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA hz, public TO {role}",
    )
    with running_worker(s):
        until(s.starts, what="the agent's start")
        until(lambda: s.rows("state = 'running'"), what="the running record")
        done = s.cli("runs", "cancel", run_id, "--format", "json", **{DSN_VARIABLE: fleet})
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["runs"]
    user = pwd.getpwuid(os.geteuid()).pw_name
    who = f"user {user} on host {socket.gethostname()}, database role {fleet.split('user=')[1]}"
    who = who.split(" dbname=")[0]
    assert run["state"] == "cancelled"
    assert ("cancel", f"cancel requested by hz runs cancel ({who})") in [
        (e["state"], e["detail"]) for e in run["timeline"]
    ]
    shown = s.cli("runs", "show", run_id).stdout
    assert f"cancel      cancel requested by hz runs cancel ({who})\n" in shown
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))

"""A fleet of ``hz worker`` processes on one PostgreSQL ledger, attacked: separate OS processes
stand in for machines (``HZ_HOST_ID``), the fake agent marks every start (``--markers``), the
leases are short (2 s). Every run starts at most once, whatever happens to a worker or to the
database; what cannot be known is ``uncertain``, and nothing overwrites that verdict.

test_ledger_postgres.py holds the single-worker cases (queues, priorities, cancel, a lost
host's orphans); here is what several workers at once show.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.compiler.render.packet import (
    TemplatePlace,
    job_from_contract,
    make_packet,
    render_prompt,
)
from hz.runtime.artifacts.canonical import canonical_json
from tests.fakes.agent import is_gone, markers, recorded_pids
from tests.helpers.ledger_env import PG_LEASE, Space, pg_rows, space, until, watchdogs
from tests.helpers.workers import Worker

# Timing-sensitive (signals, cancels, timeouts, kill grace): `make test` runs it in the
# serial lane, on an otherwise quiet machine.
pytestmark = pytest.mark.serial

TERMINAL = ("completed", "failed", "timeout", "budget", "cancelled", "uncertain")


@pytest.fixture
def fleet() -> Iterator[list[Any]]:
    """Everything a test started: workers stopped, spaces' agents killed, even on failure."""
    started: list[Any] = []
    yield started
    for thing in reversed(started):
        if isinstance(thing, Worker):
            thing.kill()
        else:
            thing.kill_recorded()


def fleet_space(
    tmp_path: Path, dsn: str, *agent: str, delay: float = 0.0, lease: float = PG_LEASE
) -> Space:
    marks = tmp_path / "markers"
    marks.mkdir(parents=True)
    args = ["echo", "--prompt-file={prompt_file}", f"--markers={marks}", *agent]
    if delay:
        args.append(f"--delay={delay}")
    return space(tmp_path, *args, dsn=dsn, lease=lease)


#: Stands for the input ``who`` in the one prompt ``submit_many`` renders.
WHO = "@who@"


def submit_many(s: Space, count: int, *options: str, prefix: str = "n") -> list[str]:
    """``count`` runs (inputs ``who=PREFIX0``…) queued by one ``hz submit``: packets made
    here, submitted as a batch of files. The contract is compiled and its prompt rendered once
    (a render is a bounded child process, ~0.2 s); each packet is that prompt with its own
    ``who``, as rendering it would give (the template only inserts the value)."""
    packets = s.root / f"packets-{prefix}"
    packets.mkdir()
    job, _, problems = job_from_contract(s.root / "greet.yaml")
    assert job is not None, problems
    prompt, problems = render_prompt(job.template, {"who": WHO}, TemplatePlace("greet.yaml"))
    assert prompt is not None, problems
    assert prompt.count(WHO) == 1, prompt
    targets = []
    for n in range(count):
        who = f"{prefix}{n}"
        packet = make_packet(job, {"who": who}, prompt.replace(WHO, who))
        target = packets / f"{n:04d}.json"
        target.write_text(canonical_json(packet.to_json_data()))
        targets.append(str(target))
    done = s.cli("submit", *targets, *options)
    assert done.returncode == 0, done.stderr
    ids = done.stdout.split()
    assert len(ids) == count
    return ids


def starts_by_who(s: Space) -> collections.Counter[str]:
    """How often the agent was started for each ``who`` (from the prompts it was given)."""
    found: collections.Counter[str] = collections.Counter()
    for prompt in markers(s.root / "markers"):
        words = [w for w in prompt.replace(".", " ").split() if w]
        found[words[words.index("to") + 1]] += 1
    return found


def registered(s: Space) -> int:
    """The id of procrastinate's newest worker row (a worker registers once it is up and taking
    jobs). Not their count: a worker that registers first prunes the rows whose heartbeat is
    older than its stalled-worker timeout (10 s here), a killed worker's among them."""
    assert s.dsn is not None
    rows = pg_rows(s.dsn, "SELECT coalesce(max(id), 0) AS n FROM procrastinate_workers", ())
    return int(rows[0]["n"])


def states(s: Space, ids: list[str] | None = None) -> dict[str, str]:
    rows = s.rows() if ids is None else s.rows("id = ANY(%s)", (ids,))
    return {r["id"]: r["state"] for r in rows}


def all_terminal(s: Space, count: int) -> bool:
    """``count`` runs or more (a retry is a run too), every one ended."""
    found = states(s)
    return len(found) >= count and all(state in TERMINAL for state in found.values())


def timeline(s: Space, run_id: str) -> list[str]:
    shown = s.cli("runs", "show", run_id, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    return [f"{e['state']}: {e['detail']}" for e in json.loads(shown.stdout)["timeline"]]


# -- many workers ------------------------------------------------------------------------------


def test_three_workers_run_ninety_runs_each_exactly_once(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    # 90 runs through 12 slots: every slot claims in more than seven rounds against the other
    # two workers' (exactly-once is a property of each claim; larger loads are
    # benchmarks/workers.py's).
    s = fleet_space(tmp_path, pg_dsn)
    fleet.append(s)
    workers = [Worker(s, "-j", "4", host=host) for host in ("alpha", "beta", "gamma")]
    fleet.extend(workers)
    ids = submit_many(s, 90)
    until(lambda: all_terminal(s, 90), ceiling=240, what="90 runs settled")
    assert [w.stop(60) for w in workers] == [0, 0, 0], [w.stderr for w in workers]
    assert set(states(s).values()) == {"completed"}
    assert starts_by_who(s) == {f"n{n}": 1 for n in range(90)}  # each started exactly once
    assert len(s.starts()) == 90
    rows = s.rows()
    assert {r["host_id"] for r in rows} == {"alpha", "beta", "gamma"}
    for worker in workers:
        mine = {
            r["id"]: Path(r["target"]).relative_to(s.root)
            for r in rows
            if r["host_id"] == worker.host
        }
        assert set(worker.lines) == {
            f"{i}  completed  greet  {target}" for i, target in mine.items()
        }
    assert sorted(r["id"] for r in rows) == sorted(ids)
    assert set(s.jobs().values()) == {"succeeded"}
    assert len(s.jobs()) == 90  # one job per run, none deferred twice


# -- a worker killed ---------------------------------------------------------------------------


@pytest.mark.child_coverage
def test_a_killed_worker_runs_become_uncertain_elsewhere_and_never_run_again(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    s = fleet_space(tmp_path, pg_dsn, delay=3600)
    fleet.append(s)
    doomed = submit_many(s, 4, "--queue", "doomed", prefix="d")
    alpha = Worker(s, "--queue", "doomed", "-j", "4", host="alpha")
    fleet.append(alpha)
    until(lambda: len(s.starts()) == 4, what="four agents started on alpha")
    # kill -9 of the whole worker as a machine loses it: the worker and its watchdogs (the
    # agents live on, as on a host cut off from the database).
    found = until(lambda: len(watchdogs(alpha.pid)) == 4 and watchdogs(alpha.pid))
    for pid in [*found, alpha.pid]:
        os.kill(pid, signal.SIGKILL)
    alpha.wait(10)
    agents = [int(str(p["pid"])) for p in s.starts()]
    # Other machines keep working, and see alpha's runs uncertain once the lease expired.
    short = fleet_space(tmp_path / "short", pg_dsn)
    fleet.append(short)
    others = [Worker(short, "-j", "2", host=host) for host in ("beta", "gamma")]
    fleet.extend(others)
    fine = submit_many(short, 8, prefix="f")
    until(
        lambda: set(states(s, doomed).values()) == {"uncertain"},
        what="alpha's runs uncertain after the lease",
    )
    until(lambda: set(states(s, fine).values()) == {"completed"}, what="the other runs")
    settled_by = {r["owner_host"] for r in s.rows("id = ANY(%s)", (doomed,))}
    assert "alpha" not in settled_by  # another machine's worker, or any hz command there
    assert not any(is_gone(pid, wait=0.2) for pid in agents)  # another host never signals
    assert set(s.jobs()[r["job_id"]] for r in s.rows("id = ANY(%s)", (doomed,))) == {"failed"}
    # alpha comes back (same host id): it kills its own orphans, and runs nothing again.
    before = registered(s)
    again = Worker(s, "--queue", "doomed", "-j", "4", host="alpha")
    fleet.append(again)
    until(lambda: len(s.rows("swept_at IS NOT NULL")) == 4, what="alpha's orphans swept")
    until(lambda: registered(s) > before, what="the restarted alpha up")  # its signals handled
    assert all(is_gone(pid) for pid in agents)
    assert [w.stop(60) for w in (again, *others)] == [0, 0, 0]
    assert again.lines == []  # nothing ran on the restarted alpha
    assert starts_by_who(s) == {f"d{n}": 1 for n in range(4)}
    assert starts_by_who(short) == {f"f{n}": 1 for n in range(8)}
    for run_id in doomed:
        trail = timeline(s, run_id)
        assert any("is gone; the agent may have run" in e for e in trail), trail
        assert "uncertain: its orphaned process group was killed" in trail, trail
        assert [e for e in trail if e.startswith(("running", "completed"))] == [
            next(e for e in trail if e.startswith("running"))
        ]  # started once, never completed
    assert set(states(s, doomed).values()) == {"uncertain"}


@pytest.mark.child_coverage
def test_a_worker_killed_alone_loses_its_agents_at_once_and_its_restart_settles_them(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    """``kill -9`` of the worker process only (an OOM kill, a crash): its watchdogs kill the
    agents' groups at once; the worker restarted on its host (systemd) settles the runs
    ``uncertain`` without waiting for the lease."""
    s = fleet_space(tmp_path, pg_dsn, delay=3600)
    fleet.append(s)
    ids = submit_many(s, 4)
    alpha = Worker(s, "-j", "4", host="alpha")
    fleet.append(alpha)
    until(lambda: len(s.starts()) == 4, what="four agents started")
    alpha.kill()
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))
    before = registered(s)
    again = Worker(s, "-j", "4", host="alpha")
    fleet.append(again)
    until(lambda: set(states(s, ids).values()) == {"uncertain"}, what="settled by its restart")
    until(lambda: registered(s) > before, what="the restarted worker up")
    assert again.stop(60) == 0
    assert len(s.starts()) == 4
    assert {row["owner_host"] for row in s.rows()} == {"alpha"}  # settled by alpha itself


@pytest.mark.child_coverage
def test_a_job_run_again_by_procrastinate_starts_nothing(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    """Finished jobs put back in procrastinate's queue (an operator's retry in its admin, a
    hand-written UPDATE, a retry strategy someone added): a worker takes them, and hz's claim
    refuses every one — the ledger decides, not the queue."""
    import psycopg

    s = fleet_space(tmp_path, pg_dsn)
    fleet.append(s)
    ids = submit_many(s, 3)
    done = s.cli("worker", "--drain", "-j", "3", HZ_HOST_ID="alpha")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("UPDATE procrastinate_jobs SET status = 'todo' WHERE status = 'succeeded'")
    assert set(s.jobs().values()) == {"todo"}
    again = s.cli("worker", "--drain", "-j", "3", HZ_HOST_ID="beta")
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""
    assert set(s.jobs().values()) == {"succeeded"}  # the job ran, and did nothing
    assert set(states(s, ids).values()) == {"completed"}
    assert starts_by_who(s) == {f"n{n}": 1 for n in range(3)}


# -- the database restarted --------------------------------------------------------------------


@pytest.mark.child_coverage
def test_a_database_restart_mid_batch_loses_and_repeats_nothing(
    tmp_path: Path, pg_cluster: Any, pg_dsn: str, fleet: list[Any]
) -> None:
    # A lease judged only once the database has been up one lease: a 2 s one leaves the
    # owners of running sessions too little time to renew it on a loaded machine (nothing
    # here waits for a lease to lapse).
    s = fleet_space(tmp_path, pg_dsn, delay=1.0, lease=5)
    fleet.append(s)
    workers = [Worker(s, "-j", "2", host=host) for host in ("alpha", "beta", "gamma")]
    fleet.extend(workers)
    ids = submit_many(s, 24)
    until(lambda: len(s.starts()) >= 9, what="a batch under way")
    pg_cluster.stop("fast")
    down = time.monotonic()
    # Down long enough for running sessions to end while nobody can write their result.
    running = len(s.starts())
    until(lambda: time.monotonic() - down > 1.5, what="an outage")
    pg_cluster.start()
    try:
        until(lambda: all_terminal(s, 24), ceiling=120, what="the batch settled")
    except AssertionError:  # say what is still under way, and what the workers said
        waiting = {r["id"]: timeline(s, r["id"]) for r in s.rows() if r["state"] not in TERMINAL}
        for worker in workers:
            worker.kill()
        said = "".join(w.stderr for w in workers)
        raise AssertionError(f"{json.dumps(waiting, indent=1)}\n{s.jobs()}\n{said}") from None
    # A job whose end a worker could not write as the database went away stays 'doing' until
    # that worker is silent four leases, or its run ended as long ago: reconciliation then
    # ends it as its run ended. A job that failed before its claim is replaced by a new one.
    until(
        lambda: set(s.jobs().values()) <= {"succeeded", "failed"},
        ceiling=60,
        what="every job ended",
    )
    codes = [w.stop(60) for w in workers]
    said = [w.notes for w in workers]
    found = states(s)
    lost = {i: timeline(s, i) for i, state in found.items() if state != "completed"}
    assert lost == {}, (json.dumps(lost, indent=1), said)
    assert starts_by_who(s) == {f"n{n}": 1 for n in range(24)}
    assert running < 24
    assert codes == [0, 0, 0], said
    assert sorted(found) == sorted(ids)
    jobs = s.jobs()
    assert {jobs[r["job_id"]] for r in s.rows()} == {"succeeded"}  # each run's job finished


# -- a partitioned worker ----------------------------------------------------------------------


@pytest.mark.child_coverage
def test_a_partitioned_worker_cannot_overwrite_the_uncertain_verdict(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    """alpha is frozen (SIGSTOP: no renewal, no writes, as behind a cut link) past its lease
    while its agent finishes; beta turns the run uncertain. alpha thawed sees the session end
    well, and can write nothing over the verdict."""
    s = fleet_space(tmp_path, pg_dsn, delay=1.0)
    fleet.append(s)
    receipts = tmp_path / "receipts"
    [run_id] = submit_many(s, 1, "--receipt-dir", str(receipts))
    alpha = Worker(s, host="alpha")
    fleet.append(alpha)
    until(lambda: s.starts(), what="the agent started on alpha")
    os.kill(alpha.pid, signal.SIGSTOP)
    try:
        beta = Worker(s, host="beta")
        fleet.append(beta)
        until(lambda: states(s) == {run_id: "uncertain"}, what="uncertain seen by beta")
        [agent] = s.starts()
        until(lambda: is_gone(int(str(agent["pid"])), wait=0), what="the agent's session ended")
    finally:
        os.kill(alpha.pid, signal.SIGCONT)
    until(lambda: alpha.lines, what="alpha's late report")
    # What the ledger holds, not its own view.
    assert alpha.lines == [f"{run_id}  uncertain  greet  packets-n/0000.json"]
    assert [alpha.stop(60), beta.stop(60)] == [0, 0]
    assert states(s) == {run_id: "uncertain"}
    trail = timeline(s, run_id)
    assert not any(e.startswith("completed") for e in trail), trail
    [row] = s.rows()
    assert row["result_json"] is None
    assert len(s.starts()) == 1
    # One receipt: the reconciler's verdict; the late owner wrote none beside it.
    written = [json.loads(p.read_text())["status"] for p in receipts.glob("*.json")]
    assert written == ["uncertain"]


# -- permissions --------------------------------------------------------------------------------

DEPLOYING = Path(__file__).resolve().parents[2] / "docs" / "deploying-workers.md"


def documented_grants() -> str:
    """The SQL block docs/deploying-workers.md gives the schema's owner to run."""
    text = DEPLOYING.read_text()
    start = text.index("-- as hz_owner, after hz queue init")
    return text[start : text.index("```", start)]


@pytest.mark.child_coverage
def test_the_documented_grants_are_enough_for_a_fleet_role(
    tmp_path: Path, pg_cluster: Any, fleet: list[Any]
) -> None:
    import secrets

    tag = secrets.token_hex(4)
    owner, member, name = f"hz_owner_{tag}", f"hz_fleet_{tag}", f"hz_grants_{tag}"
    pg_cluster.admin(f"CREATE ROLE {owner} LOGIN")
    pg_cluster.admin(f"CREATE ROLE {member} LOGIN")
    pg_cluster.admin(f"CREATE DATABASE {name} OWNER {owner}")
    try:
        as_owner = f"host={pg_cluster.root} port={pg_cluster.port} user={owner} dbname={name}"
        as_member = as_owner.replace(f"user={owner}", f"user={member}")
        s = fleet_space(tmp_path, as_member)
        fleet.append(s)
        # The fleet's role cannot create the schema: a message, not a half-made schema.
        early = s.cli("queue", "init")
        assert early.returncode == 2, early.stderr
        assert early.stderr.startswith(
            f"hz: error: postgresql database {name} on {pg_cluster.root} port "
            f"{pg_cluster.port}: the PostgreSQL ledger refused this role: permission denied"
        ), early.stderr
        assert "hint: grant the role what docs/deploying-workers.md lists" in early.stderr
        init = s.cli("queue", "init", HZ_TEST_LEDGER_DSN=as_owner)
        assert init.returncode == 0, init.stderr
        import psycopg

        with psycopg.connect(as_owner, autocommit=True) as c:
            c.execute(documented_grants().replace("hz_fleet", member))  # type: ignore[arg-type]
        ids = submit_many(s, 2)
        done = s.cli("worker", "--drain", "-j", "2", HZ_HOST_ID="fleet")
        assert done.returncode == 0, done.stderr
        assert sorted(done.stdout.splitlines()) == sorted(
            f"{run_id}  completed  greet  packets-n/{n:04d}.json" for n, run_id in enumerate(ids)
        )
        listed = s.cli("runs", "list", "--format", "json")
        assert listed.returncode == 0, listed.stderr
        assert {r["state"] for r in json.loads(listed.stdout)["runs"]} == {"completed"}
        cancel = s.cli("runs", "cancel", submit_many(s, 1, "--queue", "later", prefix="c")[0])
        assert cancel.returncode == 0, cancel.stderr
        assert cancel.stdout.endswith("  cancelled (aborted)\n")
    finally:
        pg_cluster.drop_database(name)
        pg_cluster.admin(f"DROP ROLE IF EXISTS {member}")
        pg_cluster.admin(f"DROP ROLE IF EXISTS {owner}")


# -- clocks -------------------------------------------------------------------------------------

SKEWED_CLOCK = """\
import os, time

_real = time.time
_skew = float(os.environ.get("HZ_TEST_CLOCK_SKEW", "0"))
time.time = lambda: _real() + _skew
"""


@pytest.mark.child_coverage
def test_a_host_whose_clock_runs_ahead_sees_no_live_lease_expired(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    """Leases are written and judged by the database's clock: beta, a minute ahead (NTP
    broken), does not turn alpha's live run uncertain."""
    s = fleet_space(tmp_path, pg_dsn, delay=3.0)
    fleet.append(s)
    skewed = tmp_path / "skewed"
    skewed.mkdir()
    (skewed / "sitecustomize.py").write_text(SKEWED_CLOCK)
    [first] = submit_many(s, 1)
    alpha = Worker(s, host="alpha")
    fleet.append(alpha)
    until(lambda: s.starts(), what="the agent started on alpha")
    path = f"{skewed}{os.pathsep}{s.env()['PYTHONPATH']}"
    beta = Worker(s, PYTHONPATH=path, HZ_TEST_CLOCK_SKEW="60", host="beta")
    fleet.append(beta)
    until(lambda: alpha.lines, ceiling=60, what="alpha's run finished")
    assert alpha.lines == [f"{first}  completed  greet  packets-n/0000.json"]
    assert alpha.stop(60) == 0
    assert beta.stop(60) == 0
    assert states(s) == {first: "completed"}
    assert len(s.starts()) == 1


# -- a cut link -----------------------------------------------------------------------------------


class Link:
    """A TCP proxy to the database (its unix socket) that can be cut and restored: while cut
    it accepts and holds every byte, forwarding nothing and closing nothing (packets dropped
    on the way, not a refused connection)."""

    def __init__(self, upstream: Path) -> None:
        import socket

        self.upstream = upstream
        self.cut = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[Any] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(str(self.upstream))
            self.sockets += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: Any, dst: Any) -> None:
        try:
            while data := src.recv(65536):
                while self.cut.is_set():
                    time.sleep(0.01)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(2)

    def close(self) -> None:
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()


@pytest.mark.child_coverage
def test_a_worker_cut_off_from_the_database_cannot_overwrite_the_uncertain_verdict(
    tmp_path: Path, pg_cluster: Any, pg_dsn: str, fleet: list[Any]
) -> None:
    """alpha reaches the database through a link that is cut while its agent runs (nothing
    refused, nothing answered), past its lease; beta, still connected, turns the run
    uncertain. The link restored, alpha's held writes are fenced out."""
    s = fleet_space(tmp_path, pg_dsn, delay=1.0)
    fleet.append(s)
    receipts = tmp_path / "receipts"
    [run_id] = submit_many(s, 1, "--receipt-dir", str(receipts))
    link = Link(pg_cluster.socket)
    try:
        dbname = pg_dsn.rsplit("dbname=", 1)[1]
        through = f"host=127.0.0.1 port={link.port} user={pg_cluster.user} dbname={dbname}"
        alpha = Worker(s, HZ_TEST_LEDGER_DSN=through, host="alpha")
        fleet.append(alpha)
        until(lambda: s.starts(), what="the agent started on alpha")
        link.cut.set()
        beta = Worker(s, host="beta")
        fleet.append(beta)
        until(lambda: states(s) == {run_id: "uncertain"}, what="uncertain seen by beta")
        [agent] = s.starts()
        until(lambda: is_gone(int(str(agent["pid"])), wait=0), what="the agent's session ended")
        link.cut.clear()
        until(lambda: alpha.lines, what="alpha's late report")
        assert alpha.lines == [f"{run_id}  uncertain  greet  packets-n/0000.json"]
        assert [alpha.stop(60), beta.stop(60)] == [0, 0]
    finally:
        link.cut.clear()
        link.close()
    assert states(s) == {run_id: "uncertain"}
    trail = timeline(s, run_id)
    assert not any(e.startswith(("completed", "cancel")) for e in trail), trail
    assert [json.loads(p.read_text())["status"] for p in receipts.glob("*.json")] == ["uncertain"]
    assert len(s.starts()) == 1


# -- the real claude CLI -----------------------------------------------------------------------


@pytest.mark.real_cli
def test_a_real_claude_run_through_a_postgres_worker(tmp_path: Path, pg_dsn: str) -> None:
    from tests.fakes.anthropic_server import FakeAnthropic, text
    from tests.fakes.claude_hz import contract_text, workspace
    from tests.helpers.ledger_env import DSN_VARIABLE

    work = workspace(tmp_path)
    with work.config.open("a") as f:
        f.write(
            f'\n[system.queue]\nbackend = "postgres"\ndsn_env = "{DSN_VARIABLE}"\n'
            "lease_seconds = 2\n"
        )
    contract = tmp_path / "contract.yaml"
    contract.write_text(contract_text(60))
    with FakeAnthropic([text("marmalade")]) as api:
        env = {
            **os.environ,
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "HZ_CONFIG": str(work.config),
            DSN_VARIABLE: pg_dsn,
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
        }

        def hz(*args: str, host: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "hz", *args],
                env={**env, "HZ_HOST_ID": host},
                capture_output=True,
                text=True,
                timeout=120,
                cwd=tmp_path,
            )

        queued = hz(
            "submit",
            str(contract),
            "--input",
            "question=What is in notes.txt?",
            "--workdir",
            str(work.work),
            "--receipt-dir",
            str(tmp_path / "receipts"),
            host="submitter",
        )
        assert queued.returncode == 0, queued.stderr
        run_id = queued.stdout.strip()
        done = hz("worker", "--drain", host="worker-1")
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"{run_id}  completed  notes-reader  contract.yaml\n"
        assert len(api.requests) == 1
    [row] = pg_rows(pg_dsn, "SELECT * FROM runs", ())
    assert (row["state"], row["host_id"], row["runner"]) == ("completed", "worker-1", "claude-code")
    assert json.loads(row["result_json"])["draft"] == "marmalade"
    [receipt] = (tmp_path / "receipts").glob("*.json")
    assert json.loads(receipt.read_text())["status"] == "completed"


def test_three_workers_never_reserve_past_the_daily_ceiling(
    tmp_path: Path, pg_dsn: str, fleet: list[Any]
) -> None:
    """$0.40 runs that cost $0.10 against a $1.00 day, on three workers (six slots): at most
    two reservations at once, the day's reservations never over the ceiling at any instant,
    every run that fits completes once, and the one that no longer fits waits, held."""
    marks = tmp_path / "markers"
    marks.mkdir()
    s = space(
        tmp_path,
        "json",
        "--cost=0.1",
        "--delay=0.5",
        f"--markers={marks}",
        "--prompt-file={prompt_file}",
        max_usd=0.4,
        extra='command_output = "json"\n[system.budget]\nmax_usd_per_day = 1.0\n',
        dsn=pg_dsn,
    )
    fleet.append(s)
    ids = submit_many(s, 8)
    workers = [Worker(s, "-j", "2", host=f"host-{n}") for n in range(3)]
    fleet.extend(workers)
    day = time.time() - time.time() % 86400
    peak_reserved, peak_live = 0.0, 0
    deadline = time.monotonic() + 120
    while len(s.rows("state = 'completed'")) < 7:
        assert time.monotonic() < deadline, states(s)
        [row] = pg_rows(
            pg_dsn,
            "SELECT COALESCE(SUM(reserved_usd), 0) AS reserved, COUNT(*) FILTER (WHERE state IN "
            "('dispatching', 'running')) AS live FROM runs WHERE dispatched_at >= %s",
            (day,),
        )
        peak_reserved = max(peak_reserved, float(row["reserved"]))
        peak_live = max(peak_live, int(row["live"]))
        time.sleep(0.02)
    time.sleep(0.5)  # time for a wrongly admitted eighth start: five fetch polls (0.1 s)
    assert [w.stop(60) for w in workers] == [0, 0, 0]
    assert peak_reserved <= 1.0 + 1e-9
    assert peak_live == 2
    found = states(s, ids)
    assert sorted(found.values()) == ["completed"] * 7 + ["queued"]
    # $0.70 spent: the eighth run's $0.40 would cross the ceiling until the next UTC day.
    [waiting] = [run_id for run_id, state in found.items() if state == "queued"]
    # Held once, recorded once (with what was reserved when it was first held).
    [held] = [line for line in timeline(s, waiting) if line.startswith("queued: waiting")]
    assert held.startswith(
        "queued: waiting: reserving $0.40 would cross [system.budget] max_usd_per_day of $1.00 ($"
    )
    [row] = s.rows("id = %s", (waiting,))
    assert (row["dispatched_at"], row["reserved_usd"], row["held_reason"]) == (
        None,
        0,
        "max_usd_per_day",
    )
    assert sorted(starts_by_who(s).values()) == [1] * 7
    assert len(s.jobs()) == 8  # one procrastinate job per run
    assert [w.notes for w in workers] == ["", "", ""]

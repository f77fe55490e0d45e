"""What a fleet of ``hz worker`` processes costs and gives: submit-to-start latency, runs per
second and hz's own overhead per run, on PostgreSQL (1, 2 and 4 workers) and, side by side,
on the SQLite ledger (one machine, one worker).

    .venv/bin/python benchmarks/workers.py [--workers 1,2,4] [--jobs 4] [--runs 128]
                                           [--idle-runs 30] [--seconds 1.0] [--no-sqlite]

Every run is the fake agent ``tests/fakes/agent.py echo --delay SECONDS`` as a real process
through the ``command`` runner; each worker is a separate ``hz worker -j JOBS`` process with
its own host id (machines stood in for by processes on this one). PostgreSQL is a throwaway
cluster in a temporary directory (``tests/pg.py``: initdb + pg_ctl, fsync off), started and
removed here; its server binaries must be installed (``.ci/install-debian``).

For each configuration:

1. **Idle queue**: ``--idle-runs`` runs submitted one at a time, ``--seconds / (JOBS - 1)``
   apart, so a slot is always free. Submit-to-start is from the run's commit in the ledger
   (``created_at``) to hz's ``running`` record (the agent spawned), p50 and p99.
2. **Throughput**: ``--runs`` runs submitted at once; runs per second from the first commit
   to the last terminal record, against the ideal (slots / seconds).
3. **hz's overhead per run** (idle-queue runs): ``created_at`` to ``ended_at`` minus the
   wall time of the same agent started bare (``subprocess.run``, measured here, median): what
   hz adds to a run, from queueing to the committed result.

Submissions are made in this process through the ledger's API (``Ledger.create``, the code
``hz submit`` runs), so that the submitter's own start-up is not counted. A measurement, not
a test: exit status 0. The load average is printed: on a shared machine with 2 cores, many
workers and their agents compete for the same CPUs, and the figures say so.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.ledger import AGENT, CONTRACT, ENV, percentile  # noqa: E402

DSN_VARIABLE = "HZ_BENCH_LEDGER_DSN"


def ms(value: float) -> str:
    return f"{value * 1000:7.1f} ms"


class Setup:
    """One configuration: its operator file, its ledger (opened here to submit and read)."""

    def __init__(self, work: Path, seconds: float, dsn: str | None) -> None:
        self.work = work
        self.dsn = dsn
        work.mkdir(parents=True)
        command = [sys.executable, AGENT, "echo", "--prompt-file={prompt_file}"]
        command += [f"--delay={seconds}", "--contract-file={contract_file}"]
        queue = f'[system.queue]\nbackend = "postgres"\ndsn_env = "{DSN_VARIABLE}"\n' if dsn else ""
        self.config = work / "operator.toml"
        self.config.write_text(
            '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
            f"command = {json.dumps(command)}\ncommand_enforces_read_only = true\n"
            'command_read_only_tools = ["Read"]\n' + queue
        )
        (work / "bench.yaml").write_text(CONTRACT)
        self.env = {
            **ENV,
            "PYTHONPATH": str(REPO),
            "HZ_CONFIG": str(self.config),
            "HZ_STATE_DIR": str(work / "state"),
            **({DSN_VARIABLE: dsn} if dsn else {}),
        }
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("HZ_")})
        from hz.runtime.config.layers import load_config
        from hz.runtime.ledger.session import ledger_for

        self.ledger = ledger_for(load_config(cwd=work, runner_keys=False))
        self.serial = 0
        from hz.compiler.render.packet import packet_from_path

        # One packet, rendered once: each run is a request of its own by its key.
        packet, _ = packet_from_path(
            work / "bench.yaml", inputs_file=None, input_args=("who=Ann",), max_usd_ceiling=100
        )
        assert packet is not None
        self.packet = packet

    def submit(self, count: int) -> list[str]:
        ids = []
        for _ in range(count):
            self.serial += 1
            run_id, _ = self.ledger.create(
                self.packet, key=f"bench-{self.serial}", workdir=self.work, receipt_dir=None
            )
            ids.append(run_id)
        return ids

    def rows(self, ids: list[str]) -> list[Any]:
        marks = ", ".join("?" * len(ids))
        return self.ledger.select(f"id IN ({marks})", tuple(ids))

    def running_at(self, ids: list[str]) -> dict[str, float]:
        marks = ", ".join("?" * len(ids))
        rows = self.ledger.connection.execute(
            f"SELECT run_id, MIN(at) AS at FROM events WHERE state = 'running' "
            f"AND run_id IN ({marks}) GROUP BY run_id",
            tuple(ids),
        ).fetchall()
        return {r["run_id"]: float(r["at"]) for r in rows}

    def wait_terminal(self, ids: list[str], ceiling: float = 600) -> list[Any]:
        deadline = time.monotonic() + ceiling
        while True:
            rows = self.rows(ids)
            if len(rows) == len(ids) and all(r.ended_at is not None for r in rows):
                return rows
            if time.monotonic() > deadline:
                raise SystemExit(f"runs did not settle within {ceiling} s")
            time.sleep(0.05)


def cpu_seconds(pid: int) -> tuple[float, float]:
    """A process's own CPU time and that of its waited-for children (its agents and their
    watchdogs), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


@contextlib.contextmanager
def workers(setup: Setup, count: int, jobs: int) -> Iterator[list[subprocess.Popen[str]]]:
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "hz", "worker", "-j", str(jobs)],
            cwd=setup.work,
            env={**setup.env, "HZ_HOST_ID": f"bench-{n}"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    try:
        # Warm: one run per worker slot's worth, so start-up is not in the figures.
        setup.wait_terminal(setup.submit(count * jobs), ceiling=120)
        yield started
    finally:
        for process in started:
            process.send_signal(signal.SIGTERM)
        for process in started:
            _, err = process.communicate(timeout=60)
            if process.returncode != 0:
                print(f"  (a worker exited {process.returncode}: {err.strip()[-300:]})")


def bare_agent(seconds: float, work: Path, repeat: int = 7) -> float:
    prompt = work / "prompt.txt"
    prompt.write_text("Say hi to Ann.\n")
    argv = [sys.executable, AGENT, "echo", f"--prompt-file={prompt}", f"--delay={seconds}"]
    walls = []
    for _ in range(repeat):
        started = time.monotonic()
        subprocess.run(argv, check=True, capture_output=True, env=ENV)
        walls.append(time.monotonic() - started)
    return percentile(walls, 0.5)


def measure(
    setup: Setup, label: str, count: int, jobs: int, runs: int, idle_runs: int, seconds: float
) -> dict[str, float]:
    with workers(setup, count, jobs) as processes:
        before = [cpu_seconds(p.pid) for p in processes]
        spacing = seconds / max(1, jobs - 1)
        idle = []
        for _ in range(idle_runs):
            idle += setup.submit(1)
            time.sleep(spacing)
        rows = {r.id: r for r in setup.wait_terminal(idle)}
        running = setup.running_at(idle)
        latency = [running[i] - rows[i].created_at for i in idle]
        wall = [rows[i].ended_at - rows[i].created_at for i in idle]
        batch = setup.submit(runs)
        done = setup.wait_terminal(batch)
        after = [cpu_seconds(p.pid) for p in processes]
    own = sum(a[0] - b[0] for a, b in zip(after, before, strict=True)) / (idle_runs + runs)
    agents = sum(a[1] - b[1] for a, b in zip(after, before, strict=True)) / (idle_runs + runs)
    assert {r.state for r in [*rows.values(), *done]} == {"completed"}
    first = min(r.created_at for r in done)
    last = max(r.ended_at for r in done)
    return {
        "latency_p50": percentile(latency, 0.5),
        "latency_p99": percentile(latency, 0.99),
        "wall_p50": percentile(wall, 0.5),
        "wall_p99": percentile(wall, 0.99),
        "throughput": runs / (last - first),
        "ideal": count * jobs / seconds,
        "cpu_hz": own,
        "cpu_agent": agents,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--runs", type=int, default=128)
    parser.add_argument("--idle-runs", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",") if n]  # --workers "": SQLite only

    from tests.pg import cluster

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="hz-bench-workers.") as tmp:
        work = Path(tmp)
        bare = bare_agent(args.seconds, work)
        print(f"the fake agent alone (--delay {args.seconds}): {ms(bare)} wall, median")
        with cluster() if counts else contextlib.nullcontext() as made:
            for count in counts:
                name = made.new_database()
                label = f"postgres, {count} worker{'s' if count > 1 else ''} x -j {args.jobs}"
                setup = Setup(work / f"pg-{count}", args.seconds, made.dsn(name))
                results[label] = measure(
                    setup, label, count, args.jobs, args.runs, args.idle_runs, args.seconds
                )
                setup.ledger.close()
                print(f"  measured: {label} (load {os.getloadavg()[0]:.2f})", flush=True)
        if not args.no_sqlite:
            label = f"sqlite, 1 worker x -j {args.jobs}"
            setup = Setup(work / "sqlite", args.seconds, None)
            results[label] = measure(
                setup, label, 1, args.jobs, args.runs, args.idle_runs, args.seconds
            )
            setup.ledger.close()
            print(f"  measured: {label} (load {os.getloadavg()[0]:.2f})", flush=True)
    print()
    header = (
        f"{'configuration':<30}{'submit->start p50':>19}{'p99':>11}{'runs/s':>9}{'ideal':>7}"
        f"{'hz overhead p50':>17}{'p99':>11}{'CPU/run: hz':>13}{'agent':>10}"
    )
    print(header)
    for label, r in results.items():
        print(
            f"{label:<30}{ms(r['latency_p50']):>19}{ms(r['latency_p99']):>11}"
            f"{r['throughput']:>9.2f}{r['ideal']:>7.1f}"
            f"{ms(r['wall_p50'] - bare):>17}{ms(r['wall_p99'] - bare):>11}"
            f"{ms(r['cpu_hz']):>13}{ms(r['cpu_agent']):>10}"
        )
    pg = [r for label, r in results.items() if label.startswith("postgres")]
    if len(pg) > 1:
        print(
            f"\nthroughput {counts[-1]} workers / {counts[0]}: "
            f"{pg[-1]['throughput'] / pg[0]['throughput']:.2f}x (target >= 3.5x from 1 to 4)"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

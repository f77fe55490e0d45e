"""What the run ledger costs: overhead per run, the fsync at ``dispatching``, and batches of
fake-agent runs.

    .venv/bin/python benchmarks/ledger.py [--runs 200] [--batch 1,8,500] [--jobs 8] [--dir D]

1. Overhead per run, in process, with the ``echo`` runner (it starts no process, so the
   difference is the ledger alone): a run through the ledger (create the run with its request
   key, prepared, dispatching with the reservation, running, the terminal record, the lease
   watcher) against the same run without it (``hz run --no-ledger``'s path: bind, execute).
   Prints p50 and p99 of both and of the difference. Receipts are off on both sides.
2. Of that overhead, the ``dispatching`` commit: it is the one commit hz syncs to disk
   (``synchronous = FULL``, see ``hz.runtime.ledger.db.durable``), so that a power loss cannot
   make a started run look never started and have it launched again. Printed as measured in
   the runs above, and beside it the same kind of commit without the sync, to show what the
   durability costs on this disk. It is not traded away: the figure is the price.
3. ``hz run -j JOBS`` over each size of ``--batch`` (targets naming one rendered packet,
   ``--force-new``), each run the fake agent ``tests/fakes/agent.py echo`` as a real process
   through the ``command`` runner: wall time, runs per second and hz's own peak memory
   (``VmHWM`` of the hz process, not its agents). The batch reads its targets one at a time,
   so the peak should not grow with the size.

A measurement, not a test: exit status 0. The ledger lives in a temporary state directory
under ``--dir`` (default: beside the operator's real state directory, so the fsync hits the
disk the ledger would be on; a tmpfs would make it free). The load average is printed: the
figures of a busy machine are not those of a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
AGENT = str(REPO / "tests" / "fakes" / "agent.py")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("HZ_")}

CONTRACT = """\
hz:
  contract: 1
  name: bench
  timeout: 60s
  agent:
    tools: [Read]
    max_usd: 0.1
  inputs:
    who:
      schema: {type: string}
contract: |
  Be brief.
prompt: |
  Say hi to {{ inputs.who }}.
"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def overhead(runs: int, work: Path) -> None:
    from hz.cli.ledger_run import Request, run_foreground
    from hz.compiler.render.packet import packet_from_path
    from hz.runtime.config.layers import load_config
    from hz.runtime.execution.execute import bind, execute
    from hz.runtime.ledger.owner import Binding, Policy
    from hz.runtime.ledger.store import Ledger
    from hz.runtime.runners.protocol import RunRequest

    (work / "bench.yaml").write_text(CONTRACT)
    packet, _ = packet_from_path(
        work / "bench.yaml", inputs_file=None, input_args=("who=Ann",), max_usd_ceiling=100
    )
    assert packet is not None
    ledger = Ledger(work / "state" / "ledger.sqlite3")
    runner = bind(load_config(environ={"HZ_RUNNER": "echo"}))
    binding = Binding(runner, "echo", "")
    plain: list[float] = []
    ledgered: list[float] = []
    dispatching: list[float] = []
    dispatch = Ledger.dispatch

    def timed_dispatch(self: Ledger, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return dispatch(self, *args, **kwargs)
        finally:
            dispatching.append(time.perf_counter() - started)

    Ledger.dispatch = timed_dispatch  # type: ignore[method-assign]
    try:
        for n in range(runs):
            started = time.perf_counter()
            execute(runner, RunRequest.for_packet(packet, workdir=work))
            plain.append(time.perf_counter() - started)
            started = time.perf_counter()
            request = Request(packet, f"key-{n}", work, None, False)
            outcome = run_foreground(ledger, request, binding=binding, policy=Policy())
            ledgered.append(time.perf_counter() - started)
            assert outcome.state == "completed", outcome
    finally:
        Ledger.dispatch = dispatch  # type: ignore[method-assign]
    difference = [b - a for a, b in zip(plain, ledgered, strict=True)]
    print(f"overhead per run ({runs} runs, echo runner, in process):")
    for name, values in (("no ledger", plain), ("ledger", ledgered), ("overhead", difference)):
        print(f"  {name:<12}{figures(values)}")
    print("  of which the dispatching commit (synced to disk):")
    print(f"  {'dispatching':<12}{figures(dispatching)}")
    synced, unsynced = commits(ledger, runs)
    print(f"  the same kind of commit, {runs} times in a row, with and without the sync:")
    print(f"  {'FULL':<12}{figures(synced)}")
    print(f"  {'NORMAL':<12}{figures(unsynced)}")


def figures(values: list[float]) -> str:
    p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
    return f"p50 {p50:7.2f} ms   p99 {p99:7.2f} ms"


def commits(ledger: Any, count: int) -> tuple[list[float], list[float]]:
    """One-row update commits through ``durable`` (FULL) and through ``immediate`` (NORMAL)."""
    from hz.runtime.ledger.db import durable, immediate

    connection = ledger.connection
    connection.execute("CREATE TABLE IF NOT EXISTS bench (n INTEGER)")
    connection.execute("INSERT INTO bench VALUES (0)")
    timings: dict[str, list[float]] = {"FULL": [], "NORMAL": []}
    for _ in range(count):
        for name, transaction in (("FULL", durable), ("NORMAL", immediate)):
            started = time.perf_counter()
            with transaction(connection) as c:
                c.execute("UPDATE bench SET n = n + 1")
            timings[name].append(time.perf_counter() - started)
    connection.execute("DROP TABLE bench")
    return timings["FULL"], timings["NORMAL"]


def batch(size: int, jobs: int, work: Path) -> tuple[float, int]:
    """Wall seconds and hz's peak resident memory (KiB) for one batch."""
    config = work / "operator.toml"
    command = [sys.executable, AGENT, "echo", "--prompt-file={prompt_file}"]
    command.append("--contract-file={contract_file}")
    config.write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\ncommand_enforces_read_only = true\n"
        'command_read_only_tools = ["Read"]\n'
    )
    env = {**ENV, "HZ_CONFIG": str(config), "HZ_STATE_DIR": str(work / f"state-{size}")}
    hz = [sys.executable, "-m", "hz"]
    (work / "bench.yaml").write_text(CONTRACT)
    subprocess.run(
        [*hz, "render", "bench.yaml", "--input", "who=Ann", "-o", "packet.json"],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
    )
    argv = [*hz, "run", "-j", str(jobs), "--force-new", "--no-receipt", "-q", "--format", "jsonl"]
    argv += ["packet.json"] * size
    started = time.monotonic()
    # To a file: a pipe read only at the end would fill up and stall the batch.
    out_file = (work / f"out-{size}.jsonl").open("w+")
    process = subprocess.Popen(
        argv, cwd=work, env=env, stdout=out_file, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    while process.poll() is None:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            peak = max(peak, int(status.split("VmHWM:")[1].split()[0]))
        except (OSError, IndexError):
            pass
        time.sleep(0.1)
    _, err = process.communicate()
    wall = time.monotonic() - started
    out_file.seek(0)
    lines = out_file.read().splitlines()
    out_file.close()
    states = {json.loads(line)["state"] for line in lines}
    assert process.returncode == 0, err
    assert (len(lines), states) == (size, {"completed"}), err
    return wall, peak


def default_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("hz", appauthor=False)).parent


def file_system(path: Path) -> str:
    """The type of the file system ``path`` is on (from /proc/mounts), or ``?``."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "?"
    found = [(m[1], m[2]) for m in mounts if str(path).startswith(m[1].rstrip("/") + "/")]
    return max(found, key=lambda m: len(m[0]))[1] if found else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--batch", default="1,8,500", help="batch sizes, comma-separated")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--dir", type=Path, default=None, help="where the state goes")
    args = parser.parse_args()
    sizes = [int(size) for size in args.batch.split(",") if size]
    parent = args.dir or default_dir()
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent, prefix="hz-bench-") as tmp:
        work = Path(tmp)
        load = " ".join(f"{n:.2f}" for n in os.getloadavg())
        print(f"state in {work} ({file_system(work)}); {os.cpu_count()} CPUs, load {load}")
        overhead(args.runs, work)
        print(f"batches of fake-agent runs, hz run -j {args.jobs}:")
        for size in sizes:
            wall, peak = batch(size, args.jobs, work)
            print(
                f"  {size:>5} runs  {wall:7.1f} s  {size / wall:6.1f} runs/s  "
                f"hz peak memory {peak / 1024:6.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

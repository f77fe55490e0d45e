"""What the run ledger costs: overhead per run, and a batch of 1,000 fake-agent runs.

    .venv/bin/python benchmarks/ledger.py [--runs 200] [--batch 1000] [--jobs 8]

1. Overhead per run, in process, with the ``echo`` runner (it starts no process, so the
   difference is the ledger alone): a run through the ledger (create the run with its request
   key, prepared, dispatching with the reservation, running, the terminal record, the lease
   watcher) against the same run without it (``hz run --no-ledger``'s path: bind, execute).
   Prints p50 and p99 of both and of the difference. Receipts are off on both sides.
2. ``hz run -j JOBS`` over BATCH targets (one rendered packet, ``--force-new``), each run the
   fake agent ``tests/fakes/agent.py echo`` as a real process through the ``command`` runner:
   wall time, runs per second and hz's own peak memory (``VmHWM`` of the hz process, not its
   agents), for BATCH and for BATCH/10 to show whether memory grows with the batch.

A measurement, not a test: exit status 0. The ledger lives in a temporary state directory.
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
    from hz.runtime.execute import bind, execute
    from hz.runtime.ledger.owner import Binding, Policy
    from hz.runtime.ledger.store import Ledger
    from hz.runtime.protocol import RunRequest

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
    for n in range(runs):
        started = time.perf_counter()
        execute(runner, RunRequest.for_packet(packet, workdir=work))
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        request = Request(packet, f"key-{n}", work, None, False)
        outcome = run_foreground(ledger, request, binding=binding, policy=Policy())
        ledgered.append(time.perf_counter() - started)
        assert outcome.state == "completed", outcome
    difference = [b - a for a, b in zip(plain, ledgered, strict=True)]
    print(f"overhead per run ({runs} runs, echo runner, in process):")
    for name, values in (("no ledger", plain), ("ledger", ledgered), ("overhead", difference)):
        p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
        print(f"  {name:<10} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        overhead(args.runs, work)
        print(f"batch of fake-agent runs, hz run -j {args.jobs}:")
        for size in (max(args.batch // 10, 1), args.batch):
            wall, peak = batch(size, args.jobs, work)
            print(
                f"  {size:>5} runs  {wall:7.1f} s  {size / wall:6.1f} runs/s  "
                f"hz peak memory {peak / 1024:6.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time the whole ``hz run`` process against running the fake agent directly.

    .venv/bin/python benchmarks/run.py [--repeat 9]

Both sides run ``tests/fakes/agent.py echo`` as a real process: once directly (the prompt on
stdin), once through ``hz run PACKET`` with the ``command`` runner wrapping it (configuration,
reading the packet, private files, the bounded process, the receipt). A second hz line runs a
contract instead of a packet, to show what compiling and rendering in memory adds. The sides
run alternately so load from other processes hits both alike. Prints the median and best wall
time of each, the overhead in ms and the ratio. A measurement, not a test: exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HZ = str(Path(sys.executable).parent / "hz")
AGENT = str(REPO / "tests" / "fakes" / "agent.py")
# Measure an installed tool: with bytecode caching, without a developer's HZ_* settings.
ENV = {
    k: v
    for k, v in os.environ.items()
    if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("HZ_")
}

CONTRACT = """\
hz:
  contract: 1
  name: bench
  timeout: 60s
  agent:
    tools: [Read]
    max_usd: 0.5
  inputs:
    who:
      schema: {type: string}
contract: Be brief.
prompt: Say hi to {{ inputs.who }}.
"""


def timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def setup(work: Path) -> dict[str, str]:
    (work / "bench.yaml").write_text(CONTRACT)
    command = [
        sys.executable,
        AGENT,
        "echo",
        "--prompt-file={prompt_file}",
        "--contract-file={contract_file}",
    ]
    (work / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\ncommand_enforces_read_only = true\n"
        'command_read_only_tools = ["Read"]\n'
    )
    env = {
        **ENV,
        "HZ_CONFIG": str(work / "operator.toml"),
        "HZ_SITE_CONFIG": str(work / "no-site.toml"),
        # The ledger and the default receipt chain: not the user's own.
        "HZ_STATE_DIR": str(work / "state"),
    }
    subprocess.run(
        [HZ, "render", "bench.yaml", "--input", "who=Ann", "-o", "packet.json"],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
    )
    return env


def report(label: str, times: list[float], base: float) -> None:
    median = statistics.median(times)
    print(
        f"  {label:<26} median {median * 1000:7.1f} ms   best {min(times) * 1000:7.1f} ms"
        + (
            ""
            if base == median
            else f"   overhead {(median - base) * 1000:+7.1f} ms   ratio {median / base:5.2f}x"
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = setup(work)
        direct = [sys.executable, AGENT, "echo"]
        packet = [HZ, "run", "packet.json", "--force-new", "--no-receipt", "-q"]
        with_receipt = [HZ, "run", "packet.json", "--force-new", "-q"]
        contract = [
            HZ,
            "run",
            "bench.yaml",
            "--input",
            "who=Ann",
            "--force-new",
            "--no-receipt",
            "-q",
        ]
        sides: dict[str, list[float]] = {"direct": [], "packet": [], "receipt": [], "contract": []}
        for _ in range(args.repeat + 1):  # the first round warms caches and is dropped
            sides["direct"].append(timed(direct, work, ENV, b"Say hi to Ann."))
            sides["packet"].append(timed(packet, work, env))
            sides["receipt"].append(timed(with_receipt, work, env))
            sides["contract"].append(timed(contract, work, env))
        for times in sides.values():
            del times[0]
        base = statistics.median(sides["direct"])
        print(f"hz run vs the fake agent run directly ({args.repeat} runs each, wall time)")
        report("fake agent directly", sides["direct"], base)
        report("hz run PACKET", sides["packet"], base)
        report("hz run PACKET + receipt", sides["receipt"], base)
        report("hz run CONTRACT", sides["contract"], base)


if __name__ == "__main__":
    main()

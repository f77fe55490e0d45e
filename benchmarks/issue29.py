"""Every figure of issue 29 ("Fast where users wait") in one run, each beside what it is
measured against, with the machine and its load.

    .venv/bin/python benchmarks/issue29.py [--repeat 9] [--compile-count 10000] [--workers]

1. ``hz validate`` against ``check-jsonschema`` (same files, same schema): one contract, and
   500 generated contracts (goals 0.5x and 0.2x).
2. ``hz run`` with the claude-code runner on the real pinned ``claude`` CLI (``HZ_AGENT_CLIS``)
   against the same ``claude -p`` invocation run bare (the argv, environment, working
   directory and stdin hz gives it), both answered by an instant local fake model
   (``tests/fakes/anthropic_server.py``): from a packet and from a contract (goals +50 ms and
   +100 ms). Without the pinned CLI, the fake agent through the command runner instead.
3. ``hz compile`` of ``--compile-count`` contracts to a fresh directory: wall, CPU and peak
   memory (goals 5 s and 80 MiB), beside the floor this disk sets: creating as many files of
   the same size, and nothing else.
4. With ``--workers``: ``benchmarks/workers.py`` (PostgreSQL 1 and 4 workers, SQLite 1 worker):
   submit-to-start, hz's overhead per run against the bare agent, the 1 -> 4 scale-out.

Whole processes, alternating sides so that load from other processes hits both alike,
medians. A measurement, not a test: exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(1, str(REPO))
import compile as compile_bench  # noqa: E402
import run as run_bench  # noqa: E402
from gen_contracts import generate  # noqa: E402

BIN = Path(sys.executable).parent
SCHEMA = REPO / "schemas" / "workflow-contract.schema.json"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{argv[0]} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def _sides(
    sides: dict[str, tuple[list[str], Path, dict[str, str], bytes]], repeat: int
) -> dict[str, float]:
    """Median wall seconds of each side, alternating, after one dropped warm-up round."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(repeat + 1):
        for name, (argv, cwd, env, stdin) in sides.items():
            elapsed = _timed(argv, cwd, env, stdin)
            if round_:
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def _row(label: str, ours: float, theirs: float, goal: str, met: bool) -> None:
    print(
        f"  {label:<34} {ours * 1000:8.1f} ms  {theirs * 1000:8.1f} ms  "
        f"{ours / theirs:5.2f}x  {goal:<10} {'met' if met else 'NOT met'}"
    )


def validate(repeat: int, work: Path) -> None:
    print("1. hz validate vs check-jsonschema (median wall)")
    print(f"  {'case':<34} {'hz':>11}  {'other':>11}  ratio  goal")
    hz = [str(BIN / "hz"), "validate"]
    cj = [str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA)]
    one = REPO / "contracts" / "weekly-digest.yaml"
    got = _sides(
        {"hz": ([*hz, str(one)], REPO, ENV, b""), "cj": ([*cj, str(one)], REPO, ENV, b"")},
        repeat,
    )
    _row(
        "one contract (weekly-digest)",
        got["hz"],
        got["cj"],
        "<= 0.5x",
        got["hz"] <= 0.5 * got["cj"],
    )
    files = generate(work / "contracts", 500)
    got = _sides(
        {
            "hz": ([*hz, str(work / "contracts")], REPO, ENV, b""),
            "cj": ([*cj, *map(str, files)], REPO, ENV, b""),
        },
        repeat,
    )
    _row("500 generated contracts", got["hz"], got["cj"], "<= 0.2x", got["hz"] <= 0.2 * got["cj"])


CLAUDE_CONTRACT = """\
hz:
  contract: 1
  name: notes-reader
  timeout: 60
  agent:
    tools: [Read, Grep]
    max_usd: 0.5
  inputs:
    question:
      schema: {type: string}
contract: |
  Never write files.
prompt: |
  Question: {{ inputs.question }}
"""
#: Records what hz starts (argv, environment, working directory, stdin), then is the CLI.
SPY = """\
#!{python}
import json, os, sys
data = sys.stdin.buffer.read()
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(),
               "stdin": data.decode()}}, f)
"""


def _claude_bare(work: Path, env: dict[str, str], hz_env: dict[str, str]) -> tuple:
    """The ``claude -p`` invocation hz makes, recorded once by a spy and replayed bare:
    the same argv (the contract file copied out of hz's private directory, which hz
    removes), environment, working directory and prompt on stdin."""
    record = work / "spy.json"
    spy = work / "spy"
    spy.write_text(SPY.format(python=sys.executable, record=str(record)))
    spy.chmod(0o755)
    spy_config = work / "spy.toml"
    spy_config.write_text((work / "operator.toml").read_text().replace(str(_claude()), str(spy)))
    subprocess.run(
        [str(BIN / "hz"), "run", "packet.json", "--force-new", "--no-receipt", "-q"],
        cwd=work,
        env={**hz_env, "HZ_CONFIG": str(spy_config)},
        capture_output=True,
        check=False,
    )
    seen = json.loads(record.read_text())
    argv = list(seen["argv"])
    at = argv.index("--append-system-prompt-file") + 1
    (work / "contract.md").write_text("Never write files.\n")
    argv[at] = str(work / "contract.md")
    return ([str(_claude()), *argv], Path(seen["cwd"]), seen["env"], seen["stdin"].encode())


def _claude() -> Path:
    clis = os.environ.get("HZ_AGENT_CLIS", "/root/.cache/hz/agent-clis")
    return Path(clis) / "node_modules" / ".bin" / "claude"


def run(repeat: int, work: Path) -> None:
    if not _claude().is_file():
        print(f"  (no pinned claude CLI at {_claude()}: the fake agent instead)")
        return run_fake(repeat, work)
    from tests.fakes.anthropic_server import MODEL, FakeAnthropic, text

    print("2. hz run (claude-code runner) vs the same claude -p bare; instant fake model")
    (work / "work").mkdir()
    (work / "bench.yaml").write_text(CLAUDE_CONTRACT)
    (work / "operator.toml").write_text(
        '[system]\nmax_attempts = 1\n\n[capabilities]\nagent_runner = "claude-code"\n\n'
        f"[system.runner]\nclaude_executable = {json.dumps(str(_claude()))}\n"
        'allow_api_key_billing = true\nclaude_env = ["ANTHROPIC_BASE_URL"]\n'
        f'claude_max_retries = 0\nmodel = "{MODEL}"\n'
    )
    with FakeAnthropic([text("The notes say hello.")], repeat_last=True) as api:
        env = {
            **run_bench.ENV,
            "HZ_CONFIG": str(work / "operator.toml"),
            "HZ_SITE_CONFIG": str(work / "no-site.toml"),
            "HZ_STATE_DIR": str(work / "state"),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
        }
        question = ["--input", "question=What is in notes.txt?"]
        subprocess.run(
            [str(BIN / "hz"), "render", "bench.yaml", *question, "-o", "packet.json"],
            cwd=work,
            env=env,
            check=True,
            capture_output=True,
        )
        bare = _claude_bare(work, env, env)
        tail = ["--workdir", str(work / "work"), "--force-new", "--no-receipt", "-q"]
        hz = str(BIN / "hz")
        got = _sides(
            {
                "bare": bare,
                "packet": ([hz, "run", "packet.json", *tail], work, env, b""),
                "contract": ([hz, "run", "bench.yaml", *question, *tail], work, env, b""),
            },
            repeat,
        )
    _run_rows(got)


def _run_rows(got: dict[str, float]) -> None:
    for side, goal in (("packet", 0.050), ("contract", 0.100)):
        over = got[side] - got["bare"]
        verdict = "met" if over <= goal else "NOT met"
        print(
            f"  hz run {side.upper():<27} {got[side] * 1000:8.1f} ms  "
            f"{got['bare'] * 1000:8.1f} ms  {got[side] / got['bare']:5.2f}x  "
            f"+{over * 1000:.0f} ms (goal +{goal * 1000:.0f} ms) {verdict}"
        )


def run_fake(repeat: int, work: Path) -> None:
    print("2. hz run vs the agent run bare (command runner, the fake agent; median wall)")
    env = run_bench.setup(work)
    hz = str(BIN / "hz")
    bare = [sys.executable, run_bench.AGENT, "echo"]
    got = _sides(
        {
            "bare": (bare, work, run_bench.ENV, b"Say hi to Ann."),
            "packet": (
                [hz, "run", "packet.json", "--force-new", "--no-receipt", "-q"],
                work,
                env,
                b"",
            ),
            "contract": (
                [
                    hz,
                    "run",
                    "bench.yaml",
                    "--input",
                    "who=Ann",
                    "--force-new",
                    "--no-receipt",
                    "-q",
                ],
                work,
                env,
                b"",
            ),
        },
        repeat,
    )
    _run_rows(got)


def _compile_once(directory: Path, out: Path) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak MiB of one ``hz compile`` process, from its own
    ``wait4`` (the peak of this process's earlier children, such as the node of the claude
    CLI, is not the compile's)."""
    cmd = [sys.executable, "-m", "hz", "compile", "contracts", "--out", str(out), "-q"]
    started = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=directory, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if child.returncode != 0:
        sys.exit(f"hz compile failed ({child.returncode})")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def compile_(count: int, work: Path) -> None:
    print(f"3. hz compile of {count:,} contracts to a fresh directory")
    compile_bench.generate(work, count)
    wall, cpu, peak = _compile_once(work, work / "jobs")
    sizes = [p.stat().st_size for p in (work / "jobs").glob("*.job.json")]
    floor = work / "floor"
    floor.mkdir()
    payload = b"x" * int(statistics.mean(sizes))
    started, system = time.perf_counter(), os.times().system
    for n in range(len(sizes)):
        fd = os.open(floor / f"{n}.job.json", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.write(fd, payload)
        os.close(fd)
    made, made_system = time.perf_counter() - started, os.times().system - system
    print(
        f"  wall {wall:.2f} s (goal <= 5 s: {'met' if wall <= 5 else 'NOT met'}), CPU {cpu:.2f} s, "
        f"peak {peak:.1f} MiB (goal <= 80 MiB: {'met' if peak <= 80 else 'NOT met'})"
    )
    print(
        f"  the disk's floor: creating {len(sizes):,} files of {len(payload):,} bytes and "
        f"nothing else takes {made:.2f} s ({made_system:.2f} s system): hz compile is "
        f"{wall / made:.2f}x that"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--compile-count", type=int, default=10_000)
    parser.add_argument("--workers", action="store_true", help="also run benchmarks/workers.py")
    parser.add_argument(
        "--only", choices=("validate", "run", "compile"), help="one part of the figures"
    )
    args = parser.parse_args()
    print(
        f"{platform.node()}: {os.cpu_count()} CPUs, Linux {platform.release()}, "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f}\n"
    )
    with tempfile.TemporaryDirectory(prefix="hz-issue29.") as tmp:
        root = Path(tmp)
        for part, step in (("validate", validate), ("run", run)):
            if args.only not in (None, part):
                continue
            (root / part).mkdir()
            step(args.repeat, root / part)
            print(f"  (load {os.getloadavg()[0]:.2f})\n")
        if args.only in (None, "compile"):
            (root / "compile").mkdir()
            compile_(args.compile_count, root / "compile")
            print(f"  (load {os.getloadavg()[0]:.2f})\n")
    if args.workers:
        print("4. workers (benchmarks/workers.py --workers 1,4)", flush=True)
        subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "workers.py"), "--workers", "1,4"],
            check=False,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

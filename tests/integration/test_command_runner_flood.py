"""A 1 GiB flood on stdout (and more on stderr) leaves hz's memory flat.

Measured in a fresh interpreter (ru_maxrss is a high-water mark, so the test process itself
can't be used): the same run with a small flood is the baseline. The interpreter inherits the
secrets planted in the test's environment; each run is checked for leaked secrets and
surviving processes (the ``contained`` fixture) and for the time it took.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")
MIB = 1024 * 1024
#: What a 1 GiB flood may take on a loaded 2-core machine (about 2 s idle); proves it was not
#: stopped by the timeout (300 s) but ended at the agent's exit.
FLOOD_SECONDS = 30
#: The ``contained`` fixture (tests/integration/conftest.py): checks a run's records.
Contained = Callable[[Path, Path], None]

PROBE = """
import json, resource, sys
from hz.runtime.artifacts.models import Budget, ToolProfile
from hz.runtime.runners.protocol import RunRequest
from hz.runtime.runners.command.runner import CommandRunner
from hz.runtime.runners.command.settings import CommandSettings

agent, stdout_bytes, stderr_bytes, workdir, env_out, pids = sys.argv[1:]
runner = CommandRunner(CommandSettings.from_table({
    "command": [sys.executable, agent, "flood", "--stdout-bytes", stdout_bytes,
                "--stderr-bytes", stderr_bytes, "--env-out", env_out, "--pids", pids,
                "--contract-file={contract_file}"],
    "command_enforces_read_only": True,
}))
result = runner.run(RunRequest(prompt="p", contract="c", tools=ToolProfile().bind(workdir),
                               timeout=300, budget=Budget(max_usd=1)))
print(json.dumps({
    "status": result.status, "failure_kind": result.failure_kind,
    "truncated": result.output_truncated, "draft_len": len(result.draft or ""),
    "stderr_tail_len": len(result.stderr_tail), "seconds": result.duration_seconds,
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def probe(
    stdout_bytes: int, stderr_bytes: int, workdir: Path, contained: Contained
) -> dict[str, object]:
    env_out, pids = workdir / f"env-{stdout_bytes}.json", workdir / f"pids-{stdout_bytes}"
    sizes = (str(stdout_bytes), str(stderr_bytes))
    out = subprocess.run(
        [sys.executable, "-c", PROBE, AGENT, *sizes, str(workdir), str(env_out), str(pids)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    contained(env_out, pids)
    return checked_time(json.loads(out.stdout))


def checked_time(measured: dict[str, object]) -> dict[str, object]:
    """``measured`` without its duration, once that is within ``FLOOD_SECONDS``."""
    seconds = float(measured.pop("seconds"))  # type: ignore[arg-type]
    assert seconds < FLOOD_SECONDS, f"the flood took {seconds:.1f} s"
    return measured


def test_one_gib_flood_keeps_memory_flat(tmp_path: Path, contained: Contained) -> None:
    baseline = probe(16 * MIB, 16 * MIB, tmp_path, contained)
    flood = probe(1024 * MIB, 256 * MIB, tmp_path, contained)
    expected = {
        "status": "failed",
        "failure_kind": "output_limit",
        "truncated": True,
        "draft_len": 8 * MIB,
        "stderr_tail_len": 4096,
    }
    assert {k: v for k, v in flood.items() if k != "maxrss_kib"} == expected
    assert {k: v for k, v in baseline.items() if k != "maxrss_kib"} == expected
    grown_kib = int(flood["maxrss_kib"]) - int(baseline["maxrss_kib"])  # type: ignore[call-overload]
    assert grown_kib < 32 * 1024, f"memory grew by {grown_kib} KiB during a 1 GiB flood"


LINES_PROBE = """
import json, resource, sys
from hz.runtime.process.environment import child_environment
from hz.runtime.process.bounded import Limits, run_bounded

agent, stdout_bytes, env_out, pids = sys.argv[1:]
lines = []
outcome = run_bounded(
    [sys.executable, agent, "flood", "--no-newlines", "--stdout-bytes", stdout_bytes,
     "--env-out", env_out, "--pids", pids],
    stdin=None, cwd="/", env=child_environment(), limits=Limits(timeout=300),
    on_stdout_line=lambda line: lines.append(len(line)),
)
print(json.dumps({
    "exit_code": outcome.exit_code, "lines": lines, "long_lines": outcome.long_lines,
    "seconds": outcome.duration_seconds,
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def lines_probe(stdout_bytes: int, records: Path, contained: Contained) -> dict[str, object]:
    env_out, pids = records / f"env-{stdout_bytes}.json", records / f"pids-{stdout_bytes}"
    out = subprocess.run(
        [sys.executable, "-c", LINES_PROBE, AGENT, str(stdout_bytes), str(env_out), str(pids)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    contained(env_out, pids)
    return checked_time(json.loads(out.stdout))


def test_one_gib_line_is_cut_for_the_callback_not_buffered(
    tmp_path: Path, contained: Contained
) -> None:
    baseline = lines_probe(16 * MIB, tmp_path, contained)
    flood = lines_probe(1024 * MIB, tmp_path, contained)
    # One line: the flood without a newline, then "end\n"; cut at 1 MiB (Limits.max_line).
    assert {k: v for k, v in flood.items() if k != "maxrss_kib"} == {
        "exit_code": 0,
        "lines": [MIB],
        "long_lines": 1,
    }
    grown_kib = int(flood["maxrss_kib"]) - int(baseline["maxrss_kib"])  # type: ignore[call-overload]
    assert grown_kib < 32 * 1024, f"memory grew by {grown_kib} KiB for a 1 GiB line"

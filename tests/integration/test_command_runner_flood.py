"""A 1 GiB flood on stdout (and more on stderr) leaves hz's memory flat.

Measured in a fresh interpreter (ru_maxrss is a high-water mark, so the test process itself
can't be used): the same run with a small flood is the baseline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")
MIB = 1024 * 1024

PROBE = """
import json, resource, sys
from runtime.models import Budget, ToolProfile
from runtime.runners.command import CommandRunner

agent, stdout_bytes, stderr_bytes, workdir = sys.argv[1:]
runner = CommandRunner.from_settings({
    "command": [sys.executable, agent, "flood", "--stdout-bytes", stdout_bytes,
                "--stderr-bytes", stderr_bytes, "--contract-file={contract_file}"],
    "command_enforces_read_only": True,
})
result = runner.run("p", contract="c", tools=ToolProfile().bind(workdir), timeout=300,
                    budget=Budget(max_usd=1))
print(json.dumps({
    "status": result.status, "failure_kind": result.failure_kind,
    "truncated": result.output_truncated, "draft_len": len(result.draft or ""),
    "stderr_tail_len": len(result.stderr_tail),
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def probe(stdout_bytes: int, stderr_bytes: int, workdir: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, AGENT, str(stdout_bytes), str(stderr_bytes), str(workdir)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_one_gib_flood_keeps_memory_flat(tmp_path: Path) -> None:
    baseline = probe(16 * MIB, 16 * MIB, tmp_path)
    flood = probe(1024 * MIB, 256 * MIB, tmp_path)
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
from runtime.environment import child_environment
from runtime.process import Limits, run_bounded

agent, stdout_bytes = sys.argv[1:]
lines = []
outcome = run_bounded(
    [sys.executable, agent, "flood", "--no-newlines", "--stdout-bytes", stdout_bytes],
    stdin=None, cwd="/", env=child_environment(), limits=Limits(timeout=300),
    on_stdout_line=lambda line: lines.append(len(line)),
)
print(json.dumps({
    "exit_code": outcome.exit_code, "lines": lines, "long_lines": outcome.long_lines,
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def lines_probe(stdout_bytes: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", LINES_PROBE, AGENT, str(stdout_bytes)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_one_gib_line_is_cut_for_the_callback_not_buffered() -> None:
    baseline = lines_probe(16 * MIB)
    flood = lines_probe(1024 * MIB)
    # One line: the flood without a newline, then "end\n"; cut at 1 MiB (Limits.max_line).
    assert {k: v for k, v in flood.items() if k != "maxrss_kib"} == {
        "exit_code": 0,
        "lines": [MIB],
        "long_lines": 1,
    }
    grown_kib = int(flood["maxrss_kib"]) - int(baseline["maxrss_kib"])  # type: ignore[call-overload]
    assert grown_kib < 32 * 1024, f"memory grew by {grown_kib} KiB for a 1 GiB line"

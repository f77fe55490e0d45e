"""Hostile files fail at once, cleanly, with their own diagnostic: in the loader and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load.loader import load_path
from tests.conftest import Cli
from tests.helpers.in_process import leaves_nothing

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

ANCHOR_HINT = "write the value out in full; hz refuses anchors and aliases"
UTF8_HINT = "hz reads contracts as UTF-8; save the file with that encoding"
DEPTH_HINT = "a contract is a shallow document; flatten this structure"
SIZE_HINT = "keep bulk data out of the contract: declare an input and pass it at render time"

SIXTY_MB = 60 * 1024 * 1024


def billion_laughs() -> bytes:
    lines = ['lol0: &lol0 "lol"']
    for i in range(1, 10):
        prev = f"*lol{i - 1}"
        lines.append(f"lol{i}: &lol{i} [{', '.join([prev] * 10)}]")
    return ("\n".join(lines) + "\n").encode()


def sixty_megabytes(path: Path) -> None:
    # Written in chunks: the test itself must not hold 60 MB either.
    line = b"  - " + b"x" * 1019 + b"\n"
    with path.open("wb") as f:
        f.write(b"hz:\n  data:\n")
        for _ in range(SIXTY_MB // len(line)):
            f.write(line)


CASES: dict[str, tuple[Callable[[Path], None], Diagnostic]] = {
    "billion-laughs": (
        lambda p: p.write_bytes(billion_laughs()),
        Diagnostic(
            "HZ005", "anchor '&lol0' is not allowed in a contract", "", 1, 7, hint=ANCHOR_HINT
        ),
    ),
    "deep-flow": (
        lambda p: p.write_bytes(b"hz: " + b"[" * 20_000 + b"]" * 20_000 + b"\n"),
        Diagnostic("HZ012", "nesting is deeper than 32 levels", "", 1, 36, hint=DEPTH_HINT),
    ),
    "deep-flow-unclosed": (
        lambda p: p.write_bytes(b"hz: " + b"{a: " * 20_000),
        Diagnostic("HZ012", "nesting is deeper than 32 levels", "", 1, 129, hint=DEPTH_HINT),
    ),
    "deep-block": (
        lambda p: p.write_bytes(b"hz:\n  " + b"- " * 20_000 + b"x\n"),
        Diagnostic("HZ012", "nesting is deeper than 32 levels", "", 2, 65, hint=DEPTH_HINT),
    ),
    "sixty-megabytes": (
        sixty_megabytes,
        Diagnostic(
            "HZ003",
            "file is larger than 256 KiB (262,144 bytes), the limit for a contract",
            "",
            hint=SIZE_HINT,
        ),
    ),
    "invalid-utf8": (
        lambda p: p.write_bytes(b"hz:\n  title: caf\xe9 menu\n"),
        Diagnostic(
            "HZ002",
            "file is not valid UTF-8: byte 0xe9 cannot be decoded",
            "",
            2,
            13,
            hint=UTF8_HINT,
        ),
    ),
    "binary": (
        lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64),
        Diagnostic(
            "HZ002",
            "file is not valid UTF-8: byte 0x89 cannot be decoded",
            "",
            1,
            1,
            hint=UTF8_HINT,
        ),
    ),
    "nul-bytes": (
        lambda p: p.write_bytes(b"hz:\n  name: a\x00b\n"),
        Diagnostic(
            "HZ002",
            "file is binary, not UTF-8 text: it contains a NUL byte",
            "",
            2,
            10,
            hint=UTF8_HINT,
        ),
    ),
    "all-nul": (
        lambda p: p.write_bytes(b"\x00" * 4096),
        Diagnostic(
            "HZ002",
            "file is binary, not UTF-8 text: it contains a NUL byte",
            "",
            1,
            1,
            hint=UTF8_HINT,
        ),
    ),
}


@pytest.fixture(params=sorted(CASES))
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Diagnostic]:
    write, expected = CASES[request.param]
    path = tmp_path / f"{request.param}.yaml"
    write(path)
    return path, Diagnostic(**{**_fields(expected), "file": str(path)})


def _fields(d: Diagnostic) -> dict[str, object]:
    return {name: getattr(d, name) for name in Diagnostic.__slots__}


def test_loader_refuses_at_once(hostile: tuple[Path, Diagnostic]) -> None:
    path, expected = hostile
    started = time.monotonic()
    assert load_path(path) == (None, [expected])
    # A bound, not a benchmark: the machine is shared (benchmarks/ has the real figures).
    assert time.monotonic() - started < 5


MEASURE = """
import resource, sys
from pathlib import Path
from hz.compiler.load.loader import load_path
from tests.conftest import Cli
from tests.helpers.in_process import leaves_nothing
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
doc, diagnostics = load_path(Path(sys.argv[1]))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(after - before, [d.code for d in diagnostics])
"""


def test_sixty_megabytes_keep_memory_flat(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    sixty_megabytes(path)
    assert path.stat().st_size > 59 * 1024 * 1024
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    grown_kib, codes = proc.stdout.split(" ", 1)
    assert codes.strip() == "['HZ003']"
    # ru_maxrss is in KiB on Linux; reading the whole file would add 60,000 KiB or more.
    assert int(grown_kib) < 4 * 1024


def test_cli_fails_cleanly(hostile: tuple[Path, Diagnostic], cli: Cli, tmp_path: Path) -> None:
    path, expected = hostile
    started = time.monotonic()
    with leaves_nothing("hz validate"):
        proc = cli("validate", path.name, cwd=tmp_path)
    assert time.monotonic() - started < 5
    where = f"{path.name}:{expected.line}:{expected.column}"
    assert proc.stdout == (
        f"{where}: error: {expected.message} [{expected.code}]\n  hint: {expected.hint}\n"
    )
    assert proc.stderr == "Found 1 error in 1 file (checked 1 file)\n"
    assert proc.returncode == 1


# A fresh parent whose only child is the hz process: RUSAGE_CHILDREN is then that child's peak.
PEAK_OF_CHILD = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], capture_output=True, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_kib(argv: list[str], cwd: Path) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_OF_CHILD, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(proc.stdout)


def test_cli_memory_stays_flat_on_sixty_megabytes(hz_argv: list[str], tmp_path: Path) -> None:
    sixty_megabytes(tmp_path / "big.yaml")
    (tmp_path / "small.yaml").write_bytes(b"hz:\n  data: [x]\n")
    small = _peak_kib([*hz_argv, "validate", "small.yaml"], tmp_path)
    big = _peak_kib([*hz_argv, "validate", "big.yaml"], tmp_path)
    # Reading the whole file would add at least 60,000 KiB to the peak.
    assert big - small < 8 * 1024


def test_cli_stdin_sixty_megabytes(hz_argv: list[str], tmp_path: Path) -> None:
    sixty_megabytes(tmp_path / "big.yaml")
    with (tmp_path / "big.yaml").open("rb") as stdin:
        proc = subprocess.run(
            [*hz_argv, "validate", "-"],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.stdout == (
        "<stdin>:0:0: error: file is larger than 256 KiB (262,144 bytes), the limit for a "
        f"contract [HZ003]\n  hint: {SIZE_HINT}\n"
    )
    assert proc.stderr == "Found 1 error in 1 file (checked 1 file)\n"
    assert proc.returncode == 1


def test_cli_machine_formats(hz_argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "laughs.yaml").write_bytes(billion_laughs())

    def run(fmt: str) -> str:
        proc = subprocess.run(
            [*hz_argv, "validate", "--format", fmt, "laughs.yaml"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 1
        assert proc.stderr == "Found 1 error in 1 file (checked 1 file)\n"
        return proc.stdout

    assert run("github") == (
        "::error file=laughs.yaml,line=1,col=7,title=HZ005::anchor '&lol0' is not allowed "
        f"in a contract%0Ahint: {ANCHOR_HINT}\n"
    )
    sarif = json.loads(run("sarif"))
    (only,) = sarif["runs"][0]["results"]
    assert only["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "laughs.yaml"},
        "region": {"startLine": 1, "startColumn": 7},
    }
    assert sarif["runs"][0]["tool"]["driver"]["rules"] == [
        {"id": "HZ005", "shortDescription": {"text": "Anchors and aliases are not allowed"}}
    ]
    assert json.loads(run("json"))["diagnostics"] == [
        {
            "file": "laughs.yaml",
            "line": 1,
            "column": 7,
            "severity": "error",
            "code": "HZ005",
            "message": "anchor '&lol0' is not allowed in a contract",
            "hint": ANCHOR_HINT,
        }
    ]

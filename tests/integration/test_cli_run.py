"""``hz run``: the exit code of every status (in process, and one as a real process's exit
status), progress on a terminal, a reader that went away (real processes)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from hz.cli.run import EXIT_CODES
from tests.conftest import Cli, default_receipt_dir
from tests.helpers.contracts import GREET as CONTRACT
from tests.helpers.in_process import ECHO, leaves_nothing

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

REPO = Path(__file__).resolve().parents[2]


def hz(
    hz_argv: list[str], cwd: Path, *args: str, config: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), **env}
    if config:
        (cwd / "operator.toml").write_text(config)
        environ["HZ_CONFIG"] = str(cwd / "operator.toml")
    return subprocess.run(
        [*hz_argv, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    return tmp_path


@pytest.mark.parametrize("status", sorted(EXIT_CODES))
def test_exit_code_per_status(cli: Cli, work: Path, status: str) -> None:
    """In process: the code ``hz.cli.main`` exits with for each status."""
    config = ECHO + f'[system.runner]\necho_status = "{status}"\n'
    (work / "operator.toml").write_text(config)
    with leaves_nothing("hz run"):
        done = cli(
            "run", "greet.yaml", "--input", "who=A", "--format", "json", "-q",
            cwd=work, env={"HZ_CONFIG": str(work / "operator.toml")},
        )  # fmt: skip
    assert (done.returncode, json.loads(done.stdout)["status"]) == (EXIT_CODES[status], status)


def test_a_real_process_exits_with_the_code_of_its_status(hz_argv: list[str], work: Path) -> None:
    """The same code as the process's exit status (one status; the others above)."""
    config = ECHO + '[system.runner]\necho_status = "budget"\n'
    done = hz(
        hz_argv, work, "run", "greet.yaml", "--input", "who=A", "--format", "json", "-q",
        config=config,
    )  # fmt: skip
    assert (done.returncode, json.loads(done.stdout)["status"]) == (EXIT_CODES["budget"], "budget")


def _stderr_on_a_terminal(hz_argv: list[str], work: Path, *args: str) -> str:
    import pty

    main, child = pty.openpty()
    (work / "operator.toml").write_text(ECHO)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HZ_CONFIG": str(work / "operator.toml")}
    with subprocess.Popen(
        [*hz_argv, "run", "greet.yaml", "--input", "who=A", "--no-receipt", *args],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=child,
    ) as process:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the terminal's other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    os.close(main)
    return b"".join(chunks).decode()


def test_progress_is_drawn_only_on_a_terminal(hz_argv: list[str], work: Path) -> None:
    shown = _stderr_on_a_terminal(hz_argv, work)
    # The ticker may redraw while the run starts on a busy machine; the runner's event and the
    # final clear are always there.
    assert re.search(r"\r\x1b\[Khz: running \d+s · 1 turn · 0 tool calls\r\x1b\[K", shown)
    assert shown.endswith(
        "\r\x1b[Khz: completed · runner echo · model echo · 1 turn · 0 tool calls · $0.0000 · "
        "0.0s\r\n"
    )
    assert _stderr_on_a_terminal(hz_argv, work, "--quiet") == ""


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_reader_that_went_away_does_not_turn_a_run_into_nothing_ran(
    hz_argv: list[str], work: Path, fmt: str
) -> None:
    (work / "operator.toml").write_text(ECHO)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HZ_CONFIG": str(work / "operator.toml")}
    read_end, write_end = os.pipe()
    os.close(read_end)  # `hz run ... | head -0`: nobody reads stdout
    try:
        done = subprocess.run(
            [*hz_argv, "run", "greet.yaml", "--input", "who=A", "--format", fmt],
            cwd=work,
            env=env,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0
    assert done.stderr.startswith("hz: completed · runner echo")
    assert json.loads((default_receipt_dir() / "000001-greet.json").read_text())["status"] == (
        "completed"
    )

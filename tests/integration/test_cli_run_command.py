"""``hz run`` end to end: the command runner driving the fake agent CLI (a real process), hz as a
real process where signals, the end to end path and the agent's environment are the point, in
this process where only what it decides is (a dry run, a refusal, an exit code, receipts)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli, default_receipt_dir
from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.contracts import contract
from tests.helpers.operator import AGENT, REPO, hz, operator, run_greet

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

# The tests that signal hz or time it out (timeouts, interrupts, kill grace) are marked
# `serial`: `make test` runs them alone, on an otherwise quiet machine.


def test_echo_through_the_command_runner(hz_argv: list[str], tmp_path: Path) -> None:
    config = operator(tmp_path, "echo", "--prompt-file={prompt_file}")
    done = hz(hz_argv, tmp_path, config, "--format", "json")
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"], result["draft"], result["runner"]) == (
        0,
        "completed",
        "Say hi to Ann.\n",
        "command",
    )
    assert result["limits_unenforced"] == ["budget", "tools", "turns"]
    receipt = json.loads((default_receipt_dir() / "000001-greet.json").read_text())
    assert (receipt["runner"], receipt["status"], receipt["limits_unenforced"]) == (
        "command",
        "completed",
        ["budget", "tools", "turns"],
    )


def test_dry_run_shows_the_argv_and_starts_nothing(cli: Cli, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    config = operator(tmp_path, "echo", f"--pids={pids}", "--prompt-file={prompt_file}")
    done = run_greet(cli, tmp_path, config, "--dry-run")
    argv = (
        f"{sys.executable} {AGENT} echo --pids={pids} '--prompt-file=<private>/prompt.md' "
        "'--contract-file=<private>/contract.md'"
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[:7] == [
        "hz run --dry-run: nothing was started",
        "  runner:       command",
        f"  argv:         {argv}",
        f"  cwd:          {tmp_path.resolve()}",
        "  stdin:        /dev/null",
        "  environment:  HOME LANG PATH",
        "  file:         prompt: <private>/prompt.md",
    ]
    assert not pids.exists()


def test_required_budget_refuses_before_any_process(cli: Cli, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    config = operator(tmp_path, "echo", f"--pids={pids}", extra="require_enforced_budget = true\n")
    done = run_greet(cli, tmp_path, config)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == (
        "hz: error: runner 'command' cannot enforce a budget (advisory) and [system.runner] "
        "require_enforced_budget is true; nothing was started"
    )
    assert not pids.exists()
    assert not default_receipt_dir().exists()


@pytest.mark.serial
def test_timeout_exits_5_and_leaves_no_process(hz_argv: list[str], tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    config = operator(tmp_path, "ignore-term", f"--pids={pids}")
    started = time.monotonic()
    done = hz(hz_argv, tmp_path, config, "--format", "json", timeout="1s")
    elapsed = time.monotonic() - started
    assert (done.returncode, json.loads(done.stdout)["status"]) == (5, "timeout")
    assert elapsed < 60
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))


def test_failing_agent_exits_4(cli: Cli, tmp_path: Path) -> None:
    config = operator(tmp_path, "fail", "--stderr=boom", "--code=7")
    done = run_greet(cli, tmp_path, config, "--format", "json")
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"], result["exit_code"]) == (4, "failed", 7)
    assert "boom" in result["stderr_tail"]


def test_no_secret_reaches_the_agent(hz_argv: list[str], tmp_path: Path) -> None:
    config = operator(tmp_path, "env")
    secrets = {
        "HZ_CREDENTIAL_TOKEN": "s1",
        "ANTHROPIC_API_KEY": "s2",
        "AWS_SECRET_ACCESS_KEY": "s3",
    }
    done = hz(hz_argv, tmp_path, config, "--format", "json", **secrets)
    child_env = json.loads(json.loads(done.stdout)["draft"])
    assert done.returncode == 0
    assert not set(secrets) & set(child_env)
    assert not {"s1", "s2", "s3"} & set(child_env.values())


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_receipt_chain_over_several_runs(cli: Cli, tmp_path: Path, fmt: str) -> None:
    config = operator(tmp_path, "echo", "--prompt-file={prompt_file}")
    for _ in range(3):
        assert run_greet(cli, tmp_path, config, "--format", fmt, "-q").returncode == 0
    verify = cli("receipts", "verify", str(default_receipt_dir()))
    assert (verify.returncode, verify.stdout) == (
        0,
        f"ok: 3 receipts in {default_receipt_dir()}, the chain is intact\n",
    )


def _default_sigint() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and Python
    # then installs no KeyboardInterrupt handler; give hz the default a terminal would.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def running_hz(
    hz_argv: list[str], tmp_path: Path, mode: str, pids: Path, **env: str
) -> Iterator[subprocess.Popen[str]]:
    """hz running greet.yaml with the fake agent in ``mode``, once the agent has started; on the
    way out nothing of it is left running, whatever the test did."""
    config = operator(tmp_path, mode, f"--pids={pids}")
    (tmp_path / "greet.yaml").write_text(contract(timeout="10m"))
    hz_process = subprocess.Popen(
        [*hz_argv, "run", "greet.yaml", "--input", "who=A", "--format", "json", "-q"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "HZ_CONFIG": config, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        yield hz_process
    finally:
        if hz_process.poll() is None:  # a failed test: never leave hz or the agent behind
            hz_process.kill()
            hz_process.communicate()
        for process in recorded_pids(pids) if pids.exists() else []:
            if not is_gone(int(process["pid"])):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(int(process["pgid"]), signal.SIGKILL)


@pytest.mark.serial
@pytest.mark.parametrize(
    ("signum", "name"),
    [
        (signal.SIGINT, "SIGINT"),
        (signal.SIGTERM, "SIGTERM"),
        (signal.SIGHUP, "SIGHUP"),
        (signal.SIGQUIT, "SIGQUIT"),
    ],
)
def test_interrupted_run_is_cancelled_with_a_receipt_and_nothing_left(
    hz_argv: list[str], tmp_path: Path, signum: int, name: str
) -> None:
    pids = tmp_path / "pids"
    with running_hz(hz_argv, tmp_path, "sleep", pids) as hz_process:
        hz_process.send_signal(signum)
        out, err = hz_process.communicate(timeout=60)
    result = json.loads(out)
    assert (hz_process.returncode, err) == (7, "")
    assert (result["status"], result["failure_kind"], result["reason"]) == (
        "cancelled",
        "aborted",
        f"hz was interrupted ({name}); the run's processes were killed",
    )
    assert all(is_gone(int(p["pid"])) for p in recorded_pids(pids))
    receipt = json.loads((default_receipt_dir() / "000001-greet.json").read_text())
    assert receipt["status"] == "cancelled"


def test_a_hostile_project_file_cannot_choose_what_runs(cli: Cli, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    operator(tmp_path, "echo", "--prompt-file={prompt_file}")
    hostile = [sys.executable, AGENT, "echo", f"--pids={pids}", "--contract-file={contract_file}"]
    (tmp_path / "hz.toml").write_text(
        f"[system.runner]\ncommand = {json.dumps(hostile)}\ncommand_enforces_read_only = true\n"
    )
    done = run_greet(cli, tmp_path, str(tmp_path / "operator.toml"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == (
        f"hz: error: {tmp_path / 'hz.toml'}:2:1: HZ801 'system.runner.command' configures "
        "execution and is not allowed in a project hz.toml (and 1 more)"
    )
    assert not pids.exists()


@pytest.mark.serial
@pytest.mark.parametrize(
    ("first", "second"),
    [
        (signal.SIGINT, signal.SIGTERM),
        (signal.SIGHUP, signal.SIGQUIT),
        (signal.SIGHUP, signal.SIGINT),
    ],
    ids=["SIGINT-SIGTERM", "SIGHUP-SIGQUIT", "SIGHUP-SIGINT"],
)
def test_a_second_signal_does_not_stop_the_cleanup(
    hz_argv: list[str], tmp_path: Path, first: signal.Signals, second: signal.Signals
) -> None:
    pids = tmp_path / "pids"
    private_parent = tmp_path / "tmp"
    private_parent.mkdir()
    with running_hz(
        hz_argv, tmp_path, "ignore-term", pids, TMPDIR=str(private_parent)
    ) as hz_process:
        # Both at once, then more while hz is cancelling. Which of the first two hz names is
        # not defined: Python runs the handler of a signal that arrives as the handler of
        # another starts inside it, before the outer one's first statement.
        hz_process.send_signal(first)
        hz_process.send_signal(second)
        for _ in range(5):
            time.sleep(0.01)
            hz_process.send_signal(second)
        out, err = hz_process.communicate(timeout=60)
    assert (hz_process.returncode, err) == (7, "")
    result = json.loads(out)
    assert result["reason"] in {
        f"hz was interrupted ({s.name}); the run's processes were killed" for s in (first, second)
    }
    assert [p for p in recorded_pids(pids) if not is_gone(int(p["pid"]))] == []
    assert list(private_parent.iterdir()) == []
    receipt = json.loads((default_receipt_dir() / "000001-greet.json").read_text())
    assert receipt["status"] == "cancelled"


@pytest.mark.serial
def test_the_agent_dies_with_hz(hz_argv: list[str], tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    private_parent = tmp_path / "tmp"
    private_parent.mkdir()
    with running_hz(
        hz_argv, tmp_path, "ignore-term", pids, TMPDIR=str(private_parent)
    ) as hz_process:
        assert len(list(private_parent.iterdir())) == 1  # the run's private directory
        hz_process.kill()  # no handler, no cleanup: only the watchdog can act
        hz_process.communicate()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and (
            any(private_parent.iterdir())
            or not all(is_gone(int(p["pid"])) for p in recorded_pids(pids))
        ):
            time.sleep(0.05)
        assert [p for p in recorded_pids(pids) if not is_gone(int(p["pid"]))] == []
        assert list(private_parent.iterdir()) == []

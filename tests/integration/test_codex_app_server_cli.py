"""The codex-app-server runner against the real, pinned ``codex`` and a scripted fake model.

As in test_codex_cli.py, ``codex_config`` points the CLI at ``FakeResponses`` and
``codex_env = ["FAKE_KEY"]`` passes its key, unique per test so every process of the run can be
found afterwards. Cancellations are a ``KeyboardInterrupt`` raised in the main thread (what
SIGINT does) once the run is in the phase under test; ``tests/fakes/appserver_proxy.py`` holds
the server's answer to one request (and can wedge), so hz can be caught in that phase.
"""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.result import AgentResult, Usage
from hz.runtime.process.interactive import CEILINGS, Ceilings
from hz.runtime.runners.codex_app_server.protocol import BUNDLE, MANIFEST, manifest_of, pinned_text
from hz.runtime.runners.codex_app_server.runner import CodexAppServerRunner
from hz.runtime.runners.codex_app_server.settings import CodexAppServerSettings
from tests.fakes.claude_cli import processes_with_env
from tests.fakes.responses_server import (
    MODEL,
    FakeResponses,
    api_error,
    function_outputs,
    hang,
    message,
    shell,
)
from tests.helpers.run_request import run_request

pytestmark = pytest.mark.real_cli

PROXY = Path(__file__).resolve().parent.parent / "fakes" / "appserver_proxy.py"
#: The fixed ceilings: 5 s interrupt, 2 s reap, 2 s collect, 1 s drain; a loaded machine's slack.
SETTLED = 10 + 3
#: Shorter ceilings for the tests that wait all of them out against a wedged server.
SHORT = Ceilings(write=1.0, reap=0.5, collect=1.0, drain=0.5)
SHORT_SETTLED = SHORT.write + 2 * SHORT.reap + SHORT.collect + SHORT.drain + 3


def make_runner(table: dict[str, Any], ceilings: Ceilings = CEILINGS) -> CodexAppServerRunner:
    return CodexAppServerRunner(CodexAppServerSettings.from_table(table), ceilings=ceilings)


def run(
    api: FakeResponses,
    codex: Path | str,
    work: Path,
    *,
    timeout: float = 60,
    progress: Callable[..., None] | None = None,
    ceilings: Ceilings = CEILINGS,
    **extra: Any,
) -> AgentResult:
    runner = make_runner(api.codex_settings(codex, **extra), ceilings)
    try:
        return runner.run(
            run_request(
                work,
                prompt="What is the secret word?",
                contract="Answer briefly. Never write files.",
                timeout=timeout,
                progress=progress,
            )
        )
    except KeyboardInterrupt:  # the cancellation escaped the runner: a bug, not an abort
        pytest.fail("the cancellation escaped CodexAppServerRunner.run")


def proxy(tmp_path: Path, codex: Path, hold: str, mode: str = "hold") -> tuple[Path, Path]:
    """An executable that runs the real codex behind appserver_proxy.py, and its pid file."""
    pidfile = tmp_path / "helper.pid"
    wrapper = tmp_path / f"codex-{mode}"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{PROXY}" {hold} {mode} "{pidfile}" "{codex}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, pidfile


def cancel_when(condition: Callable[[], bool], *, settle: float = 0.5) -> list[float]:
    """Raise KeyboardInterrupt in the main thread once ``condition`` holds (then ``settle`` s
    later); returns a list that receives the moment it was raised."""
    raised: list[float] = []

    def watch() -> None:
        deadline = time.monotonic() + 60
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle)
        raised.append(time.monotonic())
        _thread.interrupt_main()

    threading.Thread(target=watch, daemon=True).start()
    return raised


def end_helper(pidfile: Path) -> None:
    """End the wedged proxy's detached helper (hz cannot: it left the group)."""
    if pidfile.exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_an_answer_with_usage(codex: Path, work: Path, key: str) -> None:
    with FakeResponses([message("marmalade")]) as api:
        result = run(api, codex, work)
        (body,) = api.requests
    assert (result.status, result.failure_kind, result.reason) == ("completed", None, None)
    assert (result.runner, result.model, result.draft) == ("codex-app-server", MODEL, "marmalade")
    assert (result.turns, result.exit_code) == (1, 0)
    assert result.usage == Usage(input_tokens=32, output_tokens=9, cache_read_input_tokens=8)
    assert result.limits_unenforced == ("budget",)
    assert result.protocol_notes == {}
    assert "\x1b" not in result.stderr_tail  # NO_COLOR: the server's log lines are plain
    # The contract is the thread's base instructions; the prompt the last user message.
    first = body["input"][0]
    assert (first["role"], first["content"][0]["text"]) == (
        "developer",
        "Answer briefly. Never write files.",
    )
    users = [
        part["text"]
        for item in body["input"]
        if item.get("role") == "user"
        for part in item["content"]
    ]
    assert users[-1] == "What is the secret word?"
    # The closed tool surface shared with the codex runner.
    assert [t.get("name", t.get("type")) for t in body["tools"]] == [
        "exec_command",
        "write_stdin",
        "request_user_input",
    ]


def test_a_shell_command_runs_in_the_sandbox(codex: Path, work: Path, key: str) -> None:
    with FakeResponses([shell("cat notes.txt"), message("marmalade")]) as api:
        result = run(api, codex, work)
        (output,) = function_outputs(api.requests)
    assert (result.status, result.draft) == ("completed", "marmalade")
    (call,) = result.tool_calls
    assert call.model_dump() == {
        "name": "command_execution",
        "input": {"command": "/bin/bash -lc 'cat notes.txt'"},
        "is_error": False,
    }
    assert "the secret word is marmalade" in output["output"]
    events = [(e.type, e.name) for e in result.transcript_events]
    assert events == [
        ("tool_call", "command_execution"),
        ("tool_result", "command_execution"),
        ("message", None),
        ("usage", None),
    ]
    assert "the secret word is marmalade" in (result.transcript_events[1].text or "")


def test_a_write_is_refused_by_the_sandbox(codex: Path, work: Path, key: str) -> None:
    # What the pinned CLI produces (0.171.0): no typed refusal. The model gets the refusal
    # and the turn completes (turn.status is not "failed" with codexErrorInfo
    # "sandboxError"). The command is a commandExecution item with status "failed" — or, in
    # some runs, as with `codex exec`, no item at all: both are seen here.
    with FakeResponses([shell("touch made.txt"), message("refused")]) as api:
        result = run(api, codex, work)
        (output,) = function_outputs(api.requests)
    assert (result.status, result.failure_kind, result.draft) == ("completed", None, "refused")
    for call in result.tool_calls:
        assert call.model_dump() == {
            "name": "command_execution",
            "input": {"command": "/bin/bash -lc 'touch made.txt'"},
            "is_error": True,
        }
    assert len(result.tool_calls) <= 1
    assert "touch: cannot touch 'made.txt': Read-only file system" in output["output"]
    assert not (work / "made.txt").exists()


def test_the_models_commands_see_no_variable_passed_for_the_cli(
    codex: Path, work: Path, key: str
) -> None:
    with FakeResponses([shell("env"), message("done")]) as api:
        result = run(api, codex, work)
        (output,) = function_outputs(api.requests)
    assert result.status == "completed"
    env = output["output"].partition("\nOutput:\n")[2]
    assert "PATH=" in env
    names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
    assert sorted(names & {"FAKE_KEY", "CODEX_HOME"}) == []
    assert key not in env


def test_cancel_before_thread_start_returns_is_cancelled(
    codex: Path, work: Path, key: str, tmp_path: Path
) -> None:
    wrapper, _ = proxy(tmp_path, codex, "thread/start")
    with FakeResponses([message("never asked")]) as api:
        raised = cancel_when(lambda: bool(processes_with_env("FAKE_KEY", key)), settle=2)
        result = run(api, wrapper, work)
        returned = time.monotonic()
        assert api.requests == []  # the turn never started
    assert (result.status, result.failure_kind, result.reason) == (
        "cancelled",
        "aborted",
        "cancelled (SIGINT) before the turn started",
    )
    assert result.turns == 0
    assert returned - raised[0] < SETTLED


def test_cancel_while_turn_start_is_outstanding_is_uncertain(
    codex: Path, work: Path, key: str, tmp_path: Path
) -> None:
    wrapper, _ = proxy(tmp_path, codex, "turn/start")
    with FakeResponses([hang()]) as api:
        raised = cancel_when(lambda: len(api.requests) == 1)
        result = run(api, wrapper, work)
        returned = time.monotonic()
    assert (result.status, result.failure_kind, result.reason) == (
        "uncertain",
        "aborted",
        "cancelled (SIGINT) while turn/start was outstanding: the turn may have started, and "
        "there was no turn id to interrupt",
    )
    assert returned - raised[0] < SETTLED


def test_cancel_mid_turn_interrupts_it_and_keeps_the_usage(
    codex: Path, work: Path, key: str
) -> None:
    with FakeResponses([shell("cat notes.txt"), hang()]) as api:
        raised = cancel_when(lambda: len(api.requests) == 2)
        result = run(api, codex, work)
        returned = time.monotonic()
    assert (result.status, result.failure_kind, result.reason) == (
        "cancelled",
        "aborted",
        "cancelled (SIGINT) during the turn (interrupted)",
    )
    assert result.turns == 1
    assert [c.name for c in result.tool_calls] == ["command_execution"]
    # The first model response's usage, reported before the cancel.
    assert result.usage == Usage(input_tokens=32, output_tokens=9, cache_read_input_tokens=8)
    assert returned - raised[0] < SETTLED


def test_cancel_against_a_wedged_server_settles_within_the_ceilings(
    codex: Path, work: Path, key: str, tmp_path: Path
) -> None:
    # The server answered turn/start, then says nothing, reads nothing, ignores SIGTERM and
    # left a detached helper holding hz's stderr.
    wrapper, pidfile = proxy(tmp_path, codex, "answered:turn/start", "wedge")
    try:
        with FakeResponses([hang()]) as api:
            raised = cancel_when(lambda: pidfile.exists())
            result = run(api, wrapper, work, ceilings=SHORT)
            returned = time.monotonic()
    finally:
        end_helper(pidfile)
    assert (result.status, result.failure_kind, result.reason) == (
        "cancelled",
        "aborted",
        "cancelled (SIGINT) during the turn (interrupt not confirmed, killed)",
    )
    assert returned - raised[0] < SHORT_SETTLED


def test_a_timeout_while_the_server_waits_out_a_429_keeps_its_notice(
    codex: Path, work: Path, key: str
) -> None:
    """As the exec runner: the server waits the 30 s the API asked for; hz's timeout strikes
    first, and the run says what the server was waiting for, from its typed notice."""
    reply = api_error(429, "rate_limit_exceeded", "Rate limit reached", [("retry-after", "30")])
    with FakeResponses([reply]) as api:
        retrying = api.provider_config("FAKE_KEY", retries=3)
        result = run(api, codex, work, timeout=4, codex_config=retrying)
        left = processes_with_env("FAKE_KEY", key)
        asked = len(api.requests)
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "rate_limited",
        "timed out after 4 s during the turn (interrupted) while the CLI waited to retry after "
        "HTTP 429; its last notice: Reconnecting... 1/3 (exceeded retry limit, last status: 429 "
        "Too Many Requests)",
    )
    assert (asked, left) == (1, {})


def test_the_timeout_interrupts_the_turn_then_stops_the_server(
    codex: Path, work: Path, key: str
) -> None:
    with FakeResponses([hang()]) as api:
        result = run(api, codex, work, timeout=3)
        left = processes_with_env("FAKE_KEY", key)  # while the model still holds the line
    assert (result.status, result.failure_kind, result.reason) == (
        "timeout",
        None,
        "timed out after 3 s during the turn (interrupted)",
    )
    assert result.exit_code == 0  # interrupted, then it ended when its stdin closed
    assert 3 <= result.duration_seconds < 3 + SETTLED
    assert left == {}


def test_the_timeout_against_a_wedged_server_kills_it(
    codex: Path, work: Path, key: str, tmp_path: Path
) -> None:
    wrapper, pidfile = proxy(tmp_path, codex, "answered:turn/start", "wedge")
    try:
        with FakeResponses([hang()]) as api:
            # The wedge comes after the turn starts; a loaded host can take seconds to start
            # the CLI and its thread, so the limit leaves that room.
            result = run(api, wrapper, work, timeout=8, ceilings=SHORT)
            left = processes_with_env("FAKE_KEY", key)
    finally:
        end_helper(pidfile)
    assert (result.status, result.reason) == (
        "timeout",
        "timed out after 8 s during the turn (interrupt not confirmed, killed)",
    )
    assert result.exit_code is None  # killed
    assert 8 <= result.duration_seconds < 8 + SHORT_SETTLED
    assert left == {}


def test_the_pinned_protocol_matches_the_installed_cli(codex: Path, tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "schema"
    home.mkdir()
    subprocess.run(
        [str(codex), "app-server", "generate-json-schema", "--out", str(out)],
        env={"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home)},
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert (out / BUNDLE).read_text() == pinned_text(BUNDLE)
    assert manifest_of(out) == pinned_text(MANIFEST)


def test_doctor_with_the_pinned_binary(codex: Path) -> None:
    checks = CodexAppServerRunner.doctor(
        CodexAppServerSettings.from_table({"codex_executable": str(codex)})
    )
    assert [(c.name, c.status, c.detail) for c in checks] == [
        ("codex executable", "ok", str(codex)),
        ("codex version", "ok", "0.171.0 (minimum 0.171.0)"),
        ("codex app-server protocol", "ok", "as pinned (0.171.0)"),
    ]


CONTRACT = """\
hz:
  contract: 1
  name: notes-reader
  timeout: 60
  agent:
    max_usd: 0.5
contract: |
  Never write files.
prompt: |
  What is in notes.txt?
"""


def hz_run(
    hz_argv: list[str], api: FakeResponses, codex: Path, work: Path, tmp_path: Path, key: str
) -> subprocess.Popen[str]:
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT)
    config = tmp_path / "operator.toml"
    config.write_text(api.codex_operator_file("codex-app-server", codex))
    env = {**os.environ, "HZ_CONFIG": str(config), "FAKE_KEY": key}
    argv = [*hz_argv, "run", str(contract), "--workdir", str(work), "--format", "json"]
    argv += ["--receipt-dir", str(tmp_path / "receipts")]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the run never reached the phase under test"
        time.sleep(0.05)


@pytest.mark.child_coverage
def test_hz_run_sigterm_mid_turn_interrupts_and_exits_cancelled(
    hz_argv: list[str], codex: Path, work: Path, key: str, tmp_path: Path
) -> None:
    with FakeResponses([hang()]) as api:
        proc = hz_run(hz_argv, api, codex, work, tmp_path, key)
        wait_for(lambda: len(api.requests) == 1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=SETTLED + 10)
    assert proc.returncode == 7, err
    result = json.loads(out)
    assert (result["status"], result["failure_kind"], result["reason"]) == (
        "cancelled",
        "aborted",
        "cancelled (SIGTERM) during the turn (interrupted)",
    )
    [receipt] = (tmp_path / "receipts").glob("*.json")
    assert json.loads(receipt.read_text())["status"] == "cancelled"


def test_hz_run_sigint_while_turn_start_is_unanswered_exits_uncertain(
    hz_argv: list[str], codex: Path, work: Path, key: str, tmp_path: Path
) -> None:
    wrapper, _ = proxy(tmp_path, codex, "turn/start")
    with FakeResponses([hang()]) as api:
        proc = hz_run(hz_argv, api, wrapper, work, tmp_path, key)
        wait_for(lambda: len(api.requests) == 1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=SETTLED + 10)
    assert proc.returncode == 9, err
    assert json.loads(out)["status"] == "uncertain"

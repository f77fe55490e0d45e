"""The draft ``hz run`` prints is the agent's text: byte for byte into a file or a pipe, but
neither a terminal nor a GitHub Actions log acts on it. Real hz processes; the fake agent
answers with the prompt, which this contract makes hostile."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")

#: ESC sequences (OSC 0: the title, OSC 52: write the clipboard, CSI: a colour), a tab,
#: workflow commands of both forms.
DRAFT = "\x1b]0;t\x07red\x1b]52;c;aGk=\x07\t\x1b[31mok\n::warning::x\n  see ##[add-mask]s\n"

CONTRACT = f"""\
hz:
  contract: 1
  name: greet
  timeout: 60s
  agent:
    max_usd: 0.5
contract: Be brief.
prompt: {json.dumps(DRAFT.removesuffix(chr(10)))}
"""


def _setup(tmp_path: Path) -> dict[str, str]:
    command = [sys.executable, AGENT, "echo", "--contract-file={contract_file}"]
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\ncommand_enforces_read_only = true\n"
    )
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    return {**os.environ, "PYTHONPATH": str(REPO), "HZ_CONFIG": str(tmp_path / "operator.toml")}


def _hz(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hz", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _run(tmp_path: Path, env: dict[str, str], stdout: int) -> int:
    return subprocess.run(
        [sys.executable, "-m", "hz", "run", "greet.yaml", "--no-receipt", "-q"],
        cwd=tmp_path,
        env=env,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
        timeout=120,
        check=False,
    ).returncode


def test_into_a_pipe_or_a_file_the_draft_is_as_the_agent_wrote_it(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    done = _hz(tmp_path, env, "run", "greet.yaml", "--no-receipt", "-q")
    assert (done.returncode, done.stdout) == (0, DRAFT)
    with open(tmp_path / "draft.md", "wb") as f:
        assert _run(tmp_path, {**env, "GITHUB_ACTIONS": "true"}, f.fileno()) == 0
    assert (tmp_path / "draft.md").read_text() == DRAFT


def test_in_a_github_actions_log_the_draft_is_framed_by_stop_commands(tmp_path: Path) -> None:
    env = {**_setup(tmp_path), "GITHUB_ACTIONS": "true"}
    done = _hz(tmp_path, env, "run", "greet.yaml", "--no-receipt", "-q")
    assert done.returncode == 0
    match = re.fullmatch(r"::stop-commands::([0-9a-f]{32})\n(.*)::\1::\n", done.stdout, re.S)
    assert match is not None, done.stdout
    assert match[2] == DRAFT


def _on_a_terminal(tmp_path: Path, env: dict[str, str], *args: str) -> str:
    """What ``hz ARGS`` writes to stdout when it is a terminal, read as it writes (a terminal
    holds a few KiB): it must exit 0."""
    main, secondary = pty.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "hz", *args],
            cwd=tmp_path,
            env=env,
            stdout=secondary,
            stderr=subprocess.DEVNULL,
        )
        os.close(secondary)
        secondary = -1
        shown = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            shown += chunk
        assert child.wait(timeout=120) == 0
    finally:
        os.close(main)
        if secondary != -1:
            os.close(secondary)
    return shown.replace(b"\r\n", b"\n").decode()


#: ``DRAFT`` as a terminal is shown it.
ESCAPED = (
    "\\x1b]0;t\\x07red\\x1b]52;c;aGk=\\x07\t\\x1b[31mok\n"
    "\\x3a:warning::x\n  see ##\\x5badd-mask]s\n"
)


def test_on_a_terminal_control_sequences_are_escaped(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    shown = _on_a_terminal(tmp_path, env, "run", "greet.yaml", "--no-receipt", "-q")
    assert shown == ESCAPED


def test_hz_runs_show_prints_the_draft_as_hz_run_does(tmp_path: Path) -> None:
    """The run's draft, long and hostile, from the ledger: escaped on a terminal, byte for
    byte into a pipe, framed in a GitHub Actions log."""
    env = _setup(tmp_path)
    long_draft = DRAFT * 300  # 13,800 characters
    (tmp_path / "greet.yaml").write_text(
        CONTRACT.replace(json.dumps(DRAFT.removesuffix("\n")), json.dumps(long_draft))
    )
    done = _hz(tmp_path, env, "run", "greet.yaml", "--no-receipt", "--format", "json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(_hz(tmp_path, env, "runs", "list", "--format", "json").stdout)
    run_id = listed["runs"][0]["id"]

    shown = _on_a_terminal(tmp_path, env, "runs", "show", run_id, "--draft")
    assert shown == ESCAPED * 300
    whole = _on_a_terminal(tmp_path, env, "runs", "show", run_id)
    assert whole.startswith(f"run:         {run_id}\n")
    assert whole.endswith("\ndraft:\n" + ESCAPED * 300)
    piped = _hz(tmp_path, env, "runs", "show", run_id, "--draft")
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, long_draft, "")
    logged = _hz(tmp_path, {**env, "GITHUB_ACTIONS": "true"}, "runs", "show", run_id, "--draft")
    match = re.fullmatch(r"::stop-commands::([0-9a-f]{32})\n(.*)::\1::\n", logged.stdout, re.S)
    assert match is not None, logged.stdout[:200]
    assert match[2] == long_draft


def test_hz_render_guards_the_prompt_as_hz_run_guards_the_draft(tmp_path: Path) -> None:
    env = {**_setup(tmp_path), "GITHUB_ACTIONS": "true"}
    done = _hz(tmp_path, env, "render", "greet.yaml", "--format", "text")
    assert done.returncode == 0, done.stderr
    match = re.fullmatch(r"::stop-commands::([0-9a-f]{32})\n(.*)::\1::\n", done.stdout, re.S)
    assert match is not None, done.stdout
    assert match[2] == DRAFT

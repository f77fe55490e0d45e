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

#: ESC sequences (OSC 0: the title, OSC 52: write the clipboard), a tab, workflow commands of
#: both forms.
DRAFT = "\x1b]0;t\x07red\x1b]52;c;aGk=\x07\tok\n::warning::x\n  see ##[add-mask]s\n"

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


def test_on_a_terminal_control_sequences_are_escaped(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    main, secondary = pty.openpty()
    try:
        assert _run(tmp_path, env, secondary) == 0
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
    finally:
        os.close(main)
        if secondary != -1:
            os.close(secondary)
    assert shown.decode().replace("\r\n", "\n") == (
        "\\x1b]0;t\\x07red\\x1b]52;c;aGk=\\x07\tok\n\\x3a:warning::x\n  see ##\\x5badd-mask]s\n"
    )


def test_hz_render_guards_the_prompt_as_hz_run_guards_the_draft(tmp_path: Path) -> None:
    env = {**_setup(tmp_path), "GITHUB_ACTIONS": "true"}
    done = _hz(tmp_path, env, "render", "greet.yaml", "--format", "text")
    assert done.returncode == 0, done.stderr
    match = re.fullmatch(r"::stop-commands::([0-9a-f]{32})\n(.*)::\1::\n", done.stdout, re.S)
    assert match is not None, done.stdout
    assert match[2] == DRAFT

"""Running ``hz run CONTRACT --format json`` as a real process bound to the real ``claude``.

The operator configuration (HZ_CONFIG) binds the claude-code runner to the pinned binary and
lets the fake model's address and a test key through; a watcher thread records the process
groups the CLI ran in, so a test can prove that none of them outlives the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_server import MODEL, FakeAnthropic
from tests.fakes.claude_cli import claude_binary, group_of, living_in_groups, processes_with_env

CONTRACT = """\
hz:
  contract: 1
  name: notes-reader
  timeout: {timeout}
  agent:
    tools: [Read, Grep]
    max_usd: 0.5
  inputs:
    question:
      schema: {{type: string}}
{output}contract: |
  Never write files.
prompt: |
  Question: {{{{ inputs.question }}}}
"""


def contract_text(timeout: int, schema: dict[str, Any] | None = None) -> str:
    # JSON is YAML: the schema goes in as a flow mapping, exactly as the test wrote it.
    output = f"  output:\n    format: json\n    schema: {json.dumps(schema)}\n" if schema else ""
    return CONTRACT.format(timeout=timeout, output=output)


@dataclass(frozen=True)
class Workspace:
    tmp: Path
    work: Path
    config: Path


def workspace(tmp_path: Path) -> Workspace:
    claude = claude_binary()
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the secret word is marmalade\n")
    config = tmp_path / "operator.toml"
    config.write_text(
        # One attempt: these tests classify single sessions (the ledger retries a rate
        # limit by itself; tests/unit/test_ledger_owner.py covers that).
        "[system]\nmax_attempts = 1\n\n"
        "[capabilities]\n"
        'agent_runner = "claude-code"\n\n'
        "[system.runner]\n"
        f"claude_executable = {json.dumps(str(claude))}\n"
        "allow_api_key_billing = true\n"
        'claude_env = ["ANTHROPIC_BASE_URL"]\n'
        "claude_max_retries = 0\n"
        f'model = "{MODEL}"\n'
    )
    return Workspace(tmp_path, work, config)


@dataclass(frozen=True)
class HzRun:
    returncode: int
    stderr: str
    result: dict[str, Any]
    elapsed: float
    #: Process groups (other than the test's own) whose members carried the fake's address.
    groups: frozenset[int]
    #: What still lived after hz exited: processes with the fake's address, members of groups.
    left: tuple[int, ...]


def _watch(url: str, groups: set[int], stop: threading.Event) -> None:
    own = os.getpgrp()  # hz itself runs in the test's group and carries the address too
    while not stop.is_set():
        for pid in processes_with_env("ANTHROPIC_BASE_URL", url):
            pgid = group_of(pid)
            if pgid is not None and pgid != own:
                groups.add(pgid)
        stop.wait(0.05)


def hz_run(
    hz_argv: list[str],
    space: Workspace,
    api: FakeAnthropic,
    *,
    timeout: int = 60,
    schema: dict[str, Any] | None = None,
) -> HzRun:
    contract = space.tmp / "contract.yaml"
    contract.write_text(contract_text(timeout, schema))
    env = {
        **os.environ,
        "HZ_CONFIG": str(space.config),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    argv = [*hz_argv, "run", str(contract), "--input", "question=What is in notes.txt?"]
    argv += ["--workdir", str(space.work), "--format", "json"]
    argv += ["--receipt-dir", str(space.tmp / "receipts")]
    groups: set[int] = set()
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(api.url, groups, stop), daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=timeout + 60, check=False
        )
    finally:
        elapsed = time.monotonic() - started
        stop.set()
        watcher.join(timeout=10)
    left = set(processes_with_env("ANTHROPIC_BASE_URL", api.url)) | set(living_in_groups(groups))
    return HzRun(
        returncode=done.returncode,
        stderr=done.stderr,
        result=json.loads(done.stdout),
        elapsed=elapsed,
        groups=frozenset(groups),
        left=tuple(sorted(left)),
    )

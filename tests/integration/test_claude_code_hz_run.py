"""``hz run CONTRACT`` end to end as a real process, with the real ``claude`` binary bound through
an operator configuration file (HZ_CONFIG) and a scripted fake model."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import MODEL, FakeAnthropic, text, tool_results, tool_use
from tests.fakes.claude_cli import claude_binary, processes_with_env

pytestmark = pytest.mark.real_cli

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
contract: |
  Never write files.
prompt: |
  Question: {{{{ inputs.question }}}}
"""


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    claude = claude_binary()
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the secret word is marmalade\n")
    config = tmp_path / "operator.toml"
    config.write_text(
        "[capabilities]\n"
        'agent_runner = "claude-code"\n\n'
        "[system.runner]\n"
        f"claude_executable = {json.dumps(str(claude))}\n"
        "allow_api_key_billing = true\n"
        'claude_env = ["ANTHROPIC_BASE_URL"]\n'
        "claude_max_retries = 0\n"
        f'model = "{MODEL}"\n'
    )
    return {"tmp": tmp_path, "work": work, "config": config}


def hz_run(
    hz_argv: list[str], setup: dict[str, Path], api: FakeAnthropic, *, timeout: int = 60
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    contract = setup["tmp"] / "contract.yaml"
    contract.write_text(CONTRACT.format(timeout=timeout))
    env = {
        **os.environ,
        "HZ_CONFIG": str(setup["config"]),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "test-key",
    }
    argv = [*hz_argv, "run", str(contract), "--input", "question=What is in notes.txt?"]
    argv += ["--workdir", str(setup["work"]), "--format", "json"]
    argv += ["--receipt-dir", str(setup["tmp"] / "receipts")]
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=timeout + 60, check=False
    )
    return done, json.loads(done.stdout)


def test_plain_answer(hz_argv: list[str], setup: dict[str, Path]) -> None:
    with FakeAnthropic([text("Hello there")]) as api:
        done, result = hz_run(hz_argv, setup, api)
    assert done.returncode == 0, done.stderr
    assert (result["status"], result["runner"], result["model"], result["draft"]) == (
        "completed",
        "claude-code",
        MODEL,
        "Hello there",
    )
    assert api.requests[0]["messages"][0]["content"] == "Question: What is in notes.txt?\n"
    assert "Never write files." in json.dumps(api.requests[0])
    assert [p.name for p in (setup["tmp"] / "receipts").glob("*.json")] == [
        "000001-notes-reader.json"
    ]


def test_read_round_trip(hz_argv: list[str], setup: dict[str, Path]) -> None:
    notes = str(setup["work"] / "notes.txt")
    with FakeAnthropic([tool_use("Read", {"file_path": notes}), text("marmalade")]) as api:
        done, result = hz_run(hz_argv, setup, api)
    assert done.returncode == 0, done.stderr
    assert (result["status"], result["draft"], result["turns"]) == ("completed", "marmalade", 2)
    assert result["tool_calls"] == [
        {"name": "Read", "input": {"file_path": notes}, "is_error": False}
    ]
    [sent] = tool_results(api.requests)
    assert "the secret word is marmalade" in json.dumps(sent)


def test_endless_tool_calls_end_at_the_contract_timeout(
    hz_argv: list[str], setup: dict[str, Path]
) -> None:
    with FakeAnthropic([tool_use("Grep", {"pattern": "x"})], repeat_last=True) as api:
        started = time.monotonic()
        done, result = hz_run(hz_argv, setup, api, timeout=4)
        elapsed = time.monotonic() - started
        left = processes_with_env("ANTHROPIC_BASE_URL", api.url)
    assert done.returncode == 5, done.stderr
    assert (result["status"], result["reason"]) == ("timeout", "timed out after 4 s")
    assert result["tool_call_counts"]["Grep"] >= 2
    assert left == {}
    assert elapsed < 4 + 2 + 20  # hz's own start-up included; generous on a shared machine


def test_hz_doctor_checks_the_pinned_cli(hz_argv: list[str], setup: dict[str, Path]) -> None:
    env = {**os.environ, "HZ_CONFIG": str(setup["config"]), "ANTHROPIC_API_KEY": "test-key"}
    done = subprocess.run(
        [*hz_argv, "doctor"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert "ok claude version: 2.1.332 (minimum 2.1.332)" in lines
    assert "ok claude login: API key from ANTHROPIC_API_KEY (billed to the API account)" in lines

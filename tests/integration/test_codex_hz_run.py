"""``hz run CONTRACT`` end to end as a real process, with the real ``codex`` binary bound through
an operator configuration file (HZ_CONFIG: ``agent_runner = "codex"``, a model provider that
points at the fake Responses API, its key passed by ``codex_env``)."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.claude_cli import processes_with_env
from tests.fakes.responses_server import (
    MODEL,
    FakeResponses,
    api_error,
    codex_binary,
    function_outputs,
    hang,
    message,
    shell,
)

pytestmark = pytest.mark.real_cli

CONTRACT = """\
hz:
  contract: 1
  name: notes-reader
  timeout: {timeout}
  agent:
    max_usd: 0.5
  inputs:
    question:
      schema: {{type: string}}
{output}contract: |
  Never write files.
prompt: |
  Question: {{{{ inputs.question }}}}
"""
JSON_OUTPUT = """\
  output:
    format: json
    schema:
      type: object
      properties: {n: {type: integer}}
      required: [n]
      additionalProperties: false
"""


class Setup:
    def __init__(self, tmp: Path, codex: Path, key: str) -> None:
        self.tmp, self.codex, self.key = tmp, codex, key
        self.work = tmp / "work"
        self.work.mkdir()
        (self.work / "notes.txt").write_text("the secret word is marmalade\n")

    def config(self, api: FakeResponses, extra: str = "") -> Path:
        path = self.tmp / "operator.toml"
        path.write_text(
            # One attempt: these tests classify single sessions (the ledger retries a rate
            # limit by itself; tests/unit/test_ledger_owner.py covers that).
            "[system]\nmax_attempts = 1\n\n" + api.codex_operator_file("codex", self.codex) + extra
        )
        return path

    def run(
        self,
        hz_argv: list[str],
        api: FakeResponses,
        *,
        timeout: int = 60,
        output: str = "",
        extra_config: str = "",
        args: tuple[str, ...] = ("--format", "json"),
    ) -> subprocess.CompletedProcess[str]:
        contract = self.tmp / "contract.yaml"
        contract.write_text(CONTRACT.format(timeout=timeout, output=output))
        env = {
            **os.environ,
            "HZ_CONFIG": str(self.config(api, extra_config)),
            "FAKE_KEY": self.key,
        }
        argv = [*hz_argv, "run", str(contract), "--input", "question=What is in notes.txt?"]
        argv += ["--workdir", str(self.work), "--receipt-dir", str(self.tmp / "receipts"), *args]
        return subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=timeout + 60, check=False
        )


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path, codex_binary(), f"fake-key-{uuid.uuid4()}")


def result_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def test_plain_answer(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message("marmalade")]) as api:
        done = setup.run(hz_argv, api)
        body = api.requests[0]
    assert done.returncode == 0, done.stderr
    result = result_of(done)
    assert (result["status"], result["runner"], result["model"], result["draft"]) == (
        "completed",
        "codex",
        MODEL,
        "marmalade",
    )
    assert result["limits_unenforced"] == ["budget"]
    assert result["usage"] == {
        "input_tokens": 32,
        "output_tokens": 9,
        "cache_read_input_tokens": 8,
        "cache_creation_input_tokens": 0,
    }
    assert body["input"][0]["content"][0]["text"] == "Never write files."  # the CLI trims it
    assert body["input"][-1]["content"][0]["text"] == "Question: What is in notes.txt?\n"
    assert "not enforced: budget" in done.stderr
    [receipt] = (setup.tmp / "receipts").glob("*.json")
    assert json.loads(receipt.read_text())["runner"] == "codex"
    [transcript] = (setup.tmp / "receipts").glob("*.transcript.jsonl")
    events = [json.loads(line) for line in transcript.read_text().splitlines()[1:]]
    assert [(e["type"], e.get("turn"), e.get("text")) for e in events] == [
        ("message", 1, "marmalade"),
        ("usage", 1, None),
        ("end", 1, "marmalade"),
    ]
    assert setup.key not in transcript.read_text()
    assert processes_with_env("FAKE_KEY", setup.key) == {}


def test_text_format_prints_the_draft(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message("marmalade")]) as api:
        done = setup.run(hz_argv, api, args=())
    assert (done.returncode, done.stdout) == (0, "marmalade\n")
    assert done.stderr.startswith("hz: completed · runner codex · model fake-model · 1 turn · ")


def test_shell_command_under_the_read_only_sandbox(hz_argv: list[str], setup: Setup) -> None:
    command = "echo made > made.txt; cat notes.txt"
    with FakeResponses([shell(command), message("marmalade, and I could not write")]) as api:
        done = setup.run(hz_argv, api)
        outputs = function_outputs(api.requests)
    assert done.returncode == 0, done.stderr
    result = result_of(done)
    assert result["status"] == "completed"
    assert result["tool_call_counts"] == {"command_execution": 1}
    assert result["tool_calls"][0]["input"]["command"].endswith(f" -lc '{command}'")
    assert not (setup.work / "made.txt").exists()
    assert "made.txt: Read-only file system" in outputs[0]["output"]


def test_rate_limited(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([api_error(429, "rate_limit_exceeded", "Rate limit reached")]) as api:
        done = setup.run(hz_argv, api)
    assert done.returncode == 4, done.stderr
    result = result_of(done)
    assert (result["status"], result["failure_kind"], result["reason"]) == (
        "failed",
        "rate_limited",
        "exceeded retry limit, last status: 429 Too Many Requests",
    )


def test_invalid_api_key(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([api_error(401, "invalid_api_key", "Incorrect API key provided")]) as api:
        done = setup.run(hz_argv, api)
        url = api.base_url
    assert done.returncode == 4, done.stderr
    result = result_of(done)
    assert (result["status"], result["failure_kind"], result["reason"]) == (
        "failed",
        "auth_misconfigured",
        f"unexpected status 401 Unauthorized: Incorrect API key provided, url: {url}/responses",
    )


def test_a_hanging_model_ends_at_the_contract_timeout(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([hang()]) as api:
        started = time.monotonic()
        done = setup.run(hz_argv, api, timeout=4)
        elapsed = time.monotonic() - started
        left = processes_with_env("FAKE_KEY", setup.key)
    assert done.returncode == 5, done.stderr
    result = result_of(done)
    assert (result["status"], result["reason"]) == ("timeout", "timed out after 4 s")
    assert left == {}
    assert elapsed < 4 + 2 + 20  # hz's own start-up included; generous on a shared machine


def test_structured_output_valid(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message('{"n": 3}')]) as api:
        done = setup.run(hz_argv, api, output=JSON_OUTPUT)
        body = api.requests[0]
    assert done.returncode == 0, done.stderr
    result = result_of(done)
    assert (result["status"], result["structured_output"]) == ("completed", {"n": 3})
    assert body["text"]["format"]["schema"] == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }


def test_structured_output_invalid(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message('{"n": "three"}')]) as api:
        done = setup.run(hz_argv, api, output=JSON_OUTPUT)
    assert done.returncode == 4, done.stderr
    result = result_of(done)
    assert (result["status"], result["failure_kind"], result["draft"]) == (
        "failed",
        "schema_invalid",
        '{"n": "three"}',
    )
    assert result["reason"] == (
        "the draft does not match the output schema at $.n: 'three' is not of type 'integer'"
    )


def test_a_required_budget_refuses_the_run(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message("marmalade")]) as api:
        done = setup.run(hz_argv, api, extra_config="require_enforced_budget = true\n")
        requests = api.requests
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "hz: error: runner 'codex' cannot enforce a budget (unsupported) and [system.runner] "
        "require_enforced_budget is true; nothing was started\n"
        "  hint: bind a runner that enforces budgets, or set require_enforced_budget = false\n"
    )
    assert requests == []
    assert not (setup.tmp / "receipts").exists()


def test_dry_run_shows_the_codex_command(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message("unused")]) as api:
        done = setup.run(hz_argv, api, args=("--dry-run", "--format", "json"))
        requests = api.requests
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["runner"] == "codex"
    assert plan["argv"][:5] == [str(setup.codex), "exec", "--json", "--sandbox", "read-only"]
    assert plan["argv"][-1] == "-"
    assert "FAKE_KEY" in plan["env_names"]
    assert setup.key not in done.stdout
    assert requests == []


def test_doctor_with_codex_bound(hz_argv: list[str], setup: Setup) -> None:
    with FakeResponses([message("unused")]) as api:
        config = setup.config(api, "require_enforced_budget = true\n")
    env = {**os.environ, "HZ_CONFIG": str(config)}
    done = subprocess.run(
        [*hz_argv, "doctor"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # The runner's lines, then the providers' (files and git are bound by default).
    start = lines.index("ok       runner: codex (hz-contracts)")
    assert [line.split(":")[0] for line in lines[start + 5 :]] == [
        "ok       provider files",
        "ok       provider git",
    ]
    assert lines[start : start + 5] == [
        "ok       runner: codex (hz-contracts)",
        "ok       capabilities: timeout hard, budget unsupported, tools unsupported, "
        "turns unsupported, structured_output hard",
        "FAILED   enforced budget: runner 'codex' cannot enforce a budget (unsupported) and "
        "[system.runner] require_enforced_budget is true; nothing was started",
        f"ok       codex executable: {setup.codex}",
        "ok       codex version: 0.171.0 (minimum 0.171.0)",
    ]

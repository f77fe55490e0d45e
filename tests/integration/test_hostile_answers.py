"""Hostile answers after a billed session: every one ends as a result with a receipt.

A model's JSON answer and a runner's JSON output are read by the one strict reader: NaN and
Infinity, integers past Python's digit limit, deep nesting and lone surrogates are refused as
``failed`` results (``schema_invalid`` for the draft), never a crash (exit 3) without receipt.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult, default_receipt_dir
from tests.helpers.in_process import leaves_nothing

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")

CONTRACT = """\
hz:
  contract: 1
  name: score
  timeout: 60
  agent:
    max_usd: 0.5
  output:
    format: json
    schema: {type: object, properties: {score: {minimum: 0, maximum: 1}}}
contract: |
  Score it.
prompt: |
  Give a score.
"""


def run_with_answer(
    cli: Cli, tmp_path: Path, raw: str, *, output: str = "text"
) -> tuple[CliResult, dict[str, object], dict[str, object]]:
    (tmp_path / "answer.txt").write_text(raw, encoding="utf-8")
    command = [
        sys.executable,
        "-c",
        "import sys; sys.stdout.write(open(sys.argv[1], encoding='utf-8').read())",
        str(tmp_path / "answer.txt"),
        "{contract_file}",
    ]
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\ncommand_output = {json.dumps(output)}\n"
        "command_enforces_read_only = true\n"
    )
    (tmp_path / "score.yaml").write_text(CONTRACT)
    with leaves_nothing("hz run"):
        done = cli(
            "run", "score.yaml", "--format", "json", "-q",
            cwd=tmp_path, env={"HZ_CONFIG": str(tmp_path / "operator.toml")},
        )  # fmt: skip
    result = json.loads(done.stdout) if done.stdout else {}
    receipts = sorted(default_receipt_dir().glob("*.json"))
    receipt = json.loads(receipts[-1].read_text()) if receipts else {}
    return done, result, receipt


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ('{"score": NaN}', "NaN is not a JSON value"),
        ('{"score": Infinity}', "Infinity is not a JSON value"),
        ('{"score": 1e999}', "the number 1e999 is too large"),
        ('{"score": ' + "7" * 5000 + "}", "an integer of 5000 digits (at most 4300 are read)"),
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        (
            '{"score": 0.5, "note": "\\ud800"}',
            "a string holds a lone surrogate (\\ud800), which is not text",
        ),
        ('{"score": 0.5, "score": 7}', "duplicate key 'score' in a JSON object"),
    ],
)
def test_a_hostile_answer_is_schema_invalid_with_a_receipt(
    cli: Cli, tmp_path: Path, answer: str, reason: str
) -> None:
    done, result, receipt = run_with_answer(cli, tmp_path, answer)
    assert (done.returncode, done.stderr) == (4, "")
    assert (result["status"], result["failure_kind"], result["reason"]) == (
        "failed",
        "schema_invalid",
        f"the draft is not valid JSON: {reason}",
    )
    assert (receipt["status"], receipt["failure_kind"]) == ("failed", "schema_invalid")


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ('{"draft": {"score": NaN}}', "NaN is not a JSON value"),
        ('{"draft": "{}", "total_cost_usd": NaN}', "NaN is not a JSON value"),
        (
            '{"draft": {"score": ' + "7" * 5000 + "}}",
            "an integer of 5000 digits (at most 4300 are read)",
        ),
        ('{"draft": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than 64 levels deep"),
    ],
)
def test_hostile_json_from_the_command_runner_is_a_failure_with_a_receipt(
    cli: Cli, tmp_path: Path, output: str, reason: str
) -> None:
    done, result, receipt = run_with_answer(cli, tmp_path, output, output="json")
    assert (done.returncode, done.stderr) == (4, "")
    assert (result["status"], result["failure_kind"], result["reason"]) == (
        "failed",
        "runtime_error",
        f"the JSON on stdout is malformed: {reason}",
    )
    assert (receipt["status"], receipt["failure_kind"]) == ("failed", "runtime_error")


def test_a_lone_surrogate_in_the_command_runners_json_becomes_a_replacement_character(
    cli: Cli, tmp_path: Path
) -> None:
    done, result, receipt = run_with_answer(
        cli, tmp_path, '{"draft": {"score": 1, "note": "\\ud800"}}', output="json"
    )
    assert (done.returncode, result["status"]) == (0, "completed")
    assert result["structured_output"] == {"score": 1, "note": "\ufffd"}
    assert receipt["status"] == "completed"

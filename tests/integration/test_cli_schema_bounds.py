"""A backtracking ``pattern`` as a user meets it: `hz validate` on a default, `hz render` on
an input value, `hz run` on the model's JSON answer — each ends in a diagnostic or a typed
result within seconds (hz in process: the regex engine's own timeout bounds it, no thread is
left behind)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult, default_receipt_dir
from tests.helpers.in_process import leaves_nothing

SLOW = "a" * 40 + "b"
TIMEOUT = (
    "the pattern '^(a|a)*$' took too long to evaluate (over 1 second of regex time); simplify "
    "it (nested repetition such as (a|a)* backtracks)"
)
CONTRACT = """\
hz:
  contract: 1
  name: slow
  timeout: 30
  agent: {max_usd: 0.5}
  inputs:
    body:
      schema: {type: string}
    slow:
      schema: {type: string, pattern: "^(a|a)*$"}
      default: DEFAULT
  output:
    format: json
    schema: {properties: {v: {pattern: "^(a|a)*$"}}}
contract: Answer in JSON.
prompt: "{{ inputs.body }}{{ inputs.slow[:0] }}"
"""


def hz(cli: Cli, cwd: Path, *args: str) -> tuple[CliResult, float]:
    (cwd / "operator.toml").write_text('[capabilities]\nagent_runner = "echo"\n')
    started = time.monotonic()
    with leaves_nothing(f"hz {args[0]}"):
        done = cli(*args, cwd=cwd, env={"HZ_CONFIG": str(cwd / "operator.toml")})
    return done, time.monotonic() - started


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "slow.yaml").write_text(CONTRACT.replace("DEFAULT", SLOW))
    (tmp_path / "ok.yaml").write_text(CONTRACT.replace("DEFAULT", "aaaa"))
    return tmp_path


def test_validate_reports_the_pattern_at_the_schema(cli: Cli, work: Path) -> None:
    done, took = hz(cli, work, "validate", "slow.yaml")
    assert (done.returncode, done.stdout) == (
        1,
        f"slow.yaml:10:15: error: not a valid JSON Schema: hz.inputs.slow.schema: {TIMEOUT} "
        "[HZ401]\n",
    )
    assert took < 30


def test_render_reports_the_value(cli: Cli, work: Path) -> None:
    done, took = hz(cli, work, "render", "ok.yaml", "--input", "body=x", "--input", f"slow={SLOW}")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"--input {('slow=' + SLOW)[:39]}…: error: input 'slow': cannot be checked against its "
        f"schema: {TIMEOUT} [HZ702]\nFound 1 error on the command line (checked 1 file)\n"
    )
    assert took < 30


def test_run_ends_schema_invalid_with_a_receipt(cli: Cli, work: Path) -> None:
    answer = json.dumps({"v": SLOW})
    done, took = hz(
        cli, work, "run", "ok.yaml", "--input", f"body={answer}", "--format", "json", "-q"
    )
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"], result["failure_kind"], result["reason"]) == (
        4,
        "failed",
        "schema_invalid",
        f"the draft could not be checked against the output schema: {TIMEOUT}",
    )
    assert [p.name for p in default_receipt_dir().glob("*.json")] == ["000001-slow.json"]
    assert took < 30

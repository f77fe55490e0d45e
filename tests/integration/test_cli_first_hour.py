"""Stumbles of a user's first hour, each as the user meets it: real hz processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CONTRACT = """\
# {comment}
hz:
  contract: 1
  name: greet
  timeout: 30s
  agent:
    max_usd: {max_usd}
  inputs:
    who:
      schema: {{type: string}}
contract: Be brief.
prompt: Say hi to {{{{ inputs.who }}}}.
"""


def hz(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hz", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def project(tmp_path: Path, comment: str = "v1", max_usd: str = "0.5") -> Path:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "hz.toml").touch()
    text = CONTRACT.format(comment=comment, max_usd=max_usd)
    (tmp_path / "contracts" / "greet.yaml").write_text(text)
    return tmp_path


def test_echo_answers_a_json_job_with_an_example_of_its_schema(tmp_path: Path) -> None:
    done = hz(
        REPO,
        *("run", "contracts/issue-triage.yaml", "--inputs", "contracts/inputs/issue-triage.json"),
        *("--no-receipt", "--format", "json"),
        HZ_RUNNER="echo",
        HZ_SYSTEM_RUNNER__ECHO_DRAFT="example",
    )
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"], result["structured_output"]) == (
        0,
        "completed",
        {"kind": "bug", "labels": [], "priority": "p0", "summary": ""},
    )


def test_compile_quiet_prints_only_problems(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = hz(root, "compile", "contracts", "--out", "jobs", "-q")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    checked = hz(root, "compile", "contracts", "--out", "jobs", "--check", "--quiet")
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")
    project(root, max_usd='"0.5"')
    broken = hz(root, "compile", "contracts", "--out", "jobs", "-q")
    assert (broken.returncode, broken.stderr) == (1, "")
    assert broken.stdout.startswith("contracts/greet.yaml:7:14: error: ")


def test_check_names_what_differs(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert hz(root, "compile", "contracts", "--out", "jobs").returncode == 0
    project(root, comment="v2: only a comment changed")
    done = hz(root, "compile", "contracts", "--out", "jobs", "--check")
    assert done.stdout.splitlines()[0] == (
        "contracts/greet.yaml:0:0: error: job jobs/greet.job.json is stale: only the source hash "
        "differs: the contract file changed (a comment or layout) but not what it compiles to "
        "[HZ602]"
    )
    project(root, max_usd="0.75")
    done = hz(root, "compile", "contracts", "--out", "jobs", "--check")
    assert done.stdout.splitlines()[0] == (
        "contracts/greet.yaml:0:0: error: job jobs/greet.job.json is stale: this field differs "
        "from what the contract compiles to: budget.max_usd [HZ602]"
    )
    assert done.stderr == "Found 1 error in 1 file (checked 2 files)\n"


def test_render_counts_the_files_it_checked(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert hz(root, "compile", "contracts", "--out", "jobs").returncode == 0
    (root / "in.json").write_text('{"who": 5}')
    done = hz(root, "render", "jobs/greet.job.json", "--inputs", "in.json")
    assert done.stderr == (
        "in.json:1:9: error: input 'who': expected a string, got an integer (5) [HZ702]\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )
    (root / "who.txt").write_text("Ann")
    (root / "more.json").write_text('{"who": "Bo", "whom": 1}')
    both = hz(
        root, "render", "contracts/greet.yaml", "--inputs", "more.json", "--input", "who=@who.txt"
    )
    assert both.stderr.splitlines()[-1] == "Found 1 error in 1 file (checked 3 files)"


def test_config_show_aligns_comments_after_short_values_only(tmp_path: Path) -> None:
    long_command = ["/opt/acme/bin/acme-agent", "run", "--system-file={contract_file}"]
    long_command += ["--prompt-file={prompt_file}", "--out={output_file}"]
    (tmp_path / "op.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(long_command)}\n"
        'command_enforces_read_only = true\ncommand_read_only_tools = ["read"]\n'
    )
    done = hz(tmp_path, "config", "show", HZ_CONFIG=str(tmp_path / "op.toml"))
    where = f"HZ_CONFIG {tmp_path}/op.toml"
    lines = done.stdout.split("[system.runner]\n")[1].split("\n\n")[0].splitlines()
    assert lines == [
        f"command = {json.dumps(long_command)}  # {where}:4:1",
        f"command_enforces_read_only = true   # {where}:5:1",
        f'command_read_only_tools = ["read"]  # {where}:6:1',
    ]

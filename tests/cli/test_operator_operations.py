"""A contract that reads an operation the operator declares (a ``command`` operation outside
hz's catalog): ``hz validate``, ``compile``, ``render``, ``run`` and ``submit`` check it against
the operator's argument schema, and ``--at`` makes the fetched windows of ``run`` and
``submit`` reproducible."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.canonical import canonical_json
from tests.conftest import Cli
from tests.helpers.providers import job_reading

PROGRAM = """\
import json, sys
asked = json.load(sys.stdin)
window = asked["window"]
print(json.dumps([f"{asked['args']['team']} met {window['since']} to {window['until']}"]))
"""

CONTRACT = """\
hz:
  contract: 1
  name: meeting-digest
  timeout: 10m
  inputs:
    notes:
      read: meetings.notes
      args: {{team: {team}}}
      window: 7d
  agent: {{max_usd: 0.5}}
contract: |
  Summarise the meetings.
prompt: |
  {{% for n in inputs.notes %}}- {{{{ n }}}}
  {{% endfor %}}
"""

AT = "2026-05-01T09:00:00Z"
NOTE = "core met 2026-04-24T09:00:00Z to 2026-05-01T09:00:00Z"


def operator(tmp_path: Path, team: str = "core") -> dict[str, str]:
    """A contract reading meetings.notes, the program that serves it, and the operator file
    that declares it (a capability of its own, bound to the command provider)."""
    (tmp_path / "meetings.py").write_text(PROGRAM)
    (tmp_path / "c.yaml").write_text(CONTRACT.format(team=team))
    argv = [sys.executable, str(tmp_path / "meetings.py")]
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "echo"\nmeetings = "command"\n\n'
        '[providers.command.operations."meetings.notes"]\n'
        f"argv = {json.dumps(argv)}\n"
        'args = { type = "object", properties = { team = { type = "string" } }, '
        'required = ["team"], additionalProperties = false }\n'
        'result = { type = "array", items = { type = "string" } }\n'
        "window = true\n"
    )
    return {"HZ_CONFIG": str(tmp_path / "operator.toml")}


def test_validate_knows_the_operators_operations_and_their_arguments(
    cli: Cli, tmp_path: Path
) -> None:
    env = operator(tmp_path)
    done = cli("validate", "c.yaml", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "",
        "Success: no issues found in 1 file\n",
    )
    # Without the operator's configuration, the operation is unknown.
    alone = cli("validate", "c.yaml", cwd=tmp_path, env={"HZ_CONFIG": ""})
    assert (alone.returncode, alone.stdout) == (
        1,
        "c.yaml:7:13: error: hz.inputs.notes.read: unknown operation 'meetings.notes' [HZ410]\n"
        "  hint: `hz providers` lists every operation with its arguments\n",
    )


def test_the_operators_argument_schema_holds_a_contracts_args(cli: Cli, tmp_path: Path) -> None:
    env = operator(tmp_path, team="3")
    wrong = (
        "c.yaml:8:20: error: hz.inputs.notes.args.team: expected a string, got an integer (3) "
        '[HZ411]\n  hint: quote it, as in team: "3"\n'
    )
    validated = cli("validate", "c.yaml", cwd=tmp_path, env=env)
    assert (validated.returncode, validated.stdout) == (1, wrong)
    compiled = cli("compile", "c.yaml", "--out", "jobs", cwd=tmp_path, env=env)
    assert (compiled.returncode, compiled.stdout) == (1, wrong)
    for command in ("render", "run", "submit"):
        done = cli(command, "c.yaml", cwd=tmp_path, env=env)
        assert (done.returncode, done.stderr.splitlines(True)[:2]) == (
            1,
            wrong.splitlines(True),
        ), command


def test_compile_and_render_a_contract_reading_an_operators_operation(
    cli: Cli, tmp_path: Path
) -> None:
    env = operator(tmp_path)
    compiled = cli("compile", "c.yaml", "--out", "jobs", cwd=tmp_path, env=env)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    job = json.loads((tmp_path / "jobs" / "meeting-digest.job.json").read_text())
    assert job["inputs"]["notes"]["read"] == {
        "operation": "meetings.notes",
        "args": {"team": "core"},
        "window": "7d",
    }
    done = cli("render", "c.yaml", "--fetch", "--at", AT, cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr) == (0, "")
    packet = json.loads(done.stdout)
    assert packet["inputs"] == {"notes": [NOTE]}
    assert packet["sources"]["notes"]["window"] == {
        "spec": "7d",
        "since": "2026-04-24T09:00:00Z",
        "until": AT,
    }


def _ledger_packets(env: dict[str, str]) -> list[dict[str, Any]]:
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    ledger, _ = open_ledger(load_config(environ=env), reconciled=False)
    try:
        return [json.loads(row.packet_json) for row in ledger.select()]
    finally:
        ledger.close()


def test_run_and_submit_resolve_windows_at_the_time_given(cli: Cli, tmp_path: Path) -> None:
    env = operator(tmp_path)
    ran = cli("run", "c.yaml", "--at", "2026-05-01T11:00:00+02:00", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    assert f"- {NOTE}" in ran.stdout  # the echo runner prints the prompt
    submitted = cli("submit", "c.yaml", "--at", AT, "--format", "json", cwd=tmp_path, env=env)
    assert submitted.returncode == 0, submitted.stderr
    packets = _ledger_packets(env)
    assert len(packets) == 2
    # The same window twice: at a fixed time, a fetch is reproducible.
    assert [p["sources"]["notes"]["window"]["until"] for p in packets] == [AT, AT]
    assert [p["inputs"] for p in packets] == [{"notes": [NOTE]}] * 2
    assert packets[0]["prompt_sha256"] == packets[1]["prompt_sha256"]


def test_run_at_with_a_job_and_without_at(cli: Cli, tmp_path: Path) -> None:
    env = operator(tmp_path)
    spec = {"read": {"operation": "files.read", "args": {"path": "a.md"}}}
    (tmp_path / "a.md").write_text("a note\n")
    job = job_reading({"a": spec}, "{{ inputs.a.text }}")
    (tmp_path / "a.job.json").write_text(canonical_json(job.to_json_data()))
    done = cli("run", "a.job.json", "--at", AT, cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout.count("a note")) == (0, 1), done.stderr
    [packet] = _ledger_packets(env)
    assert "window" not in packet["sources"]["a"]  # files.read takes none: --at changes nothing


def test_at_refuses_a_packet_and_a_time_without_offset(cli: Cli, tmp_path: Path) -> None:
    env = operator(tmp_path)
    rendered = cli("render", "c.yaml", "--fetch", "-o", "p.json", cwd=tmp_path, env=env)
    assert rendered.returncode == 0, rendered.stderr
    for command in ("run", "submit"):
        done = cli(command, "p.json", "--at", AT, cwd=tmp_path, env=env)
        assert (done.returncode, done.stderr) == (
            1,
            "p.json:0:0: error: a packet already holds its input values: --at cannot fetch "
            "them again [HZ710]\n"
            "  hint: run the job or contract with --at to fetch its inputs at that time\n"
            "Found 1 error in 1 file (checked 1 file)\n",
        ), command
        naive = cli(command, "c.yaml", "--at", "2026-05-01T09:00", cwd=tmp_path, env=env)
        assert (naive.returncode, naive.stderr.splitlines()[-1]) == (
            2,
            "Error: Invalid value for '--at': '2026-05-01T09:00' has no offset: add Z (UTC) "
            "or +HH:MM",
        ), command
    assert _ledger_packets(env) == []


def test_a_ceiling_given_still_reads_the_operators_operations(cli: Cli, tmp_path: Path) -> None:
    env = operator(tmp_path)
    done = cli("validate", "c.yaml", "--max-usd-ceiling", "5", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (0, "")
    # A configuration that cannot be read is hz doctor's to report: with the ceiling given,
    # validate needs nothing else of it and checks against hz's catalog.
    (tmp_path / "operator.toml").write_text("[capabilities\n")
    broken = cli("validate", "c.yaml", "--max-usd-ceiling", "5", cwd=tmp_path, env=env)
    assert (broken.returncode, broken.stdout) == (
        1,
        "c.yaml:7:13: error: hz.inputs.notes.read: unknown operation 'meetings.notes' [HZ410]\n"
        "  hint: `hz providers` lists every operation with its arguments\n",
    )

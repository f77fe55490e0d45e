"""`hz render` in process: packets on stdout or to a file, previews, located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, CliResult
from tests.fakes.agent import is_gone
from tests.helpers.contracts import GREET_TIMES


def hz(cli: Cli, cwd: Path, *args: str) -> CliResult:
    return cli(*args, cwd=cwd)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "hz.toml").touch()
    (tmp_path / "greet.yaml").write_text(GREET_TIMES, encoding="utf-8")
    return tmp_path


def test_packet_on_stdout_and_to_a_file_are_the_same(cli: Cli, project: Path) -> None:
    shown = hz(cli, project, "render", "greet.yaml", "--input", "who=Ada", "--input", "times=2")
    assert (shown.returncode, shown.stderr) == (0, "")
    packet = json.loads(shown.stdout)
    assert packet["prompt"] == "Hello Ada!\nHello Ada!\n\n"
    assert packet["inputs"] == {"times": 2, "who": "Ada"}
    written = hz(
        cli, project, "render", "greet.yaml", "--input", "who=Ada", "--input", "times=2",
        "-o", "out/greet.packet.json",
    )  # fmt: skip
    assert (written.returncode, written.stdout) == (0, "")
    assert written.stderr == "wrote out/greet.packet.json\n"
    assert (project / "out" / "greet.packet.json").read_text(encoding="utf-8") == shown.stdout


def test_render_from_a_compiled_job_matches_the_contract(cli: Cli, project: Path) -> None:
    hz(cli, project, "compile", "greet.yaml", "--out", "jobs")
    (project / "in.yaml").write_text("who: Bo\n", encoding="utf-8")
    from_job = hz(cli, project, "render", "jobs/greet.job.json", "--inputs", "in.yaml")
    from_contract = hz(cli, project, "render", "greet.yaml", "--inputs", "in.yaml")
    assert from_job.returncode == 0, from_job.stderr
    assert from_job.stdout == from_contract.stdout


def test_text_format_previews_the_prompt(cli: Cli, project: Path) -> None:
    done = hz(cli, project, "render", "greet.yaml", "--input", "who={{ 7*7 }}", "--format", "text")
    assert (done.returncode, done.stdout, done.stderr) == (0, "Hello {{ 7*7 }}!\n\n", "")


def test_input_errors_are_located_on_stderr(cli: Cli, project: Path) -> None:
    (project / "in.yaml").write_text("who: Ada\ntimes: 0\nwhom: x\n", encoding="utf-8")
    done = hz(cli, project, "render", "greet.yaml", "--inputs", "in.yaml")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "in.yaml:2:8: error: input 'times': must be at least 1, got 0 [HZ702]\n"
        "in.yaml:3:1: error: input 'whom' is not declared by the job [HZ704]\n"
        "  hint: did you mean 'who'?\n"
        "Found 2 errors in 1 file (checked 2 files)\n"
    )


def test_sandbox_escape_is_a_located_error(cli: Cli, project: Path) -> None:
    text = GREET_TIMES.replace("Hello {{ inputs.who }}!", "{{ inputs.who.__class__.__mro__ }}")
    (project / "greet.yaml").write_text(text, encoding="utf-8")
    done = hz(cli, project, "render", "greet.yaml", "--input", "who=x")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "greet.yaml:16:3: error: prompt: refused by the template sandbox: access to attribute "
        "'__class__' of 'str' object is unsafe. [HZ708]\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )


def test_invalid_contract_gets_validate_diagnostics(cli: Cli, project: Path) -> None:
    (project / "greet.yaml").write_text(
        GREET_TIMES.replace("timeout: 60", "timeout: 0"), encoding="utf-8"
    )
    done = hz(cli, project, "render", "greet.yaml", "--input", "who=x")
    validated = hz(cli, project, "validate", "greet.yaml")
    assert done.returncode == validated.returncode == 1
    assert done.stderr == validated.stdout + validated.stderr


def test_unknown_job_version_is_a_clear_error(cli: Cli, project: Path) -> None:
    hz(cli, project, "compile", "greet.yaml", "--out", "jobs")
    path = project / "jobs" / "greet.job.json"
    data = json.loads(path.read_text(encoding="utf-8")) | {"format_version": 2}
    path.write_text(json.dumps(data), encoding="utf-8")
    done = hz(cli, project, "render", "jobs/greet.job.json", "--input", "who=x")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "hz: error: jobs/greet.job.json: job format version 2 needs a newer hz "
        "(this hz reads version 1)\n"
        "  hint: upgrade hz, or compile the contract with this hz\n"
    )


def test_missing_target_is_a_usage_error(cli: Cli, project: Path) -> None:
    done = hz(cli, project, "render", "absent.job.json")
    assert done.returncode == 2
    assert "'absent.job.json' does not exist" in done.stderr


def test_contract_warnings_go_to_stderr_and_the_packet_renders(cli: Cli, project: Path) -> None:
    text = GREET_TIMES.replace("  {% for i in range(inputs.times) %}", "  {% for i in range(2) %}")
    (project / "greet.yaml").write_text(text, encoding="utf-8")
    done = hz(cli, project, "render", "greet.yaml", "--input", "who=Al", "--format", "text")
    assert (done.returncode, done.stdout) == (0, "Hello Al!\nHello Al!\n\n")
    assert done.stderr == (
        "greet.yaml:10:5: warning: hz.inputs.times is declared but the prompt never uses it "
        "[HZ506]\n"
        "  hint: use it in the prompt as {{ inputs.times }}, or remove it\n"
    )


DATA_CONTRACT = """\
hz:
  contract: 1
  name: data
  timeout: 60
  agent:
    max_usd: 0.5
  inputs:
    items:
      schema: {type: string}
    rows:
      schema: {type: array}
      default: [{"get": 1, "pop": null}, {"get": true, "pop": [false]}]
contract: |
  Be kind.
prompt: |
  [{{ inputs.items }}]
  {% for row in inputs.rows %}{{ row.get }} {{ row.pop }}
  {% endfor %}
"""


def test_inputs_named_after_methods_are_data_printed_as_json(cli: Cli, project: Path) -> None:
    (project / "data.yaml").write_text(DATA_CONTRACT, encoding="utf-8")
    args = ("render", "data.yaml", "--input", "items=VAL", "--format", "text")
    first, second = hz(cli, project, *args), hz(cli, project, *args)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == "[VAL]\n1 null\ntrue [false]\n\n"
    assert second.stdout == first.stdout


def test_unbounded_work_is_refused_at_its_line(cli: Cli, project: Path) -> None:
    text = DATA_CONTRACT.replace("[{{ inputs.items }}]", "{{ inputs.items | indent(1000000000) }}")
    (project / "data.yaml").write_text(text, encoding="utf-8")
    done = hz(cli, project, "render", "data.yaml", "--input", "items=x")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "data.yaml:16:3: error: prompt: refused by the template sandbox: the indent filter's "
        "argument 1,000,000,000 is larger than 100,000 [HZ708]\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )


def test_render_uses_the_child_started_early_and_leaves_none(
    cli: Cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hz.compiler.render.bound as bound

    spawned: list[int] = []
    early: list[int] = []
    spawn, start_early = bound._spawn, bound.start_early

    def recorded() -> Any:
        child = spawn()
        spawned.append(child.proc.pid)
        return child

    def started_early() -> None:
        start_early()
        early.append(spawned[-1])

    monkeypatch.setattr(bound, "_spawn", recorded)
    monkeypatch.setattr(bound, "start_early", started_early)
    shown = hz(cli, project, "render", "greet.yaml", "--input", "who=Ada", "--input", "times=1")
    assert (shown.returncode, json.loads(shown.stdout)["prompt"]) == (0, "Hello Ada!\n\n")
    assert spawned == early  # started early, and the render used it: no second child
    # A contract with errors renders nothing: the child started early is killed unused.
    (project / "bad.yaml").write_text("hz: {}\n", encoding="utf-8")
    failed = hz(cli, project, "render", "bad.yaml")
    assert failed.returncode == 1
    assert spawned == early
    assert len(early) == 2
    assert bound._early == []
    assert is_gone(spawned[1])


def test_render_survives_the_child_started_early_being_killed(
    cli: Cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed while hz validated and compiled (the OOM killer under other pressure, an
    # operator): a fresh child renders; no "needs more than 512 MiB" against the contract.
    import os
    import signal

    import hz.compiler.render.bound as bound

    killed: list[int] = []
    start_early = bound.start_early

    def started_and_killed() -> None:
        start_early()
        [early] = bound._early
        assert early.proc is not None
        os.kill(early.proc.pid, signal.SIGKILL)
        killed.append(early.proc.pid)
        assert is_gone(early.proc.pid)

    monkeypatch.setattr(bound, "start_early", started_and_killed)
    shown = hz(cli, project, "render", "greet.yaml", "--input", "who=Ada", "--input", "times=1")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert json.loads(shown.stdout)["prompt"] == "Hello Ada!\n\n"
    assert len(killed) == 1
    assert bound._early == []

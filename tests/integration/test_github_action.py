"""The GitHub Action's script (``python -m hz.ci.github``) run as a real process against a fake
GitHub environment (an outputs file, a summary file): a matrix of three jobs through the command
runner and the fake agent, and a contract error reported as an annotation."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import yaml

from hz.ci.github import JobRun, annotation, markdown_text, output_block

# Coverage measures the children (`child_coverage`) of the tests whose children alone reach
# some lines; the others' children run code that in-process tests reach.

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")

CONTRACTS = {
    "digest": """\
hz:
  contract: 1
  name: digest
  timeout: 30s
  agent:
    tools: [Read]
    max_usd: 0.5
  inputs:
    body:
      schema: {type: string}
contract: Summarise.
prompt: "Digest: {{ inputs.body }}"
""",
    "triage": """\
hz:
  contract: 1
  name: triage
  timeout: 1m
  agent:
    max_usd: 0.25
  inputs:
    answer:
      schema: {type: object}
  output:
    format: json
    schema:
      type: object
      required: [kind]
      properties:
        kind: {enum: [bug, feature]}
contract: Answer in JSON.
prompt: "{{ inputs.answer | tojson }}"
""",
    "broken": """\
hz:
  contract: 1
  name: broken
  timeout: 30s
  agent:
    max_usd: 0.25
  output:
    format: json
contract: Answer in JSON.
prompt: "not | <b>json</b>"
""",
}
#: A value that would break a naive ``name=value`` or a fixed ``EOF`` delimiter, and Markdown.
HOSTILE = "a | b <b>x</b> $1 @here\nEOF\nghadelimiter_0\n"


def parse_github_output(text: str) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` read the way the Actions runner reads it: ``NAME=VALUE`` lines and
    ``NAME<<DELIMITER`` blocks that end at a line equal to the delimiter."""
    values: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block: list[str] = []
            for body in lines:
                if body == delimiter:
                    break
                block.append(body)
            else:
                raise AssertionError(f"no end delimiter for {name}")
            values[name] = "\n".join(block)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def github_env(tmp_path: Path) -> dict[str, str]:
    command = [sys.executable, AGENT, "echo", "--prompt-file={prompt_file}"]
    command.append("--contract-file={contract_file}")
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\n"
        'command_enforces_read_only = true\ncommand_read_only_tools = ["Read"]\n'
    )
    (tmp_path / "outputs").write_text("")
    (tmp_path / "summary").write_text("")
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HZ_CONFIG": str(tmp_path / "operator.toml"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "outputs"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "GITHUB_REPOSITORY": "org/repo",
        "GITHUB_RUN_ID": "8123456789",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": "contracts",
    }


def action(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hz.ci.github", *args],
        cwd=tmp_path / "repo",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def compiled_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository with its jobs compiled, made once per module: compiling is the same for
    every test (the jobs hold no path of the checkout), and a real ``hz compile`` costs about
    a CPU-second under coverage."""
    root = tmp_path_factory.mktemp("compiled") / "repo"
    (root / "contracts").mkdir(parents=True)
    (root / "inputs").mkdir()
    for name, text in CONTRACTS.items():
        (root / "contracts" / f"{name}.yaml").write_text(text)
    (root / "inputs" / "digest.json").write_text(json.dumps({"body": HOSTILE}))
    (root / "inputs" / "triage.yaml").write_text("answer: {kind: bug}\n")
    # Made before the test's isolated HOME: no configuration of the developer's shell.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HZ_", "XDG_"))}
    env.update(
        PYTHONPATH=str(REPO),
        HOME=str(root.parent),
        HZ_SITE_CONFIG=str(root.parent / "no-site-config.toml"),
    )
    subprocess.run(
        [sys.executable, "-m", "hz", "compile", "contracts", "--out", "build/jobs"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    return root


@pytest.fixture
def repo(tmp_path: Path, compiled_repo: Path) -> Path:
    """A copy of the compiled repository the test may change."""
    return Path(shutil.copytree(compiled_repo, tmp_path / "repo", symlinks=True))


def test_a_matrix_of_three_jobs(tmp_path: Path, repo: Path, hz_argv: list[str]) -> None:
    env = github_env(tmp_path)
    done = action(
        tmp_path,
        env,
        *("--run", "digest triage\nbroken", "--inputs-dir", "inputs"),
        *("--receipt-dir", "../results/receipts", "--drafts-dir", "../results/drafts"),
    )
    assert done.returncode == 1, done.stderr
    assert [line for line in done.stdout.splitlines() if not line.startswith("::group::")] == [
        "::endgroup::",
        "::endgroup::",
        "::endgroup::",
        "::error title=hz run broken::broken: failed (schema_invalid): the draft is not valid "
        "JSON: Expecting value at line 1 column 1",
    ]
    assert re.fullmatch(
        r"::group::hz run build/jobs/digest\.job\.json --format json --workdir \. "
        r"--receipt-dir \.\./results/receipts --request-key "
        r"github:8123456789\.1:contracts:digest:[0-9a-f]{16} --inputs inputs/digest\.json",
        done.stdout.splitlines()[0],
    )

    outputs = parse_github_output((tmp_path / "outputs").read_text())
    drafts = "../results/drafts"
    assert {k: v for k, v in outputs.items() if k != "results"} == {
        "digest-status": "completed",
        "digest-draft": f"{drafts}/digest.md",
        "digest-structured-output": "null",
        "triage-status": "completed",
        "triage-draft": f"{drafts}/triage.json",
        "triage-structured-output": '{"kind": "bug"}',
        "broken-status": "failed",
        "broken-draft": f"{drafts}/broken.json",
        "broken-structured-output": "null",
    }
    results = json.loads(outputs["results"])
    assert {
        name: (r["status"], r["failure_kind"], r["exit_code"]) for name, r in results.items()
    } == {
        "digest": ("completed", None, 0),
        "triage": ("completed", None, 0),
        "broken": ("failed", "schema_invalid", 4),
    }
    assert results["triage"]["structured_output"] == {"kind": "bug"}
    assert (repo / drafts / "digest.md").read_text() == f"Digest: {HOSTILE}"

    summary = re.sub(r"\| \d+\.\d s \|", "| D s |", (tmp_path / "summary").read_text())
    unenforced = r"\(not enforced\)\, tools \(not enforced\)\, turns \(not enforced\)"
    assert summary == (
        "### hz\n\n"
        "| job | status | cost | duration | tool calls | limits |\n"
        "|---|---|---|---|---|---|\n"
        rf"| digest | completed | — | D s | 0 | timeout 30 s\, budget \$0\.50 {unenforced} |"
        "\n"
        rf"| triage | completed | — | D s | 0 | timeout 60 s\, budget \$0\.25 {unenforced} |"
        "\n"
        r"| broken | failed \(schema\_invalid\)\: the draft is not valid JSON\: Expecting value "
        rf"at line 1 column 1 | — | D s | 0 | timeout 30 s\, budget \$0\.25 {unenforced} |"
        "\n"
    )

    receipts = tmp_path / "results" / "receipts"
    assert sorted(p.name for p in receipts.glob("*.json")) == [
        "000001-digest.json",
        "000002-triage.json",
        "000003-broken.json",
    ]
    assert sorted(p.name for p in receipts.glob("*.jsonl")) == [
        "000001-digest.transcript.jsonl",
        "000002-triage.transcript.jsonl",
        "000003-broken.transcript.jsonl",
    ]
    verified = subprocess.run(
        [*hz_argv, "receipts", "verify", str(receipts)], env=env, capture_output=True, check=False
    )
    assert verified.returncode == 0


def test_the_actions_own_step_passes_its_inputs_to_the_script(tmp_path: Path, repo: Path) -> None:
    """The bash of action.yml's ``hz`` step, run as the Actions runner runs a ``shell: bash``
    step: its ``env`` from the action's inputs, ``RUNNER_TEMP`` holding the venv the install
    step made (here a stand-in for its python), the operator configuration as the ``config``
    input's TOML text."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    step = next(step for step in action["runs"]["steps"] if step.get("id") == "hz")
    env = github_env(tmp_path)
    given = {
        "run": "digest triage\nbroken",
        "inputs-dir": "inputs",
        "config": Path(env.pop("HZ_CONFIG")).read_text(),
    }
    inputs = {
        name: given.get(name, spec.get("default", "")) for name, spec in action["inputs"].items()
    }
    for name, value in step["env"].items():
        expression = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value)
        assert expression is not None, name
        env[name] = inputs[expression[1]]
    temp = tmp_path / "runner-temp"
    (temp / "hz-venv" / "bin").mkdir(parents=True)
    python = temp / "hz-venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    env["RUNNER_TEMP"] = str(temp)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    outputs = parse_github_output((tmp_path / "outputs").read_text())
    results = temp / "hz-results"
    assert [
        (outputs[f"{n}-status"], outputs[f"{n}-draft"]) for n in ("digest", "triage", "broken")
    ] == [
        ("completed", f"{results}/drafts/digest.md"),
        ("completed", f"{results}/drafts/triage.json"),
        ("failed", f"{results}/drafts/broken.json"),
    ]
    # The configuration the input gave bound the command runner (it enforces no budget).
    assert "| digest | completed | — |" in (tmp_path / "summary").read_text()
    assert r"budget \$0\.50 \(not enforced\)" in (tmp_path / "summary").read_text()
    # The uploaded directory: the receipts with their transcripts, and the drafts.
    assert (results / "receipts" / ".lock").is_file()
    assert uploaded(action, temp) == [
        "drafts/broken.json",
        "drafts/digest.md",
        "drafts/triage.json",
        "receipts/000001-digest.json",
        "receipts/000001-digest.transcript.jsonl",
        "receipts/000002-triage.json",
        "receipts/000002-triage.transcript.jsonl",
        "receipts/000003-broken.json",
        "receipts/000003-broken.transcript.jsonl",
    ]


def uploaded(action: dict[str, Any], temp: Path) -> list[str]:
    """The files the action's upload step takes from ``temp`` (its ``runner.temp``): every
    file under each ``path`` line, less those an ``!`` line excludes."""
    step = next(
        step
        for step in action["runs"]["steps"]
        if step.get("uses", "").startswith("actions/upload-artifact@")
    )
    lines = [
        line.strip().replace("${{ runner.temp }}", str(temp))
        for line in step["with"]["path"].splitlines()
        if line.strip()
    ]
    (root,) = [Path(line) for line in lines if not line.startswith("!")]
    excluded = [line[1:] for line in lines if line.startswith("!")]
    files = [p for p in root.rglob("*") if p.is_file()]
    return sorted(
        str(p.relative_to(root)) for p in files if not any(fnmatch(str(p), x) for x in excluded)
    )


def test_one_job_also_sets_the_plain_outputs(tmp_path: Path, repo: Path) -> None:
    env = github_env(tmp_path)
    done = action(tmp_path, env, "--run", "triage", "--inputs-dir", "inputs", "--drafts-dir", "d")
    assert done.returncode == 0, done.stderr
    outputs = parse_github_output((tmp_path / "outputs").read_text())
    assert (outputs["status"], outputs["draft"], outputs["structured_output"]) == (
        "completed",
        "d/triage.json",
        '{"kind": "bug"}',
    )


@pytest.mark.child_coverage
def test_a_step_delivered_again_starts_nothing_and_a_new_attempt_runs_again(
    tmp_path: Path, repo: Path, hz_argv: list[str]
) -> None:
    """The ledger persists on a self-hosted runner (here the test's HOME): the same step of
    the same attempt, delivered again, reports the run it started before and starts nothing;
    "Re-run jobs" (a new attempt) runs the job again; another matrix leg's inputs are another
    request."""
    args = ("--run", "triage", "--inputs-dir", "inputs", "--drafts-dir", "d")
    deliveries = [("1", "answer: {kind: bug}\n"), ("1", None), ("2", None)]
    deliveries.append(("2", "answer: {kind: feature}\n"))  # a matrix leg: other inputs
    shown = []
    for attempt, inputs in deliveries:
        if inputs is not None:
            (repo / "inputs" / "triage.yaml").write_text(inputs)
        env = {**github_env(tmp_path), "GITHUB_RUN_ATTEMPT": attempt}
        done = action(tmp_path, env, *args)
        assert done.returncode == 0, (attempt, done.stdout, done.stderr)
        outputs = parse_github_output((tmp_path / "outputs").read_text())
        results = json.loads(outputs["results"])
        shown.append(
            (outputs["status"], outputs["structured_output"], results["triage"]["exit_code"])
        )
    assert shown == [
        ("completed", '{"kind": "bug"}', 0),
        ("completed", '{"kind": "bug"}', 0),
        ("completed", '{"kind": "bug"}', 0),
        ("completed", '{"kind": "feature"}', 0),
    ]
    listed = subprocess.run(
        [*hz_argv, "runs", "list", "--format", "json"],
        env={**github_env(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    keys = [run["request_key"] for run in reversed(json.loads(listed.stdout)["runs"])]
    assert len(keys) == len(set(keys)) == 3  # attempt 1, attempt 2, the other leg
    assert [key.split(":")[:4] for key in keys] == [
        ["github", "8123456789.1", "contracts", "triage"],
        ["github", "8123456789.2", "contracts", "triage"],
        ["github", "8123456789.2", "contracts", "triage"],
    ]


@pytest.mark.child_coverage
def test_a_job_hz_could_not_run_is_reported_by_its_first_error(tmp_path: Path, repo: Path) -> None:
    (repo / "inputs" / "digest.json").write_text('{"body": 5, "extra": 1}')
    done = action(tmp_path, github_env(tmp_path), "--run", "digest", "--inputs-dir", "inputs")
    assert done.returncode == 1
    error = (
        "digest: inputs/digest.json:1:10: error: input 'body': expected a string, got an "
        "integer (5) [HZ702] (and 1 more error)"
    )
    assert done.stdout.splitlines()[-1] == f"::error title=hz run digest::{error}"
    outputs = parse_github_output((tmp_path / "outputs").read_text())
    assert (outputs["status"], json.loads(outputs["results"])["digest"]["reason"]) == (
        "error",
        error.removeprefix("digest: "),
    )
    assert (
        (tmp_path / "summary")
        .read_text()
        .splitlines()[-1]
        .startswith(r"| digest | inputs\/digest\.json\:1\:10\: error\: input \'body\'")
    )


@pytest.mark.child_coverage
def test_a_contract_error_is_an_annotation_and_nothing_runs(tmp_path: Path, repo: Path) -> None:
    (repo / "contracts" / "digest.yaml").write_text(
        CONTRACTS["digest"].replace("max_usd: 0.5", 'max_usd: "0.5"')
    )
    env = github_env(tmp_path)
    done = action(tmp_path, env, "--run", "all")
    assert done.returncode == 1
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(annotations) == 1
    assert annotations[0].startswith("::error file=contracts/digest.yaml,line=7,col=14,")
    # Written all the same, as docs/ci-github.md says: every job asked for, not run, and why.
    outputs = parse_github_output((tmp_path / "outputs").read_text())
    reason = "not run: the contracts have errors (hz validate)"
    assert {name: outputs[f"{name}-status"] for name in ("broken", "digest", "triage")} == {
        "broken": "error",
        "digest": "error",
        "triage": "error",
    }
    assert json.loads(outputs["results"])["digest"] == {
        "status": "error",
        "failure_kind": None,
        "reason": reason,
        "exit_code": None,
        "draft": None,
        "structured_output": None,
        "cost_usd": None,
        "duration_seconds": None,
    }
    summary = (tmp_path / "summary").read_text().splitlines()
    assert summary[:3] == [
        "### hz",
        "",
        r"The contracts have errors \(hz validate\)\: nothing ran\. Each problem is an "
        r"annotation\.",
    ]
    assert summary[-1] == (
        r"| triage | not run\: the contracts have errors \(hz validate\) | — | — | — | — |"
    )


@pytest.mark.child_coverage
@pytest.mark.parametrize("readme", [False, True], ids=["empty", "only-readme"])
def test_a_contracts_folder_without_contracts_fails(tmp_path: Path, readme: bool) -> None:
    """Nothing to check is a failure, not a green check of nothing."""
    (tmp_path / "repo" / "contracts").mkdir(parents=True)
    if readme:
        (tmp_path / "repo" / "contracts" / "README.md").write_text("# Our contracts\n")
    done = action(tmp_path, github_env(tmp_path))
    assert done.returncode == 1
    assert done.stdout == (
        "::error file=contracts,title=HZ014::no contracts found in contracts (looked for "
        "*.yaml, *.yml, *.md with an hz: frontmatter)%0Ahint: name the directory that holds "
        "the contracts, or add one (hz init)\n"
    )
    summary = (tmp_path / "summary").read_text().splitlines()
    assert summary[2] == (
        r"The contracts have errors \(hz validate\)\: nothing ran\. Each problem is an "
        r"annotation\."
    )


def test_stale_jobs_fail_the_check(tmp_path: Path, repo: Path) -> None:
    (repo / "build" / "jobs" / "digest.job.json").unlink()
    done = action(tmp_path, github_env(tmp_path), "--run", "digest")
    assert done.returncode == 1
    assert done.stdout == (
        "::error file=contracts/digest.yaml,title=HZ603::job build/jobs/digest.job.json is "
        "missing%0Ahint: run the same hz compile command without --check and commit the result\n"
    )
    outputs = parse_github_output((tmp_path / "outputs").read_text())
    assert (outputs["status"], outputs["draft"], outputs["structured_output"]) == (
        "error",
        "",
        "null",
    )
    assert json.loads(outputs["results"])["digest"]["reason"] == (
        "not run: the compiled jobs in build/jobs are not current (hz compile --check)"
    )
    assert (tmp_path / "summary").read_text() == (
        "### hz\n\n"
        r"The compiled jobs in build\/jobs are not current \(hz compile \-\-check\)\: nothing "
        r"ran\. Each problem is an annotation\. Compile them with "
        "`hz compile contracts --out build/jobs` and commit `build/jobs`.\n\n"
        "| job | status | cost | duration | tool calls | limits |\n"
        "|---|---|---|---|---|---|\n"
        r"| digest | not run\: the compiled jobs in build\/jobs are not current \(hz compile "
        r"\-\-check\) | — | — | — | — |"
        "\n"
    )


def test_a_first_pull_request_without_committed_jobs_says_to_commit_them(
    tmp_path: Path, repo: Path
) -> None:
    """The pull-request check of docs/ci-github.md (no `run`) in a repository whose jobs were
    never committed: every job is missing, and the summary says how to fix it."""
    shutil.rmtree(repo / "build")
    env = github_env(tmp_path)
    done = action(tmp_path, env, "--contracts", "contracts/digest.yaml contracts/triage.yaml")
    assert done.returncode == 1
    assert [line.split("::")[1] for line in done.stdout.splitlines()] == [
        "error file=contracts/digest.yaml,title=HZ603",
        "error file=contracts/triage.yaml,title=HZ603",
    ]
    assert parse_github_output((tmp_path / "outputs").read_text()) == {"results": "{}"}
    assert (tmp_path / "summary").read_text() == (
        "### hz\n\n"
        r"The compiled jobs in build\/jobs are not current \(hz compile \-\-check\)\: nothing "
        r"ran\. Each problem is an annotation\. Compile them with "
        "`hz compile contracts/digest.yaml contracts/triage.yaml --out build/jobs` and commit "
        "`build/jobs`.\n\n"
    )


@pytest.mark.child_coverage
def test_a_jobs_dir_that_could_end_a_code_span_is_escaped_in_the_summary(
    tmp_path: Path, repo: Path
) -> None:
    done = action(tmp_path, github_env(tmp_path), "--jobs-dir", "out`<b>x</b>")
    assert done.returncode == 1
    note = (tmp_path / "summary").read_text().splitlines()[2]
    assert note.endswith(
        r"Compile them with hz compile contracts \-\-out out\`\<b\>x\<\/b\> and commit "
        r"out\`\<b\>x\<\/b\>."
    )


@pytest.mark.child_coverage
def test_a_passing_check_says_what_it_checked(tmp_path: Path, repo: Path) -> None:
    done = action(tmp_path, github_env(tmp_path))
    assert (done.returncode, done.stdout) == (0, "")
    assert parse_github_output((tmp_path / "outputs").read_text()) == {"results": "{}"}
    assert (tmp_path / "summary").read_text() == (
        r"### hz"
        "\n\n"
        r"The contracts are valid\; the compiled jobs in build\/jobs are current\."
        "\n\n"
    )


def test_an_unknown_job_name_is_a_usage_error(tmp_path: Path, repo: Path) -> None:
    done = action(tmp_path, github_env(tmp_path), "--run", "digest nope")
    assert done.returncode == 2
    assert done.stdout.splitlines()[-1] == (
        "::error title=hz action::no compiled job named nope in build/jobs "
        "(there are: broken, digest, triage)"
    )


@pytest.mark.parametrize(
    "value", ["", "one line", "two\nlines\n", "EOF\nghadelimiter_x\n", "name=value\r\n"]
)
def test_output_blocks_round_trip(value: str) -> None:
    assert parse_github_output(output_block("draft", value)) == {"draft": value}


def test_markdown_text_renders_as_the_characters() -> None:
    assert markdown_text("a|b <i>x</i> $1 & @me `c` [l](u)\n2. next") == (
        r"a\|b \<i\>x\<\/i\> \$1 \& \@me \`c\` \[l\]\(u\) 2\. next"
    )


@pytest.mark.child_coverage
def test_the_script_in_process(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same script called as a function (its children are still real hz processes)."""
    from hz.ci.github import main

    for name, value in github_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(repo)
    code = main(
        ["--run", "all", "--inputs-dir", "inputs", "--compile", "write", "--drafts-dir", "d"]
    )
    assert code == 1
    outputs = parse_github_output((tmp_path / "outputs").read_text())
    assert [outputs[f"{n}-status"] for n in ("broken", "digest", "triage")] == [
        "failed",
        "completed",
        "completed",
    ]
    assert "status" not in outputs
    assert capsys.readouterr().out.splitlines()[-1].startswith("::error title=hz run broken::")
    assert main(["--contracts", " ", "--run", "digest"]) == 2
    assert main(["--run", "nope"]) == 2


@pytest.mark.child_coverage
def test_a_draft_replaces_a_planted_link_and_never_writes_through_it(
    tmp_path: Path, repo: Path
) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("original\n")
    (repo / "d").mkdir()
    (repo / "d" / "digest.md").symlink_to(victim)
    args = ("--run", "digest", "--inputs-dir", "inputs", "--drafts-dir", "d")
    done = action(tmp_path, github_env(tmp_path), *args)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "original\n"
    assert not (repo / "d" / "digest.md").is_symlink()
    assert (repo / "d" / "digest.md").read_text() == f"Digest: {HOSTILE}"

    (repo / "d").rename(repo / "old")
    (repo / "d").symlink_to(tmp_path)
    done = action(tmp_path, github_env(tmp_path), *args)
    assert done.returncode == 2
    assert done.stdout.splitlines()[-1] == (
        "::error title=hz action::--drafts-dir d is a symbolic link that leads out of "
        f"{repo} (to {tmp_path})"
    )


@pytest.mark.child_coverage
def test_the_agents_stderr_cannot_issue_workflow_commands(tmp_path: Path, repo: Path) -> None:
    env = github_env(tmp_path)
    command = [sys.executable, AGENT, "fail", "--contract-file={contract_file}", "--code", "1"]
    command += ["--stderr", "::add-mask::hz\n  ::warning::injected\n::stop-commands::x"]
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\n"
        'command_enforces_read_only = true\ncommand_read_only_tools = ["Read"]\n'
    )
    done = action(tmp_path, env, "--run", "digest", "--inputs-dir", "inputs")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("::stop-commands::")))
    token = lines[start].removeprefix("::stop-commands::")
    assert re.fullmatch("[0-9a-f]{32}", token)
    assert lines[start + 1 :] == [
        "hz: failed (runtime_error): the command exited with code 1 · runner command · "
        + lines[start + 1].split(" · runner command · ", 1)[1],
        "  the agent's stderr, last lines:",
        # hz run escapes them itself too (run directly in a workflow, no wrapper to stop them).
        "    \\x3a:add-mask::hz",
        "      \\x3a:warning::injected",
        "    \\x3a:stop-commands::x",
        f"::{token}::",
    ]


def test_an_annotation_escapes_the_reason_the_agent_relayed() -> None:
    result = {"status": "failed", "failure_kind": "runtime_error", "reason": "e\x1b]0;t\x07\nx%"}
    run = JobRun("digest", 4, result, {}, None)
    assert annotation(run) == (
        "::error title=hz run digest::digest: failed (runtime_error): e\\x1b]0;t\\x07\\nx%25"
    )


@pytest.mark.child_coverage
@pytest.mark.parametrize(("plan", "status"), [("true", 0), ("100", 0), ("50", 1)])
def test_the_plan_step_prints_the_forecast_in_the_summary(
    tmp_path: Path, hz_argv: list[str], plan: str, status: int
) -> None:
    """action.yml's ``plan`` step, run as the Actions runner runs it: the forecast of the
    scheduled jobs as Markdown in the step summary; with a number, the step fails over it."""
    from tests.helpers.chains import chained, write_project

    root = tmp_path / "repo"
    write_project(root, {"nightly": chained("nightly", schedule='"0 2 * * *"', max_usd=2)})
    env = github_env(tmp_path)
    subprocess.run(
        [*hz_argv, "compile", "contracts", "--out", "build/jobs"], cwd=root, env=env, check=True
    )
    spec = yaml.safe_load((REPO / "action.yml").read_text())
    step = next(step for step in spec["runs"]["steps"] if step.get("id") == "plan")
    given = {"plan": plan, "config": "[system.budget]\nmax_usd_per_day = 3\n"}
    inputs = {name: given.get(name, s.get("default", "")) for name, s in spec["inputs"].items()}
    for name, value in step["env"].items():
        expression = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value)
        assert expression is not None, name
        env[name] = inputs[expression[1]]
    temp = tmp_path / "runner-temp"
    (temp / "hz-venv" / "bin").mkdir(parents=True)
    python = temp / "hz-venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    env["RUNNER_TEMP"] = str(temp)
    env["HZ_STATE_DIR"] = str(tmp_path / "state")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == status, done.stderr
    summary = (tmp_path / "summary").read_text()
    # 30 nightly slots at $2.00 whatever the hour: the ceiling is $60.00.
    assert "| nightly | 30 | \\$2.00 | \\$60.00 | - | - |\n" in summary
    assert "Budget ([system.budget] max_usd_per_day x 30): \\$90.00.\n" in summary
    if plan != "true":
        word = "within" if status == 0 else "over"
        assert f"The ceiling is {word} --fail-over \\${plan}.00.\n" in summary

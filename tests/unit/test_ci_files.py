"""The files CI systems read: the action and the workflows are valid for GitHub (the schemas
check-jsonschema ships), the action passes only options its script has, the guides' workflows
are valid for GitHub and GitLab and give the action only its inputs, and the installation page
pins the agent CLIs that CI tests."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from hz.ci.github import _parser
from tests.conftest import AGENT_CLIS

REPO = Path(__file__).resolve().parents[2]


def check_jsonschema(builtin: str, *files: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", builtin]
    return subprocess.run([*argv, *map(str, files)], capture_output=True, text=True, check=False)


def test_the_action_is_a_valid_github_action() -> None:
    done = check_jsonschema("vendor.github-actions", REPO / "action.yml")
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")


def test_the_workflows_are_valid_github_workflows() -> None:
    workflows = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    assert [w.name for w in workflows] == ["ci.yml", "release.yml"]
    done = check_jsonschema("vendor.github-workflows", *workflows)
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")


def test_ci_runs_the_readmes_make_test_on_every_push_and_pull_request() -> None:
    """The README says `make test` is what CI runs: ci.yml runs `.ci/run`, which ends in it, in
    the Debian container as root the tests are written for, with the Node.js the pinned Claude
    Code needs."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    # PyYAML reads the key `on` as YAML 1.1's true.
    assert workflow[True] == {"push": {"branches": ["main"]}, "pull_request": None}
    (job,) = workflow["jobs"].values()
    # Privileged: the run ledger's disk-full tests mount a small tmpfs (tests/helpers/faults.py).
    assert job["container"] == {"image": "python:3.11-bookworm", "options": "--privileged"}
    assert [step.get("uses") or step["run"] for step in job["steps"]] == [
        "actions/checkout@v4",
        "actions/setup-node@v4",
        ".ci/run",
    ]
    assert job["steps"][1]["with"] == {"node-version": "22"}
    assert (REPO / ".ci" / "run").read_text().splitlines()[-1] == "exec make test"
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    installs = [line for line in lines if line.startswith(".ci/install")]
    assert installs == [".ci/install-debian"]
    readme = (REPO / "README.md").read_text()
    assert "`make test` is exactly what CI runs (`.ci/run`" in readme


def test_the_action_passes_only_options_of_its_script() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    script = next(step["run"] for step in action["runs"]["steps"] if step.get("id") == "hz")
    passed = set(re.findall(r"(--[a-z-]+) ", script))
    known = {o for a in _parser()._actions for o in a.option_strings if o.startswith("--")}
    assert passed == known - {"--help"}
    # Every input the script reads is declared.
    used = set(re.findall(r"inputs\.([a-z-]+)", (REPO / "action.yml").read_text()))
    assert used == set(action["inputs"])


def test_install_page_pins_the_agent_clis_that_ci_tests() -> None:
    script = (REPO / ".ci" / "install-agent-clis").read_text()
    pins = re.findall(r'"(@[a-z-]+/[a-z-]+@[0-9.]+)"', script)
    assert pins == ["@anthropic-ai/claude-code@2.1.332", "@openai/codex@0.171.0"]
    page = (REPO / "docs" / "install.md").read_text()
    assert [f"npm install -g {pin}" in page for pin in pins] == [True, True]


def test_install_page_asks_for_the_node_the_pinned_claude_code_declares() -> None:
    """Claude Code 2.1.332 declares ``"engines": {"node": ">=22.0.0"}``: the page, the README and
    the installer's message ask for that Node.js (npm only warns about an older one)."""
    package = AGENT_CLIS / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    engines = json.loads(package.read_text())["engines"]
    assert engines == {"node": ">=22.0.0"}
    page = (REPO / "docs" / "install.md").read_text()
    assert "They need **Node.js 22 or newer**" in page
    assert "Node.js ≥ 22 and npm only for the test suite" in (REPO / "README.md").read_text()
    assert "install Node.js 22 or newer" in (REPO / ".ci" / "install-agent-clis").read_text()


def _yaml_blocks(page: str, directory: Path) -> list[Path]:
    """The page's ```yaml blocks, each written to a file of its own."""
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs" / page).read_text(), re.S)
    files = []
    for i, block in enumerate(blocks):
        files.append(directory / f"{page}.{i}.yml")
        files[-1].write_text(block)
    return files


def test_every_workflow_in_the_docs_is_a_valid_github_workflow(tmp_path: Path) -> None:
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md") if p.name != "ci-gitlab.md")
    # A workflow by its text: a page's bad examples (docs/rules.md) need not be YAML at all.
    workflows = [
        block
        for page in pages
        for block in _yaml_blocks(page, tmp_path)
        if re.search(r"^jobs:$", block.read_text(), re.M) and "runs-on:" in block.read_text()
    ]
    assert sorted({w.name.split(".md.")[0] for w in workflows}) == ["ci-github", "compiling"]
    done = check_jsonschema("vendor.github-workflows", *workflows)
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")


def test_the_run_a_job_example_makes_the_inputs_folder_it_writes(tmp_path: Path) -> None:
    """Its export step, run as the Actions runner would in a fresh checkout (the export script
    a stand-in): the folder the action reads the inputs from exists afterwards."""
    workflow = yaml.safe_load(_yaml_blocks("ci-github.md", tmp_path)[1].read_text())
    steps = workflow["jobs"]["digest"]["steps"]
    export = next(step for step in steps if step.get("name") == "Export the week's input values")
    action = next(step for step in steps if step.get("uses", "").startswith("your-org/hz@"))
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / "scripts" / "export-merged-prs").write_text("#!/bin/sh\necho '{\"merged\": []}'\n")
    (checkout / "scripts" / "export-merged-prs").chmod(0o755)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", export["run"]],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    written = checkout / action["with"]["inputs-dir"] / f"{action['with']['run']}.json"
    assert json.loads(written.read_text()) == {"merged": []}


def test_the_github_guides_workflows_are_valid_and_use_the_actions_inputs(tmp_path: Path) -> None:
    workflows = _yaml_blocks("ci-github.md", tmp_path)
    assert len(workflows) == 3
    done = check_jsonschema("vendor.github-workflows", *workflows)
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")
    inputs = set(yaml.safe_load((REPO / "action.yml").read_text())["inputs"])
    given = {
        key
        for workflow in workflows
        for job in yaml.safe_load(workflow.read_text())["jobs"].values()
        for step in job["steps"]
        if step.get("uses", "").startswith("your-org/hz@")
        for key in step.get("with", {})
    }
    assert given - inputs == set()
    assert given == {
        "contracts",
        "jobs-dir",
        "run",
        "inputs-dir",
        "runner",
        "config",
        "artifact-name",
    }


def test_the_gitlab_recipe_is_valid_gitlab_ci(tmp_path: Path) -> None:
    [recipe] = _yaml_blocks("ci-gitlab.md", tmp_path)
    done = check_jsonschema("vendor.gitlab-ci", recipe)
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")

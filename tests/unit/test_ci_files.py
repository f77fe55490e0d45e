"""The files CI systems read: the action and the workflows are valid for GitHub (the schemas
check-jsonschema ships), the action passes only options its script has, and the installation
page pins the agent CLIs that CI tests."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from hz.ci.github import _parser

REPO = Path(__file__).resolve().parents[2]


def check_jsonschema(builtin: str, *files: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", builtin]
    return subprocess.run([*argv, *map(str, files)], capture_output=True, text=True, check=False)


def test_the_action_is_a_valid_github_action() -> None:
    done = check_jsonschema("vendor.github-actions", REPO / "action.yml")
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")


def test_the_workflows_are_valid_github_workflows() -> None:
    workflows = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    assert [w.name for w in workflows] == ["release.yml"]
    done = check_jsonschema("vendor.github-workflows", *workflows)
    assert (done.returncode, done.stdout) == (0, "ok -- validation done\n")


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

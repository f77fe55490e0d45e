"""The operator side of providers, as a user meets it: a project ``hz.toml`` may neither bind
a capability nor configure a provider (HZ801), the ``HZ_PROVIDERS_<NAME>__KEY`` and
``HZ_CAPABILITIES__…`` variables, an unknown key or provider with a did-you-mean, and a plugin
whose module fails to import (only the inputs bound to it fail)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hz.runtime.providers import registry
from tests.conftest import Cli

CASES = Path(__file__).resolve().parents[1] / "cases"
HINT = (
    "  hint: execution is configured by the operator: the site or user configuration file, "
    "HZ_CONFIG or HZ_* variables\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    shutil.copy(CASES / "valid" / "read-inputs.yaml", tmp_path / "r.yaml")
    return tmp_path


def test_a_project_file_binds_no_capability_and_configures_no_provider(
    cli: Cli, project: Path
) -> None:
    (project / "hz.toml").write_text(
        '[capabilities]\ncode-host = "github"\n\n[providers.github]\ntoken_env = "MY_TOKEN"\n'
    )
    hz_toml = project / "hz.toml"
    expected = (
        f"{hz_toml}:2:1: error: 'capabilities.code-host' configures execution and is not "
        "allowed in a project hz.toml [HZ801]\n" + HINT + f"{hz_toml}:5:1: error: "
        "'providers.github.token_env' configures execution and is not allowed in a project "
        "hz.toml [HZ801]\n" + HINT
    )
    validated = cli("validate", "r.yaml", cwd=project)
    assert (validated.returncode, validated.stdout) == (1, expected)
    # Nothing is fetched through what a repository names: render refuses before fetching.
    rendered = cli("render", "r.yaml", "--fetch", cwd=project)
    assert rendered.returncode == 1
    assert rendered.stderr.startswith(expected)


def test_environment_variables_bind_and_configure_providers(cli: Cli, tmp_path: Path) -> None:
    env = {
        "HZ_CAPABILITIES__CODE_HOST": "github",
        "HZ_CAPABILITIES__TRACKER": "github",
        "HZ_PROVIDERS_GITHUB__TOKEN_ENV": "MY_TOKEN",
        "HZ_PROVIDERS_GITHUB__REPOSITORIES": '["acme/*"]',
    }
    done = cli("config", "show", "--format", "json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    import json

    shown = json.loads(done.stdout)
    values = {
        (s["table"], s["key"]): (s["value"], f"{s['layer']} {s['where']}")
        for s in shown["settings"]
        if s["table"] in ("capabilities", "providers.github") and s["layer"] != "default"
    }
    assert values == {
        ("capabilities", "code-host"): ("github", "environment HZ_CAPABILITIES__CODE_HOST"),
        ("capabilities", "tracker"): ("github", "environment HZ_CAPABILITIES__TRACKER"),
        ("providers.github", "token_env"): (
            "MY_TOKEN",
            "environment HZ_PROVIDERS_GITHUB__TOKEN_ENV",
        ),
        ("providers.github", "repositories"): (
            ["acme/*"],
            "environment HZ_PROVIDERS_GITHUB__REPOSITORIES",
        ),
    }
    # A provider whose name has a dash: HZ_PROVIDERS_MY_JIRA__… is [providers.my-jira].
    unknown = cli("providers", cwd=tmp_path, env={"HZ_PROVIDERS_MY_JIRA__URL": "x"})
    assert (unknown.returncode, unknown.stderr) == (
        2,
        "hz: error: environment variable HZ_PROVIDERS_MY_JIRA__URL: [providers.my-jira]: "
        "unknown provider 'my-jira'\n"
        "  hint: known providers: command, files, git, github (hz providers lists them)\n",
    )


def test_an_unknown_provider_key_or_provider_has_a_did_you_mean(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "operator.toml"
    config.write_text('[providers.github]\ntoken_evn = "MY_TOKEN"\n')
    keys = (
        "  hint: known keys of provider 'github': api_url, max_bytes, max_pages, "
        "max_wait_seconds, repositories, timeout_seconds, token_env\n"
    )
    done = cli("providers", cwd=tmp_path, env={"HZ_CONFIG": str(config)})
    assert (done.returncode, done.stderr) == (
        2,
        f"hz: error: {config}:2:1: unknown key 'token_evn' in [providers.github] (did you "
        "mean 'token_env'?)\n" + keys,
    )
    done = cli("providers", cwd=tmp_path, env={"HZ_PROVIDERS_GITHUB__TOKEN_EVN": "MY_TOKEN"})
    assert (done.returncode, done.stderr) == (
        2,
        "hz: error: environment variable HZ_PROVIDERS_GITHUB__TOKEN_EVN: unknown key "
        "'token_evn' in [providers.github] (did you mean 'token_env'?)\n" + keys,
    )
    config.write_text('[providers.gihtub]\ntoken_env = "MY_TOKEN"\n')
    done = cli("providers", cwd=tmp_path, env={"HZ_CONFIG": str(config)})
    assert (done.returncode, done.stderr) == (
        2,
        f"hz: error: {config}:2:1: [providers.gihtub]: unknown provider 'gihtub' (did you "
        "mean 'github'?)\n"
        "  hint: known providers: command, files, git, github (hz providers lists them)\n",
    )


BROKEN_MODULE = "import jira_client_that_is_not_installed\n"

CONTRACT = """\
hz:
  contract: 1
  name: triage
  timeout: 10m
  inputs:
    issues:
      read: tracker.issues_updated
      args: {repository: acme/app}
      window: 7d
    notes:
      read: files.glob
      args: {pattern: "notes/*.md"}
  agent: {max_usd: 0.5}
contract: |
  Triage.
prompt: |
  {{ inputs.issues | length }} issues; {{ inputs.notes[0].text }}
"""


@pytest.fixture
def broken_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution on sys.path whose ``hz.providers`` entry point names a module that fails
    to import, a contract reading through it and through files, and an operator file binding
    ``tracker`` to the plugin."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "hz_broken_provider.py").write_text(BROKEN_MODULE)
    info = site / "hz_broken_provider-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hz-broken-provider\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[hz.providers]\njira = hz_broken_provider:JiraProvider\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "hz_broken_provider", raising=False)
    registry._plugins.cache_clear()
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "a.md").write_text("a note")
    (work / "c.yaml").write_text(CONTRACT)
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "echo"\ntracker = "jira"\n'
    )
    monkeypatch.setenv("HZ_CONFIG", str(tmp_path / "operator.toml"))
    yield work
    registry._plugins.cache_clear()


LOAD_FAILED = (
    "provider plugin 'jira' from hz-broken-provider failed to load "
    "(hz_broken_provider:JiraProvider): ModuleNotFoundError: No module named "
    "'jira_client_that_is_not_installed'"
)


def test_a_plugin_that_fails_to_import_fails_only_the_inputs_bound_to_it(
    cli: Cli, broken_plugin: Path
) -> None:
    validated = cli("validate", "c.yaml", cwd=broken_plugin)
    assert (validated.returncode, validated.stdout) == (0, "")
    rendered = cli("render", "c.yaml", "--fetch", cwd=broken_plugin)
    assert (rendered.returncode, rendered.stdout) == (1, "")
    assert rendered.stderr == (
        f"c.yaml:0:0: error: input 'issues': tracker.issues_updated (jira): {LOAD_FAILED} [HZ721]\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )
    # With that input given by hand, the files input is fetched as ever.
    given = cli("render", "c.yaml", "--fetch", "--input", "issues=[]", cwd=broken_plugin)
    assert given.returncode == 0, given.stderr
    import json

    assert json.loads(given.stdout)["prompt"] == "0 issues; a note\n"
    listed = cli("providers", cwd=broken_plugin)
    assert listed.returncode == 1
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("files      files (core)     ready: ")
    assert lines[3] == f"tracker    jira (hz-broken-provider) NOT READY: {LOAD_FAILED}"

"""The ``[publish]`` policy holds on every path, at the moment of the write: a run made under
one configuration (approve mode, ``hz submit``, another worker) and written under a tighter one
writes nothing the policy in force refuses; a job the worker fires itself (a schedule, an
``after:`` chain) is refused before its session, as ``hz run`` refuses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.helpers.publishing import last_run, run_weekly, space
from tests.helpers.webhook import Webhook

# A worker fires these itself: ``down`` after each completed ``up``.


@pytest.fixture
def github() -> Any:
    with FakeGitHub() as server:
        server.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        yield server


def _tighten(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    text = config.read_text()
    text = text.replace(
        'allow = ["files.write", "webhook.post", "code-host.pull_request_comment"]',
        'allow = ["files.write", "webhook.post"]',
    ).replace('folders = ["reports"]', 'folders = ["elsewhere"]')
    config.write_text(text.replace("[publish]\n", '[publish]\njobs = ["weekly-*"]\n'))


def test_a_policy_tightened_after_the_run_refuses_at_write_time(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    with Webhook() as hook:
        env = space(tmp_path, github, mode="approve") | {"TEAM_CHAT_WEBHOOK": hook.url}
        assert run_weekly(cli, tmp_path, env).returncode == 0
        run_id = last_run(cli, tmp_path, env)
        _tighten(tmp_path)
        staged = cli("publish", run_id, "--staged", cwd=tmp_path, env=env)
        assert staged.stdout.splitlines()[:4] == [
            "step 1: code-host.pull_request_comment -> code-host.pull_request_comment [pending]",
            "  refused: the [publish] policy in force refuses it: publish 1 "
            "(code-host.pull_request_comment): the target is not in [publish] allow",
            "step 2: files.write -> files.write [pending]",
            "  refused: the [publish] policy in force refuses it: publish 2 (files.write): "
            "files.write: 'reports/w10.md' is in no folder [publish] folders allows (elsewhere)",
        ]
        done = cli("publish", run_id, "--format", "json", cwd=tmp_path, env=env)
        assert done.returncode == 1
        steps = json.loads(done.stdout)
        assert [(s["state"], s["attempts"]) for s in steps] == [
            ("failed", 0),
            ("failed", 0),
            ("published", 1),
        ]
        assert steps[0]["detail"] == (
            "the [publish] policy in force refuses it: publish 1 "
            "(code-host.pull_request_comment): the target is not in [publish] allow; "
            "nothing was sent"
        )
        assert github.comments("acme/app", 7) == []
        assert not (tmp_path / "reports" / "w10.md").exists()
        assert len(hook.received) == 1


def test_a_job_the_policy_no_longer_lets_publish_writes_nothing(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    with Webhook() as hook:
        env = space(tmp_path, github, mode="approve") | {"TEAM_CHAT_WEBHOOK": hook.url}
        assert run_weekly(cli, tmp_path, env).returncode == 0
        run_id = last_run(cli, tmp_path, env)
        config = tmp_path / "config.toml"
        config.write_text(config.read_text().replace("[publish]\n", '[publish]\njobs = ["no-*"]\n'))
        done = cli("publish", run_id, "--format", "json", cwd=tmp_path, env=env)
        assert [s["detail"] for s in json.loads(done.stdout)] == [
            "the [publish] policy in force refuses it: job 'weekly-status' may not publish "
            "([publish] jobs: no-*); nothing was sent"
        ] * 3
        assert github.comments("acme/app", 7) == []
        assert hook.received == []


FOLLOWER = """\
hz:
  contract: 1
  name: down
  timeout: 10m
  after: [up]
  agent: {max_usd: 0.5}
  publishes:
    - to: code-host.pull_request_comment
      args: {repository: acme/other, pull_request: 7}
contract: |
  Summarise.
prompt: |
  Hello.
"""
UPSTREAM = """\
hz:
  contract: 1
  name: up
  timeout: 10m
  agent: {max_usd: 0.5}
contract: |
  Summarise.
prompt: |
  Hello.
"""


def test_a_chained_job_the_policy_refuses_is_never_queued_by_the_worker(
    cli: Any, tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hz.cli.schedules import firing_maker
    from hz.runtime.artifacts.models import Job
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger import session
    from hz.runtime.ledger.schedules import fire_followers

    env = space(tmp_path, github)
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "up.yaml").write_text(UPSTREAM)
    (contracts / "down.yaml").write_text(FOLLOWER)
    built = cli("compile", "contracts", "--out", "jobs", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert cli("run", "jobs/up.job.json", cwd=tmp_path, env=env).returncode == 0
    up = last_run(cli, tmp_path, env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = load_config(environ=env)
    ledger, _ = session.open_ledger(config, reconciled=False)
    try:
        job = Job.model_validate_json((tmp_path / "jobs" / "down.job.json").read_text())
        make = firing_maker(config, tmp_path, tmp_path / "jobs", print, ledger)
        fired = fire_followers(ledger, [job], make, workdir=tmp_path)
        assert fired.queued == []
        assert fired.failed == [
            (
                f"after:{up}:down",
                f"after:{up}:down: job 'down' cannot publish as its contract asks, so it was not "
                "started: publish 1 (code-host.pull_request_comment): the repository "
                "'acme/other' is not in [publish] repositories",
            )
        ]
        assert [row.id for row in ledger.select()] == [up]
    finally:
        ledger.close()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (
            '[system.runner]\ncommand_env = ["TEAM_CHAT_WEBHOOK"]\n',
            "[system.runner] command_env passes TEAM_CHAT_WEBHOOK to a child process, but "
            "TEAM_CHAT_WEBHOOK holds a credential hz publishes with ([publish.webhooks.team-chat] "
            "url_env): it never leaves hz's environment",
        ),
        (
            '[system.runner]\nclaude_env = ["GITHUB_TOKEN"]\n',
            "[system.runner] claude_env passes GITHUB_TOKEN to a child process, but GITHUB_TOKEN "
            "holds a credential hz publishes with ([providers.github] token_env): it never "
            "leaves hz's environment",
        ),
    ],
)
def test_a_publishing_credential_passed_to_the_agent_is_refused(
    cli: Any, tmp_path: Path, github: FakeGitHub, extra: str, said: str
) -> None:
    env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": "http://127.0.0.1:9/hook?SECRETPART"}
    config = tmp_path / "config.toml"
    config.write_text(extra + config.read_text())
    done = run_weekly(cli, tmp_path, env)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"hz: error: {said}"
    assert "SECRETPART" not in done.stdout + done.stderr


def test_a_webhook_url_is_redacted_by_value_whatever_its_variable_is_named() -> None:
    from hz.runtime.transcript.record import declare_secret_names, secret_values

    url = "https://hooks.example.com/services/T0/B0/planted"
    assert secret_values({"TEAM_CHAT_HOOK_X": url}) == ()
    declare_secret_names(["TEAM_CHAT_HOOK_X"])
    assert (url, "TEAM_CHAT_HOOK_X") in secret_values({"TEAM_CHAT_HOOK_X": url})


@pytest.mark.parametrize("extra", [(), ("--resend",), ("--staged",)])
def test_a_step_that_does_not_exist_is_an_error(
    cli: Any, tmp_path: Path, github: FakeGitHub, extra: tuple[str, ...]
) -> None:
    env = space(tmp_path, github, mode="approve") | {"TEAM_CHAT_WEBHOOK": "http://127.0.0.1:9/"}
    done = run_weekly(cli, tmp_path, env)
    run_id = last_run(cli, tmp_path, env)
    assert done.stderr.splitlines()[-1] == (
        f"hz: 3 publishes of {run_id} await approval: hz publish {run_id} --staged shows "
        f"them, hz publish {run_id} writes them"
    )
    wrong = cli("publish", run_id, "--step", "99", *extra, cwd=tmp_path, env=env)
    assert (wrong.returncode, wrong.stderr) == (
        2,
        f"hz: error: run {run_id} has no step 99\n  hint: hz runs show {run_id} lists its steps\n",
    )

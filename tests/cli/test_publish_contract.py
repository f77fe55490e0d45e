"""The contract side of publishes as a user sees it: a rendered argument that does not fit
its target (HZ712), the rendered publishes in the packet, and a project hz.toml that tries to
widen [publish] (HZ801)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONTRACT = """\
hz:
  contract: 1
  name: review
  timeout: 10m
  agent: {max_usd: 0.5}
  inputs:
    pr: {schema: {type: string}}
  publishes:
    - to: code-host.pull_request_comment
      args: {repository: acme/app, pull_request: "{{ inputs.pr }}"}
contract: |
  Review.
prompt: |
  Review the change.
"""


def test_a_rendered_argument_that_does_not_fit_stops_the_render(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "review.yaml").write_text(CONTRACT)
    done = cli("render", "review.yaml", "--input", "pr=latest", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "review.yaml:10:50: error: publishes[0].args.pull_request rendered to 'latest': "
        "'latest' is not of type 'integer' [HZ712]\n"
        "  hint: the input values must make a valid argument of code-host.pull_request_comment\n"
    )
    assert done.stdout == ""


def test_a_rendered_repository_that_would_leave_its_path_stops_the_render(
    cli: Any, tmp_path: Path
) -> None:
    # "acme/.." passes an "acme/*" policy glob and an HTTP client folds /repos/acme/.. away.
    templated = CONTRACT.replace(
        "    pr: {schema: {type: string}}\n",
        "    pr: {schema: {type: string}}\n    repo: {schema: {type: string}}\n",
    ).replace("repository: acme/app", 'repository: "{{ inputs.repo }}"')
    (tmp_path / "review.yaml").write_text(templated)
    done = cli("render", "review.yaml", "--input", "pr=4", "--input", "repo=acme/..", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "review.yaml:11:26: error: publishes[0].args.repository rendered to 'acme/..': "
        "'acme/..' is not in the expected form (owner/name) [HZ712]\n"
    )
    assert done.stdout == ""


def test_the_packet_holds_the_rendered_publishes(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "review.yaml").write_text(CONTRACT)
    done = cli("render", "review.yaml", "--input", "pr=42", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["publishes"] == [
        {
            "to": "code-host.pull_request_comment",
            "args": {"repository": "acme/app", "pull_request": 42},
        }
    ]


def test_a_project_cannot_widen_where_its_contracts_publish(cli: Any, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "review.yaml").write_text(CONTRACT)
    (tmp_path / "hz.toml").write_text(
        '[publish]\nrepositories = ["*/*"]\n\n[publish.webhooks.leak]\nurl_env = "X"\n'
    )
    done = cli("validate", "review.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == (
        f"{tmp_path}/hz.toml:2:1: error: 'publish.repositories' configures execution and is "
        "not allowed in a project hz.toml [HZ801]\n"
        "  hint: execution is configured by the operator: the site or user configuration file, "
        "HZ_CONFIG or HZ_* variables\n"
        f"{tmp_path}/hz.toml:4:10: error: 'publish.webhooks' configures execution and is not "
        "allowed in a project hz.toml [HZ801]\n"
        "  hint: execution is configured by the operator: the site or user configuration file, "
        "HZ_CONFIG or HZ_* variables\n"
    )


def test_a_packet_whose_publishes_were_edited_is_refused(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "review.yaml").write_text(CONTRACT)
    rendered = cli("render", "review.yaml", "--input", "pr=42", cwd=tmp_path)
    packet = json.loads(rendered.stdout)
    packet["publishes"][0]["args"]["repository"] = "acme/secrets"
    (tmp_path / "packet.json").write_text(json.dumps(packet))
    done = cli("run", "packet.json", "--dry-run", cwd=tmp_path, env={"HZ_RUNNER": "echo"})
    assert done.returncode == 2
    assert done.stderr == (
        "hz: error: packet.json: the packet's publishes are not its job's (was it edited?)\n"
        "  hint: render the job again (hz render) to get a packet to run\n"
    )
    # A templated argument's rendered value is the packet's to hold: this packet is read, and
    # then the operator's policy (none here) has its say, before anything starts.
    packet["publishes"][0]["args"]["repository"] = "acme/app"
    packet["publishes"][0]["args"]["pull_request"] = 43
    (tmp_path / "packet.json").write_text(json.dumps(packet))
    again = cli("run", "packet.json", "--dry-run", cwd=tmp_path, env={"HZ_RUNNER": "echo"})
    assert again.returncode == 2
    assert again.stderr.startswith(
        "hz: error: job 'review' cannot publish as its contract asks, so it was not started: "
        "publish 1 (code-host.pull_request_comment): the target is not in [publish] allow\n"
    )

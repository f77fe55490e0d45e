"""The other targets, each written once and found again: an issue comment, a new issue, a
marked section of an issue's body, a commit status, and an operator's command."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.helpers.publishing import TOKEN

SHA = "c" * 40
CONTRACT = f"""\
hz:
  contract: 1
  name: triage
  timeout: 10m
  agent: {{max_usd: 0.5}}
  publishes:
    - to: code-host.issue_comment
      args: {{repository: acme/app, issue: 3}}
    - to: tracker.create_issue
      args: {{repository: acme/app, title: Weekly triage, labels: [report]}}
    - to: tracker.update_issue_body
      args: {{repository: acme/app, issue: 3, section: status}}
    - to: code-host.commit_status
      args: {{repository: acme/app, sha: "{SHA}", context: hz/triage}}
    - to: command.run
      args: {{command: archive}}
contract: |
  Triage.
prompt: |
  All green.
"""
RECORDER = (
    "import os,sys; "
    "open(sys.argv[1],'a').write(os.environ['HZ_PUBLISH_MARKER']+'|'+sys.stdin.read())"
)


def test_each_target_writes_once(cli: Any, tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.add_issue("acme/app", 3, body="Intro kept.\n")
        archive = tmp_path / "archive.txt"
        config = tmp_path / "config.toml"
        config.write_text(
            f"""
[capabilities]
agent_runner = "echo"
code-host = "github"
tracker = "github"

[providers.github]
api_url = "{github.url}"

[publish]
allow = ["code-host.*", "tracker.*", "command.run"]
repositories = ["acme/app"]

[publish.commands.archive]
argv = ["{sys.executable}", "-c", "{RECORDER}", "{archive}"]
"""
        )
        (tmp_path / "triage.yaml").write_text(CONTRACT)
        env = {
            "HZ_CONFIG": str(config),
            "HZ_STATE_DIR": str(tmp_path / "state"),
            "GITHUB_TOKEN": TOKEN,
        }
        done = cli("run", "triage.yaml", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        listed = cli("runs", "list", "--format", "json", cwd=tmp_path, env=env)
        run_id = json.loads(listed.stdout)["runs"][0]["id"]
        again = cli("publish", run_id, cwd=tmp_path, env=env)
        [comment] = github.comments("acme/app", 3)
        issues = github.state.issues["acme/app"]
        statuses = github.state.statuses[("acme/app", SHA)]
        posts = [s.path for s in github.seen if s.method in ("POST", "PATCH")]
    assert again.returncode == 0, again.stderr
    assert comment["body"] == f"All green.\n\n\n<!-- hz-publish:{run_id}:1 -->"
    [old, new] = issues
    assert (new["title"], new["body"]) == (
        "Weekly triage",
        f"All green.\n\n\n<!-- hz-publish:{run_id}:2 -->",
    )
    assert [label["name"] for label in new["labels"]] == ["report"]
    assert old["body"] == (
        "Intro kept.\n\n<!-- hz:section status -->\nAll green.\n\n\n"
        f"<!-- hz-publish:{run_id}:3 -->\n<!-- hz:end status -->"
    )
    assert [{k: v for k, v in status.items() if k != "creator"} for status in statuses] == [
        {"state": "success", "context": "hz/triage", "description": "All green."}
    ]
    assert archive.read_text() == f"hz-publish:{run_id}:5|All green.\n"
    assert posts == [
        "/repos/acme/app/issues/3/comments",
        "/repos/acme/app/issues",
        "/repos/acme/app/issues/3",
        f"/repos/acme/app/statuses/{SHA}",
    ]
    assert again.stdout.splitlines()[3] == (
        f"step 4: code-host.commit_status: published: {github.url}/repos/acme/app/commits/"
        f"{SHA}/statuses"
    )


#: Three GitHub targets: a comment, a new issue, a section of an issue's body.
THREE_ON_GITHUB = """\
hz:
  contract: 1
  name: triage
  timeout: 10m
  agent: {max_usd: 0.5}
  publishes:
    - to: code-host.issue_comment
      args: {repository: acme/app, issue: 3}
    - to: tracker.create_issue
      args: {repository: acme/app, title: Weekly triage}
    - to: tracker.update_issue_body
      args: {repository: acme/app, issue: 3, section: status}
contract: |
  Triage.
prompt: |
  All green.
"""


@pytest.mark.parametrize(
    "html_url",
    [None, 5, ["https://github.com/acme/app/issues/3"], "https://x/\n\x1b[31mred", "javascript:1"],
    ids=["missing", "number", "list", "control-characters", "not-http"],
)
def test_an_answer_without_a_usable_html_url_records_the_api_url_and_says_so(
    cli: Any, tmp_path: Path, html_url: Any
) -> None:
    """Attack on issue 27: a 201 without ``html_url`` was recorded as published with the
    location "", and one with another value as its str(): a newline and an ESC in the ledger,
    a list's repr. Decided: only an http(s) URL of printable ASCII is recorded; otherwise the
    API URL hz builds from the answer's id or number, with a note that it is hz's own."""
    with FakeGitHub() as github:
        github.add_issue("acme/app", 3, body="Intro.\n")
        github.answer_fields(r"/repos/acme/app/issues.*", html_url=html_url)
        config = tmp_path / "config.toml"
        config.write_text(
            f"""
[capabilities]
agent_runner = "echo"
code-host = "github"
tracker = "github"

[providers.github]
api_url = "{github.url}"

[publish]
allow = ["code-host.*", "tracker.*"]
repositories = ["acme/app"]
"""
        )
        (tmp_path / "triage.yaml").write_text(THREE_ON_GITHUB)
        env = {
            "HZ_CONFIG": str(config),
            "HZ_STATE_DIR": str(tmp_path / "state"),
            "GITHUB_TOKEN": TOKEN,
        }
        done = cli("run", "triage.yaml", "-q", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        listed = cli("runs", "list", "--format", "json", cwd=tmp_path, env=env)
        run_id = json.loads(listed.stdout)["runs"][0]["id"]
        shown = cli("runs", "show", run_id, cwd=tmp_path, env=env).stdout
        api, note = f"{github.url}/repos/acme/app", "GitHub's answer gave no usable html_url"
        assert shown.split("publishes:\n")[1].split("draft:")[0] == (
            f"  1 code-host.issue_comment: published: {api}/issues/comments/3000; {note}\n"
            f"  2 tracker.create_issue: published: {api}/issues/4; {note}\n"
            f"  3 tracker.update_issue_body: published: {api}/issues/3; {note}\n"
        )
        document = json.loads(
            cli("runs", "show", run_id, "--format", "json", cwd=tmp_path, env=env).stdout
        )
        receipt = Path(document["receipt"])
        record = json.loads(receipt.with_name(f"{receipt.stem}.publish-1.json").read_text())
        assert record["location"] == f"{api}/issues/comments/3000; {note}"
        # Found again by its marker (a lookup after a lost answer) the same way.
        github.answer_fields(
            r"/repos/acme/app/issues/3/comments", stored=True, id=None, html_url=html_url
        )
        github.after_write(r"/repos/acme/app/issues/3/comments", "5xx")
        (tmp_path / "one.yaml").write_text(
            THREE_ON_GITHUB.split("    - to: tracker.create_issue")[0]
            + "contract: |\n  Triage.\nprompt: |\n  Again.\n"
        )
        again = cli("run", "one.yaml", "-q", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    listed = cli("runs", "list", "--format", "json", cwd=tmp_path, env=env)
    second = json.loads(listed.stdout)["runs"][0]["id"]
    [step] = json.loads(
        cli("runs", "show", second, "--format", "json", cwd=tmp_path, env=env).stdout
    )["publishes"]
    assert (step["location"], step["detail"]) == (
        f"{api}/issues/3/comments; {note}",
        "GitHub answered 502 for POST /repos/acme/app/issues/3/comments: Server Error; "
        "found by its marker",
    )

"""An operator's space for the publish tests: a contract publishing to a pull-request comment,
a file and a webhook, and a configuration pointing at the fake GitHub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.github_server import FakeGitHub

CONTRACT = """\
hz:
  contract: 1
  name: weekly-status
  timeout: 10m
  agent: {{max_usd: 0.5}}
  inputs:
    pr: {{schema: {{type: integer}}}}
    week: {{schema: {{type: string}}}}
  publishes:
{publishes}
contract: |
  Summarise.
prompt: |
  Status of week {{{{ inputs.week }}}} for @acme/team
  /deploy now
"""
THREE = """\
    - to: code-host.pull_request_comment
      args: {repository: acme/app, pull_request: "{{ inputs.pr }}"}
    - to: files.write
      args: {path: "reports/{{ inputs.week }}.md"}
    - to: webhook.post
      args: {webhook: team-chat}
"""
TOKEN = "ghp_publishtesttoken0000000000000000000"


def space(
    tmp_path: Path, github: FakeGitHub, *, mode: str = "auto", repos: str = "acme/app"
) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(
        f"""
[capabilities]
agent_runner = "echo"
code-host = "github"

[providers.github]
api_url = "{github.url}"
repositories = ["acme/*"]

[publish]
mode = "{mode}"
allow = ["files.write", "webhook.post", "code-host.pull_request_comment"]
folders = ["reports"]
repositories = ["{repos}"]

[publish.webhooks.team-chat]
url_env = "TEAM_CHAT_WEBHOOK"
"""
    )
    (tmp_path / "weekly.yaml").write_text(CONTRACT.format(publishes=THREE.rstrip("\n")))
    (tmp_path / "reports").mkdir()
    return {
        "HZ_CONFIG": str(config),
        "HZ_STATE_DIR": str(tmp_path / "state"),
        "GITHUB_TOKEN": TOKEN,
    }


def run_weekly(cli: Any, tmp_path: Path, env: dict[str, str]) -> Any:
    return cli(
        "run",
        "weekly.yaml",
        "--input",
        "pr=7",
        "--input",
        "week=w10",
        "--format",
        "json",
        cwd=tmp_path,
        env=env,
    )


def last_run(cli: Any, tmp_path: Path, env: dict[str, str]) -> str:
    listed = cli("runs", "list", "--format", "json", cwd=tmp_path, env=env)
    return str(json.loads(listed.stdout)["runs"][0]["id"])

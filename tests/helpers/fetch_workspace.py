"""A working directory whose contract fetches three inputs, as the issue's example does: the
pull requests merged into acme/app in the last 7 days (the ``github`` provider against the
local fake GitHub, ``tests/fakes/github_server.py``), the commits of a real git repository in
the same window (``git.log``), and the notes a glob matches (``files.glob``).

``space = fetch_workspace(tmp_path, github.url)`` writes the repository, the notes, the
contract (``weekly.yaml``, or ``weekly.md`` for the Markdown form) and the operator file that
binds ``code-host`` to ``github`` (``space.config``); ``AT`` is the fake's own clock, so the
window at ``--at AT`` is the same on every run. The benchmark (benchmarks/fetch.py) uses it
too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.fakes.github_server import NOW, FakeGitHub
from tests.helpers.git_repo import Repo

AT = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")  # 2026-03-09T12:00:00Z
#: The token the operator's environment holds (planted: no artifact may show it).
TOKEN = "ghp_PlantedFetchToken0123456789abcdefXYZ"

INPUTS = """\
  inputs:
    merged:
      description: Pull requests merged into the app last week
      read: code-host.merged_pull_requests
      args: {repository: acme/app}
      window: 7d
      schema: {type: array}
    commits:
      read: git.log
      args: {max_commits: 50}
      window: 7d
    notes:
      read: files.glob
      args: {pattern: "docs/notes/*.md"}
"""

YAML_CONTRACT = (
    """\
hz:
  contract: 1
  name: weekly
  timeout: 2m
  agent:
    tools: [Read, Grep]
    max_usd: 0.5
"""
    + INPUTS
    + """\
contract: |
  Mention only changes listed in the inputs; never invent one.
prompt: |
  Merged:
  {% for pr in inputs.merged %}- #{{ pr.number }} {{ pr.title }} ({{ pr.merged_at }})
  {% endfor %}
  Commits:
  {% for c in inputs.commits %}- {{ c.subject }} ({{ c.date }})
  {% endfor %}
  Notes:
  {% for n in inputs.notes %}- {{ n.path }}: {{ n.text }}{% endfor %}
"""
)

MARKDOWN_CONTRACT = (
    """\
---
hz:
  contract: 1
  name: weekly-md
  timeout: 2m
  agent:
    tools: [Read, Grep]
    max_usd: 0.5
"""
    + INPUTS
    + """\
---

## Goal

Summarise the week from the pull requests in `inputs.merged`, the commits in
`inputs.commits` and the notes in `inputs.notes`.

## Done when

The summary names every merged change, and nothing else.
"""
)


def _at(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def serve(github: FakeGitHub) -> None:
    """Two pull requests merged within the week, one before it, one open."""
    github.add_pull(
        "acme/app", 7, title="Cache the parsed schema", merged_at="2026-03-05T10:00:00Z"
    )
    github.add_pull("acme/app", 8, title="Retry on 429", merged_at="2026-03-08T16:30:00Z")
    github.add_pull("acme/app", 3, title="Old change", merged_at="2026-02-20T09:00:00Z")
    github.add_pull("acme/app", 9, title="Still open", state="open")


@dataclass(frozen=True)
class FetchWorkspace:
    work: Path
    config: Path

    def env(self) -> dict[str, str]:
        return {"HZ_CONFIG": str(self.config), "GITHUB_TOKEN": TOKEN}


def fetch_workspace(
    tmp_path: Path, api_url: str, *, runner: str = "echo", runner_table: str = ""
) -> FetchWorkspace:
    """The repository (``work/``: commits, notes, both contracts) and the operator file."""
    work = tmp_path / "work"
    repo = Repo(work)
    repo.commit("Start", files={"README.md": "app\n"}, when=_at("2026-02-01T09:00:00"))
    repo.commit("Add retries", files={"app.py": "retry = 3\n"}, when=_at("2026-03-04T08:00:00"))
    repo.commit(
        "Write notes", files={"docs/notes/a.md": "first\n"}, when=_at("2026-03-06T15:00:00")
    )
    (work / "docs" / "notes" / "b.md").write_text("second\n")
    (work / "weekly.yaml").write_text(YAML_CONTRACT)
    (work / "weekly.md").write_text(MARKDOWN_CONTRACT)
    config = tmp_path / "operator.toml"
    config.write_text(
        "[capabilities]\n"
        f"agent_runner = {json.dumps(runner)}\n"
        'code-host = "github"\n\n'
        "[providers.github]\n"
        f"api_url = {json.dumps(api_url)}\n"
        'repositories = ["acme/*"]\n'
        'token_env = "GITHUB_TOKEN"\n' + runner_table
    )
    return FetchWorkspace(work, config)


def normalised(packet: dict[str, Any]) -> dict[str, Any]:
    """The packet with what changes from run to run (when each input was fetched) replaced."""
    sources = {
        name: {**source, "fetched_at": "<fetched_at>"} if "fetched_at" in source else source
        for name, source in packet["sources"].items()
    }
    return {**packet, "sources": sources}

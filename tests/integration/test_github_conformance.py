"""The github provider passes the provider conformance kit (hz.runtime.testing.providers),
against the fake GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.providers.github import GitHubProvider
from hz.runtime.testing.providers import Failure, ProviderConformance, Sample
from tests.fakes.github_server import FakeGitHub
from tests.helpers.end_to_end import no_proxy


def _ago(**delta: float) -> str:
    return (datetime.now(UTC) - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


class TestGitHubConformance(ProviderConformance):
    provider_class = GitHubProvider
    samples: ClassVar[dict[str, Sample]] = {
        "code-host.merged_pull_requests": Sample({"repository": "acme/app"}, window="7d"),
        "code-host.pull_request": Sample({"repository": "acme/app", "number": 2}),
        "tracker.issues_updated": Sample({"repository": "acme/app", "state": "all"}, window="7d"),
        "tracker.issue": Sample({"repository": "acme/app", "number": 7}),
    }
    github: FakeGitHub

    @pytest.fixture(autouse=True)
    def _github(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        no_proxy(monkeypatch)
        with FakeGitHub() as github:
            github.add_pull("acme/app", 1, merged_at=_ago(days=2), labels=("bug",))
            github.add_pull(
                "acme/app",
                2,
                merged_at=_ago(hours=3),
                files=({"filename": "src/app.py", "additions": 3},),
                diff="diff --git a/src/app.py b/src/app.py\n+x\n",
            )
            github.add_pull("acme/app", 3, merged_at=_ago(days=30))
            github.add_issue(
                "acme/app",
                7,
                updated_at=_ago(days=1),
                comments=(("hubot", _ago(days=1), "seen"),),
            )
            github.add_issue("acme/app", 8, updated_at=_ago(hours=1), pull_request=True)
            self.github = github
            yield

    def settings_table(self, workdir: Path) -> dict[str, Any]:
        return {"api_url": self.github.url, "repositories": ["acme/*"]}

    def failure(self, workdir: Path) -> Failure:
        return Failure(
            self.settings_table(workdir),
            "tracker.issue",
            {"repository": "acme/app", "number": 404},
            code="HZ722",
        )

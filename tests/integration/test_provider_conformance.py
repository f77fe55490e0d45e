"""hz's own providers pass the provider conformance kit (hz.runtime.testing.providers)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, ClassVar

from hz.runtime.providers.command import CommandProvider
from hz.runtime.providers.git import GitProvider
from hz.runtime.testing.providers import Failure, ProviderConformance, Sample
from tests.helpers.git_repo import Repo


class TestGitConformance(ProviderConformance):
    provider_class = GitProvider
    samples: ClassVar[dict[str, Sample]] = {
        "git.log": Sample(window="7d"),
        "git.diff": Sample({"range": "HEAD~1..HEAD"}),
        "git.changed_files": Sample({"range": "HEAD~2..HEAD", "path": "docs"}),
    }

    def prepare(self, workdir: Path) -> None:
        repo = Repo(workdir)
        now = int(time.time())
        repo.commit("start", files={"docs/a.md": "a\n"}, when=now - 10 * 86400)
        repo.commit("notes", files={"docs/b.md": "b\n"}, when=now - 3600)
        repo.commit("edit", files={"docs/a.md": "a\nb\n", "c": "c"}, when=now - 60)

    def failure(self, workdir: Path) -> Failure:
        return Failure({}, "git.log", {"range": "no-such-revision"}, code="HZ722")


#: Prints what it got on stdin, and its environment: a planted secret would show.
_ECHO = (
    "import json, os, sys; print(json.dumps({'in': json.load(sys.stdin), 'env': dict(os.environ)}))"
)
_ISSUE = (
    "import json, sys; a = json.load(sys.stdin)['args']; print(json.dumps({'number': "
    "a['number'], 'title': 't', 'url': 'u', 'state': 'open', 'comments': []}))"
)


class TestCommandConformance(ProviderConformance):
    provider_class = CommandProvider
    samples: ClassVar[dict[str, Sample]] = {
        "acme.echo": Sample({"team": "x"}, window="24h"),
        "tracker.issue": Sample({"repository": "acme/app", "number": 7}),
    }

    def settings_table(self, workdir: Path) -> dict[str, Any]:
        return {
            "operations": {
                "acme.echo": {
                    "argv": [sys.executable, "-c", _ECHO],
                    "args": {"type": "object", "properties": {"team": {"type": "string"}}},
                    "result": {"type": "object", "required": ["in", "env"]},
                    "window": True,
                    "env": ["ACME_TEAM"],
                },
                "tracker.issue": {"argv": [sys.executable, "-c", _ISSUE]},
            }
        }

    def failure(self, workdir: Path) -> Failure:
        table = {"operations": {"acme.down": {"argv": ["/bin/false"], "result": {}}}}
        return Failure(table, "acme.down", code="HZ722")

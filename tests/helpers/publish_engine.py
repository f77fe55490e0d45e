"""The publish engine's tests without a command line: a completed run in a fresh SQLite ledger
with the publishes asked for, and the publishing contexts they run under (a policy open to
every target, a GitHub at a fake's URL, a webhook)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.models import OutputSpec, PublishSpec
from hz.runtime.config.publish import PublishSettings
from hz.runtime.ledger.store import Ledger
from hz.runtime.providers.github.settings import GitHubSettings
from hz.runtime.publish.engine import Publishing, make_steps
from tests.helpers.packets import make_packet

TOKEN = "ghp_plantedsecret0000000000000000000000"
#: A policy that lets every target write anywhere: these tests are about the engine.
OPEN: dict[str, Any] = {"allow": ["*"], "repositories": ["*"]}
#: A comment on issue 9 of acme/app.
ISSUE_COMMENT = PublishSpec(
    to="code-host.issue_comment", args={"repository": "acme/app", "issue": 9}
)


def completed(
    tmp_path: Path, publishes: list[PublishSpec], draft: str, *, fmt: str = "markdown"
) -> tuple[Ledger, str]:
    """A ledger at ``tmp_path`` holding one completed run whose draft is ``draft``."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    packet = make_packet(output=OutputSpec(format=fmt)).model_copy(update={"publishes": publishes})
    run_id, _ = ledger.create(packet, key="k", workdir=tmp_path, receipt_dir=None)
    with ledger.tx() as c:
        c.execute(
            "UPDATE runs SET state = 'completed', result_json = ? WHERE id = ?",
            (json.dumps({"status": "completed", "draft": draft}), run_id),
        )
    return ledger, run_id


def attempted(ledger: Ledger, run_id: str, draft: str) -> None:
    """As if hz was killed after recording the attempt of the run's first step (writing
    ``draft``), before the target stored anything."""
    make_steps(ledger, run_id)
    taken = ledger.take_step(run_id, 1, now=0.0, lease_seconds=1)
    assert taken is not None
    ledger.writing(taken.step, hashlib.sha256(draft.encode()).hexdigest())


def open_publishing(**settings: Any) -> Publishing:
    """The open policy with ``settings`` over it, and no environment."""
    return Publishing(PublishSettings.model_validate(OPEN | settings), environ={})


def github_publishing(url: str, *, token: str | None = TOKEN, **github: Any) -> Publishing:
    """The open policy, GitHub's API at ``url`` (with ``github``'s settings) and ``token`` in
    GITHUB_TOKEN (None: the variable is not set)."""
    return Publishing(
        PublishSettings.model_validate(OPEN),
        GitHubSettings(api_url=url, **github),
        environ={} if token is None else {"GITHUB_TOKEN": token},
    )


def webhook_settings(name: str, **hook: Any) -> PublishSettings:
    """The open policy with one webhook ``name`` whose URL is in HOOK."""
    return PublishSettings.model_validate(OPEN | {"webhooks": {name: {"url_env": "HOOK", **hook}}})


def webhook_publishing(name: str, url: str, **hook: Any) -> Publishing:
    """``webhook_settings`` with ``url`` in HOOK."""
    return Publishing(webhook_settings(name, **hook), environ={"HOOK": url})

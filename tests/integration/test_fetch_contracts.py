"""A contract (YAML, and Markdown) with three fetched inputs, end to end: the pull requests
merged into acme/app in a 7-day window (the ``github`` provider against the local fake
GitHub), ``git.log`` of a real repository in the same window, and ``files.glob``. Rendered with
``--fetch --at`` (the packet's provenance complete), run with the echo runner and with the real
``claude`` CLI against the fake model; each receipt carries the inputs' digests and its chain
verifies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from hz.runtime.artifacts.canonical import canonical_json, digest_of
from tests.conftest import Cli
from tests.fakes.anthropic_server import FakeAnthropic, text
from tests.fakes.github_server import FakeGitHub
from tests.helpers.end_to_end import claude_runner_table, hz_process, model_env, no_proxy
from tests.helpers.fetch_workspace import (
    AT,
    TOKEN,
    fetch_workspace,
    normalised,
    serve,
)

FORMS = ("weekly.yaml", "weekly.md")
WEEK = {"spec": "7d", "since": "2026-03-02T12:00:00Z", "until": AT}
MERGED_TITLES = ["Retry on 429", "Cache the parsed schema"]
SUBJECTS = ["Write notes", "Add retries"]
NOTES = [
    {"path": "docs/notes/a.md", "text": "first\n"},
    {"path": "docs/notes/b.md", "text": "second\n"},
]


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    no_proxy(monkeypatch)
    with FakeGitHub() as server:
        serve(server)
        yield server


def assert_provenance(packet: dict[str, Any]) -> None:
    """Every input fetched, and its source complete: provider, operation, arguments, the
    resolved window (for the operations that take one), when, and the value's digest."""
    inputs, sources = packet["inputs"], packet["sources"]
    assert [pr["title"] for pr in inputs["merged"]] == MERGED_TITLES
    assert [c["subject"] for c in inputs["commits"]] == SUBJECTS
    assert inputs["notes"] == NOTES
    expected = {
        "merged": ("github", "code-host.merged_pull_requests", {"repository": "acme/app"}, WEEK),
        "commits": ("git", "git.log", {"max_commits": 50}, WEEK),
        "notes": ("files", "files.glob", {"pattern": "docs/notes/*.md"}, None),
    }
    assert sorted(sources) == sorted(expected)
    for name, (provider, operation, args, window) in expected.items():
        source = sources[name]
        assert (source["provider"], source["operation"], source["args"]) == (
            provider,
            operation,
            args,
        ), name
        assert source.get("window") == window, name
        assert source["sha256"] == digest_of(inputs[name]), name
        assert source["fetched_at"].endswith("Z"), name


@pytest.mark.parametrize("contract", FORMS)
def test_render_fetch_at_records_complete_provenance(
    cli: Cli, tmp_path: Path, github: FakeGitHub, contract: str, snapshot: SnapshotAssertion
) -> None:
    space = fetch_workspace(tmp_path, github.url)
    done = cli("render", contract, "--fetch", "--at", AT, cwd=space.work, env=space.env())
    assert (done.returncode, done.stderr) == (0, "")
    packet = json.loads(done.stdout)
    assert_provenance(packet)
    assert TOKEN not in done.stdout
    # The token went to the fake GitHub as a header, and only there.
    assert {seen.headers.get("authorization") for seen in github.seen} == {f"Bearer {TOKEN}"}
    assert canonical_json(normalised(packet)) == snapshot


def _receipt(receipts: Path) -> dict[str, Any]:
    [path] = sorted(receipts.glob("*.json"))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _ledger_packet(env: dict[str, str]) -> dict[str, Any]:
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    ledger, _ = open_ledger(load_config(environ=env), reconciled=False)
    try:
        [row] = ledger.select()
        packet: dict[str, Any] = json.loads(row.packet_json)
        return packet
    finally:
        ledger.close()


@pytest.mark.parametrize("contract", FORMS)
def test_run_with_the_echo_runner_carries_the_digests_into_the_receipt(
    cli: Cli, tmp_path: Path, github: FakeGitHub, contract: str
) -> None:
    space = fetch_workspace(tmp_path, github.url)
    receipts = tmp_path / "receipts"
    env = space.env()
    done = cli(
        "run",
        contract,
        "--at",
        AT,
        "--format",
        "json",
        "--receipt-dir",
        str(receipts),
        cwd=space.work,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed"
    for title in [*MERGED_TITLES, *SUBJECTS]:
        assert title in result["draft"]  # the echo runner answers with the prompt
    packet = _ledger_packet(env)
    assert_provenance(packet)
    receipt = _receipt(receipts)
    assert receipt["input_digests"] == {n: s["sha256"] for n, s in packet["sources"].items()}
    assert receipt["inputs_sha256"] == packet["inputs_sha256"]
    verified = cli("receipts", "verify", str(receipts), cwd=space.work, env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    seen = [done.stdout, done.stderr, json.dumps(packet), json.dumps(receipt)]
    assert [TOKEN in each for each in seen] == [False] * len(seen)


@pytest.mark.real_cli
@pytest.mark.parametrize("contract", FORMS)
def test_run_with_the_real_claude_cli_sees_the_fetched_data(
    hz_argv: list[str], tmp_path: Path, github: FakeGitHub, contract: str
) -> None:
    runner_table = claude_runner_table(tmp_path)
    space = fetch_workspace(tmp_path, github.url, runner="claude-code", runner_table=runner_table)
    receipts = tmp_path / "receipts"
    with FakeAnthropic([text("Two changes merged.")]) as api:
        env = model_env(api, space.env())
        argv = ["run", contract, "--at", AT, "--format", "json", "--receipt-dir", str(receipts)]
        done = hz_process(hz_argv, *argv, cwd=space.work, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["runner"], result["draft"]) == (
        "completed",
        "claude-code",
        "Two changes merged.",
    )
    # The model saw the fetched data in the prompt; the token reached neither it nor the CLI.
    sent = json.dumps(api.requests[0]["messages"])
    for title in [*MERGED_TITLES, *SUBJECTS, "second"]:
        assert title in sent
    assert TOKEN not in json.dumps(api.requests)
    receipt = _receipt(receipts)
    packet_sources = _ledger_packet(env)["sources"]
    assert receipt["input_digests"] == {n: s["sha256"] for n, s in packet_sources.items()}
    assert [s["window"] for s in packet_sources.values() if "window" in s] == [WEEK, WEEK]
    verified = hz_process(hz_argv, "receipts", "verify", str(receipts), env=env, timeout=60)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert TOKEN not in done.stdout + done.stderr + json.dumps(receipt)

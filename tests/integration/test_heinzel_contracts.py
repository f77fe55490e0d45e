"""Every contract of heinzel 0.7.19 (the sdist, fetched at test time: tests/helpers/heinzel.py)
end to end: ``hz migrate`` → ``hz validate`` → ``hz compile`` → ``hz render --fetch`` with the
providers served by fakes (the fake GitHub for ``code-host`` and ``tracker``, command-provider
scripts for ``team-graph`` and ``documents``) → ``hz run`` with the echo runner and with the
real ``claude`` CLI against the fake model → the publishes, to the operator's commands their
publish actions became → ``hz receipts verify``.

The team's weekly report reads the tracker update's draft (``read:
contract:team-tracker-update``): the tracker update runs first, in the same run ledger, and the
report's packet holds its draft with that run's id. The decisions ``hz migrate`` leaves to its
user (HZ172: a tracker ``project`` where hz's operation takes a GitHub ``repository``) are
taken here as a user takes them, by editing the migrated file; everything else is the
migration's own output.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.fakes.anthropic_server import FakeAnthropic, text
from tests.fakes.claude_hz import workspace as claude_workspace
from tests.fakes.github_server import NOW, FakeGitHub
from tests.helpers.heinzel import (
    CONTRACTS,
    TOKEN,
    Contract,
    Workspace,
    prose_files,
    serve,
    workspace,
)

AT = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
#: Each contract's hz name: a contract in a me/ or team/ folder carries its namespace.
NAMES = {
    "team-graph-keeper": "me-team-graph-keeper",
    "tracker-update": "team-tracker-update",
    "weekly-report": "team-weekly-report",
    "weekly-digest": "weekly-digest",
    "weekly-report-template": "me-weekly-report",
    "starter": "me-my-workflow",
}
#: The decisions the report leaves to the user (HZ172), as the user takes them.
DECISIONS = {
    "weekly-digest": ("args: {project: APP}", "args: {repository: fjordlight/app}"),
    "weekly-report-template": ('args: {project: "acme/app"}', 'args: {repository: "acme/app"}'),
}
#: The contract whose draft another reads (``read: contract:team-tracker-update``): it runs
#: first, in the same run ledger.
UPSTREAM = {"weekly-report": "tracker-update"}
#: What each packet's fetched inputs hold, by input: a text every value must contain.
FETCHED = {
    "team-graph-keeper": {"graph": "Weekly report waiting on 2 updates"},
    "weekly-digest": {"merged": "Retry on 429", "issues": "Flaky upload"},
    "weekly-report-template": {
        "merged": "Cache the parsed schema",
        "issues": "Flaky upload",
        "previous_report": "reports/last-week.md",
        "team_tracker": "reports/tracker.md",
    },
}
#: The operator's command each contract's publish action became (``to: command.run``).
PUBLISHES = {"weekly-digest": "notes-publish", "weekly-report": "teamwork-send-report"}
IDS = [c.id for c in CONTRACTS]
BY_ID = {c.id: c for c in CONTRACTS}


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    for name in list(os.environ):  # the fake is local: no proxy in between
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name)
    with FakeGitHub() as server:
        serve(server)
        yield server


def test_the_sdist_ships_the_five_prose_contracts_the_tests_take() -> None:
    """Six contracts: the five files and the starter; a new file in the sdist fails here."""
    assert prose_files() == sorted(c.source for c in CONTRACTS if c.source.endswith(".prose.md"))


def _migrated(cli: Cli, work: Path, contract: Contract, env: dict[str, str]) -> Path:
    path = work / contract.path
    done = cli("migrate", contract.path, cwd=work, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith(" to decide)\n")
    if contract.id in DECISIONS:
        old, new = DECISIONS[contract.id]
        assert old in path.read_text()
        path.write_text(path.read_text().replace(old, new))
    again = cli("migrate", contract.path, "--check", cwd=work, env=env)
    assert (again.returncode, again.stdout) == (
        0,
        f"{contract.path}: an hz contract already, unchanged\n",
    )
    return path


def _render(cli: Cli, work: Path, contract: Contract, env: dict[str, str]) -> dict[str, Any]:
    name = NAMES[contract.id]
    # A contract that reads another's draft is compiled with it (else HZ610).
    paths = [
        contract.path,
        *([BY_ID[UPSTREAM[contract.id]].path] if contract.id in UPSTREAM else []),
    ]
    checked = cli("validate", *paths, cwd=work, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert " error: " not in checked.stdout
    compiled = cli("compile", *paths, "--out", "build/jobs", cwd=work, env=env)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    job = f"build/jobs/{name}.job.json"
    argv = ["render", job, "--fetch", "--at", AT, "-o", f"build/{name}.packet.json"]
    rendered = cli(*argv, cwd=work, env=env)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    packet: dict[str, Any] = json.loads((work / "build" / f"{name}.packet.json").read_text())
    assert packet["job"]["name"] == name
    for input_name, expected in FETCHED.get(contract.id, {}).items():
        assert expected in json.dumps(packet["inputs"][input_name]), input_name
        assert packet["sources"][input_name]["sha256"]
    assert TOKEN not in json.dumps(packet)
    return packet


def _upstream(
    cli: Cli, work: Path, contract: Contract, env: dict[str, str]
) -> tuple[str, str] | None:
    """Run the contract whose draft ``contract`` reads (with the echo runner): its run id and
    its draft."""
    if contract.id not in UPSTREAM:
        return None
    upstream = BY_ID[UPSTREAM[contract.id]]
    _migrated(cli, work, upstream, env)
    _render(cli, work, upstream, env)
    name = NAMES[upstream.id]
    done = cli("run", f"build/{name}.packet.json", "--format", "json", cwd=work, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [run] = json.loads(cli("runs", "list", "--format", "json", cwd=work, env=env).stdout)["runs"]
    assert (run["job_name"], run["state"]) == (name, "completed")
    return (run["id"], json.loads(done.stdout)["draft"])


def _read_upstream(
    packet: dict[str, Any], contract: Contract, upstream: tuple[str, str] | None
) -> None:
    """The packet's input holds the upstream run's draft, and its source names that run."""
    if upstream is None:
        return
    run, draft = upstream
    source = packet["sources"]["tracker"]
    assert (source["job"], source["run"]) == (NAMES[UPSTREAM[contract.id]], run)
    assert packet["inputs"]["tracker"] == draft


def _assert_published(
    cli: Cli, space: Workspace, contract: Contract, draft: str, env: dict[str, str]
) -> None:
    """The draft reached the operator's command its publish action became, once, and the
    ledger says so; a contract without publishes wrote nothing."""
    published = sorted(p.name for p in space.published.glob("*.md"))
    if contract.id not in PUBLISHES:
        assert published == []
        return
    command = PUBLISHES[contract.id]
    assert published == [f"{command}.md"]
    assert (space.published / f"{command}.md").read_text() == draft
    runs = json.loads(cli("runs", "list", "--format", "json", cwd=space.work, env=env).stdout)
    run = next(r["id"] for r in runs["runs"] if r["job_name"] == NAMES[contract.id])
    shown = cli("runs", "show", run, cwd=space.work, env=env).stdout
    assert f"1 command.run: published: command {command}\n" in shown


@pytest.mark.parametrize("contract", CONTRACTS, ids=IDS)
def test_migrate_validate_compile_render_run_verify_with_the_echo_runner(
    cli: Cli, tmp_path: Path, github: FakeGitHub, contract: Contract
) -> None:
    space = workspace(tmp_path, github.url)
    env = space.env()
    run = _upstream(cli, space.work, contract, env)
    _migrated(cli, space.work, contract, env)
    name = NAMES[contract.id]
    packet = _render(cli, space.work, contract, env)
    _read_upstream(packet, contract, run)
    receipts = tmp_path / "receipts"
    packet_file = f"build/{name}.packet.json"
    done = cli(
        "run", packet_file, "--format", "json", "--receipt-dir", str(receipts),
        cwd=space.work, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["runner"]) == ("completed", "echo")
    assert packet["prompt"] in result["draft"]  # the echo runner answers with the prompt
    # Beside the receipt: a record per publish step (``STEM.publish-N.json``).
    [receipt_file] = [p for p in receipts.glob("*.json") if ".publish-" not in p.name]
    records = sorted(p.name.split(".", 1)[1] for p in receipts.glob("*.publish-*.json"))
    assert records == (["publish-1.json"] if contract.id in PUBLISHES else [])
    receipt = json.loads(receipt_file.read_text())
    digests = {n: s["sha256"] for n, s in packet.get("sources", {}).items()}
    assert receipt.get("input_digests", {}) == digests
    _assert_published(cli, space, contract, result["draft"], env)
    verified = cli("receipts", "verify", str(receipts), cwd=space.work, env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert TOKEN not in done.stdout + done.stderr + json.dumps(receipt)


def test_the_migrated_folder_compiles_without_two_jobs_of_one_name(
    cli: Cli, tmp_path: Path, github: FakeGitHub
) -> None:
    """team/…/weekly-report and me/weekly-report (the filled template) were one name."""
    space = workspace(tmp_path, github.url)
    env = space.env()
    done = cli("migrate", ".", cwd=space.work, env=env)
    assert done.returncode == 0, done.stdout
    for contract in CONTRACTS:
        if contract.id in DECISIONS:
            path = space.work / contract.path
            path.write_text(path.read_text().replace(*DECISIONS[contract.id]))
    compiled = cli("compile", ".", "--out", "build/jobs", cwd=space.work, env=env)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    jobs = sorted(p.name.removesuffix(".job.json") for p in (space.work / "build/jobs").iterdir())
    assert jobs == sorted(NAMES.values())


@pytest.mark.real_cli
@pytest.mark.parametrize("contract", CONTRACTS, ids=IDS)
def test_run_with_the_real_claude_cli_against_the_fake_model(
    cli: Cli, hz_argv: list[str], tmp_path: Path, github: FakeGitHub, contract: Contract
) -> None:
    (tmp_path / "claude").mkdir()
    claude = claude_workspace(tmp_path / "claude")
    runner_table = claude.config.read_text().partition("[system.runner]")[2]
    space = workspace(
        tmp_path,
        github.url,
        runner="claude-code",
        runner_table=f"\n[system]\nmax_attempts = 1\n\n[system.runner]{runner_table}"
        # The upstream of a chain drafts with the echo runner: one job's runner of its own.
        + "".join(
            f'\n[jobs."{NAMES[UPSTREAM[c]]}"]\nagent_runner = "echo"\n'
            for c in UPSTREAM
            if c == contract.id
        ),
    )
    env = space.env()
    run = _upstream(cli, space.work, contract, env)
    _migrated(cli, space.work, contract, env)
    packet = _render(cli, space.work, contract, env)
    _read_upstream(packet, contract, run)
    name = NAMES[contract.id]
    receipts = tmp_path / "receipts"
    with FakeAnthropic([text("The draft.")]) as api:
        run_env = {
            **os.environ,
            **env,
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
        }
        argv = [*hz_argv, "run", f"build/{name}.packet.json", "--format", "json"]
        argv += ["--receipt-dir", str(receipts)]
        done = subprocess.run(
            argv, cwd=space.work, env=run_env, capture_output=True, text=True, timeout=180
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["runner"], result["draft"]) == (
        "completed",
        "claude-code",
        "The draft.",
    )
    sent = json.dumps(api.requests[0])
    for expected in FETCHED.get(contract.id, {}).values():
        assert expected in sent  # the model saw the fetched data
    assert TOKEN not in json.dumps(api.requests)
    verified = subprocess.run(
        [*hz_argv, "receipts", "verify", str(receipts)],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # Beside the receipt: a record per publish step (``STEM.publish-N.json``).
    [receipt_file] = [p for p in receipts.glob("*.json") if ".publish-" not in p.name]
    records = sorted(p.name.split(".", 1)[1] for p in receipts.glob("*.publish-*.json"))
    assert records == (["publish-1.json"] if contract.id in PUBLISHES else [])
    receipt = json.loads(receipt_file.read_text())
    digests = {n: s["sha256"] for n, s in packet.get("sources", {}).items()}
    assert receipt.get("input_digests", {}) == digests
    _assert_published(cli, space, contract, "The draft.", env)

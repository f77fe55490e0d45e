"""``hz runs show`` prints the run's draft after its facts; ``--draft`` prints the draft alone,
as ``hz run`` prints it (what a terminal and a GitHub Actions log are shown:
tests/integration/test_cli_run_draft_output.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hz.runtime.ledger.store import Ledger
from tests.conftest import Cli
from tests.helpers.ledger_cli import echo_space, ledger_file, poke
from tests.helpers.packets import make_packet


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    return echo_space(cli, tmp_path)


def ran(hz: Cli) -> str:
    done = hz("run", "greet.yaml", "--input", "who=Ann", "--no-receipt", "--format", "json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(hz("runs", "list", "--format", "json").stdout)["runs"][0]["id"])


def test_the_draft_follows_the_runs_facts(hz: Cli) -> None:
    run_id = ran(hz)
    shown = hz("runs", "show", run_id)
    assert (shown.returncode, shown.stderr) == (0, "")
    facts, draft = shown.stdout.split("draft:\n")
    assert facts.startswith(f"run:         {run_id}\nstate:       completed\n")
    assert facts.splitlines()[-1].endswith("  completed   completed")  # the timeline's end
    assert draft == "Say hi to Ann.\n"


def test_draft_prints_the_draft_alone(hz: Cli) -> None:
    run_id = ran(hz)
    done = hz("runs", "show", run_id, "--draft")
    assert (done.returncode, done.stdout, done.stderr) == (0, "Say hi to Ann.\n", "")


def test_in_a_github_actions_log_the_draft_is_framed(hz: Cli) -> None:
    run_id = ran(hz)
    done = hz("runs", "show", run_id, "--draft", GITHUB_ACTIONS="true")
    token = done.stdout.split("\n")[0].removeprefix("::stop-commands::")
    assert done.stdout == f"::stop-commands::{token}\nSay hi to Ann.\n::{token}::\n"


def test_a_run_without_a_draft_says_so(hz: Cli, tmp_path: Path) -> None:
    ledger = Ledger(ledger_file(tmp_path))
    queued, _ = ledger.create(make_packet(), key="q", workdir=tmp_path, receipt_dir=None)
    ledger.close()
    done = hz("runs", "show", queued, "--draft")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == f"hz: run {queued} (queued) has no draft\n"
    assert "draft:" not in hz("runs", "show", queued).stdout  # not ended: nothing to say yet
    poke(tmp_path, "UPDATE runs SET state = 'failed', failure_kind = 'rate_limited', "
         "result_json = ? WHERE id = ?", ('{"draft": 42}', queued))  # fmt: skip
    done = hz("runs", "show", queued, "--draft")
    assert done.stderr == f"hz: run {queued} (failed (rate_limited)) has no draft\n"
    assert hz("runs", "show", queued).stdout.endswith("\ndraft:       none\n")


def test_a_long_hostile_draft_is_the_agents_text_into_a_pipe(hz: Cli, tmp_path: Path) -> None:
    run_id = ran(hz)
    draft = "\x1b[2J\r" + "a" * 10_000 + "\n::error::x\x07"
    poke(tmp_path, "UPDATE runs SET result_json = ? WHERE id = ?",
         (json.dumps({"draft": draft}), run_id))  # fmt: skip
    done = hz("runs", "show", run_id, "--draft")
    assert (done.returncode, done.stdout, done.stderr) == (0, draft + "\n", "")
    assert hz("runs", "show", run_id).stdout.endswith("\ndraft:\n" + draft + "\n")


@pytest.mark.parametrize("other", [("--transcript",), ("--format", "json")])
def test_draft_takes_no_other_output(hz: Cli, other: tuple[str, ...]) -> None:
    run_id = ran(hz)
    done = hz("runs", "show", run_id, "--draft", *other)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        "Error: --draft prints the draft alone: not with --transcript or --format json (the "
        "JSON document holds it as result.draft)\n"
    )

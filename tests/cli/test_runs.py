"""The run ledger's commands in process with the echo runner: hz submit, hz worker, hz runs,
hz run -j; what each prints, in text and JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.ledger.store import Ceilings, Ledger, Owner
from tests.conftest import Cli
from tests.helpers.contracts import GREET as CONTRACT
from tests.helpers.packets import make_packet


def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "s" / "ledger.sqlite3")


def submit(hz: Cli, who: str) -> str:
    done = hz("submit", "greet.yaml", "--input", f"who={who}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_submit_worker_list_show_wait_cost(hz: Cli, tmp_path: Path) -> None:
    ids = [submit(hz, who) for who in ("Ann", "Bo")]
    listed = hz("runs", "list")
    assert [line.split()[2] for line in listed.stdout.splitlines()] == ["STATE", "queued", "queued"]
    worked = hz("worker", "-j", "2", "--drain")
    assert worked.returncode == 0
    assert sorted(worked.stdout.splitlines()) == sorted(
        f"{i}  completed  greet  greet.yaml" for i in ids
    )
    shown = hz("runs", "show", ids[0])
    assert shown.stdout.splitlines()[:3] == [
        f"run:         {ids[0]}",
        "state:       completed",
        "job:         greet",
    ]
    assert hz("runs", "wait", *ids, "--timeout", "5").returncode == 0
    cost = hz("runs", "cost", "--by", "runner")
    assert cost.stdout.splitlines()[1].split()[:3] == ["echo", "2", "$0.0000"]
    for by in ("job", "model", "day"):
        assert hz("runs", "cost", "--by", by, "--format", "json").returncode == 0
    assert hz("runs", "list", "--state", "completed", "--since", "2026-01-01").returncode == 0
    bad = hz("runs", "list", "--state", "done")
    assert bad.returncode == 2
    assert "unknown state 'done'" in bad.stderr
    assert hz("runs", "list", "--since", "yesterday").returncode == 2


def test_cancel_retry_and_their_refusals(hz: Cli, tmp_path: Path) -> None:
    run_id = submit(hz, "Ann")
    cancelled = hz("runs", "cancel", run_id)
    assert cancelled.stdout == f"{run_id}  cancelled (aborted)\n"
    assert hz("runs", "wait", run_id).returncode == 7
    retried = hz("runs", "retry", run_id)
    new_id = retried.stdout.split()[0]
    assert retried.stdout == f"{new_id}  queued (retry of {run_id})\n"
    again = hz("runs", "retry", run_id)
    assert again.stderr == (
        f"hz: error: run {new_id} (queued) is newer for this request; retry that one\n"
    )
    live = hz("runs", "retry", new_id)
    assert live.stderr == f"hz: error: run {new_id} is queued; only an ended run can be retried\n"
    unknown = hz("runs", "show", "run_20260101_0123456789ab")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("hz: error: no run run_20260101_0123456789ab in the ledger ")
    pending = hz("runs", "wait", new_id, "--timeout", "0")
    assert pending.returncode == 10


def test_a_batch_in_text_and_json(hz: Cli, tmp_path: Path) -> None:
    text = hz("run", "greet.yaml", "greet.yaml", "--input", "who=Ann", "-j", "2")
    assert text.returncode == 0, text.stderr
    assert [line.split()[1] for line in text.stdout.splitlines()] == ["completed", "completed"]
    again = hz("run", "greet.yaml", "-j", "1", "--input", "who=Ann", "--format", "json")
    assert again.returncode == 0, again.stderr  # the same target again: a new run
    [document] = json.loads(again.stdout)["runs"]
    assert document["state"] == "completed"
    assert len({row.request_key for row in ledger(tmp_path).select()}) == 3
    refused = hz("run", "greet.yaml", "-j", "2", "--dry-run", "--input", "who=Ann")
    assert refused.returncode == 2


def test_a_spend_ceiling_fails_a_foreground_run(hz: Cli, tmp_path: Path) -> None:
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "echo"\n[system.budget]\nmax_usd_per_day = 0.4\n'
    )
    done = hz("run", "greet.yaml", "--input", "who=Ann")
    assert done.returncode == 6
    assert done.stderr.startswith(
        "hz: failed (budget_ceiling): reserving $0.50 would cross [system.budget] "
        "max_usd_per_day of $0.40 ($0.00 reserved or spent today); nothing was started\n"
    )


def test_reconcile_settles_a_run_whose_owner_died_after_dispatch(hz: Cli, tmp_path: Path) -> None:
    run_id = submit(hz, "Ann")
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    me = Owner.this_process()
    dead = Owner(f"elsewhere:{child.stdout.strip()}", int(child.stdout), 1, me.boot, pidns=me.pidns)
    store = ledger(tmp_path)
    _, generation = store.claim_next(dead) or ("", 0)
    store.prepare(run_id, generation, "echo", "d")
    assert store.dispatch(run_id, generation, Ceilings()) is None
    done = hz("runs", "reconcile", "--format", "json")
    [settled] = json.loads(done.stdout)["settled"]
    assert (settled["id"], settled["was"], settled["state"]) == (run_id, "dispatching", "uncertain")
    shown = hz("runs", "show", run_id)
    assert "hz will not run it again" in shown.stdout
    [receipt] = (tmp_path / "s" / "receipts").glob("*.json")
    assert json.loads(receipt.read_text())["status"] == "uncertain"
    assert hz("runs", "reconcile").stdout == "nothing to reconcile\n"


def test_a_worker_waits_out_an_expired_not_before(hz: Cli, tmp_path: Path) -> None:
    run_id = submit(hz, "Ann")
    with ledger(tmp_path).tx() as c:
        c.execute("UPDATE runs SET not_before = ? WHERE id = ?", (time.time() + 0.3, run_id))
    done = hz("worker", "--drain", "--format", "json")
    assert [r["state"] for r in json.loads(done.stdout)["runs"]] == ["completed"]


def test_a_batch_reads_each_target_only_when_a_slot_can_run_it(tmp_path: Path) -> None:
    """Flat memory: a target's packet is built when a slot takes it, never all up front."""
    from hz.cli.ledger_run import Request, run_batch
    from hz.compiler.render.packet import packet_from_path
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.owner import Binding, Policy
    from hz.runtime.ledger.store import TERMINAL

    (tmp_path / "greet.yaml").write_text(CONTRACT)
    store = ledger(tmp_path)
    config = load_config(environ={"HZ_RUNNER": "echo"})
    ended_before: list[int] = []

    def requests() -> Iterator[Request | None]:
        for n in range(6):
            ended_before.append(len(store.select(f"state IN {TERMINAL}")))
            packet, _ = packet_from_path(
                tmp_path / "greet.yaml",
                inputs_file=None,
                input_args=(f"who={n}",),
                max_usd_ceiling=10,
            )
            assert packet is not None
            yield Request(packet, f"key-{n}", tmp_path, None, False)

    code = run_batch(
        store,
        requests(),
        total=6,
        jobs=2,
        binding=Binding.from_config(config),
        policy=Policy(),
        fmt="jsonl",
        quiet=True,
        config=config,
    )
    assert code == 0
    # Two slots: when target n is read, at most one other run is in flight (the reading slot's
    # own run has ended), so n - 1 runs at least have ended. Read all up front, none would have.
    assert len(ended_before) == 6
    assert [ended >= n - 1 for n, ended in enumerate(ended_before)] == [True] * 6, ended_before
    assert len(store.select("state = 'completed'")) == 6


def test_a_target_that_cannot_be_built_is_reported_and_the_batch_goes_on(
    hz: Cli, tmp_path: Path
) -> None:
    (tmp_path / "bad.yaml").write_text("hz:\n  contract: 1\n")
    done = hz(
        "run",
        "greet.yaml",
        "nope.yaml",
        "greet.yaml",
        "--input",
        "who=Ann",
        "-j",
        "1",
    )
    assert done.returncode == 1
    assert [line.split()[1] for line in done.stdout.splitlines()] == ["completed", "completed"]
    assert done.stderr == (
        "nope.yaml:0:0: error: cannot read file: No such file or directory [HZ001]\n"
        "Found 1 error in 1 file (checked 1 file)\n"
        "hz: 1 of 3 targets could not be built (reported above); nothing of them ran\n"
    )
    assert len(ledger(tmp_path).select()) == 2


def test_a_bug_while_reading_a_target_ends_the_batch_as_a_bug(tmp_path: Path) -> None:
    """Not a thread dying quietly: the runs in flight settle, then the error reaches the
    CLI's handler (exit 3, "unexpected error")."""
    from hz.cli.ledger_run import Request, run_batch
    from hz.compiler.render.packet import packet_from_path
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.owner import Binding, Policy

    (tmp_path / "greet.yaml").write_text(CONTRACT)
    store = ledger(tmp_path)

    def requests() -> Iterator[Request | None]:
        packet, _ = packet_from_path(
            tmp_path / "greet.yaml", inputs_file=None, input_args=("who=Ann",), max_usd_ceiling=10
        )
        assert packet is not None
        yield Request(packet, "key", tmp_path, None, False)
        raise RuntimeError("boom")

    config = load_config(environ={"HZ_RUNNER": "echo"})
    with pytest.raises(RuntimeError, match=r"^boom$"):
        run_batch(
            store,
            requests(),
            total=3,
            jobs=2,
            binding=Binding.from_config(config),
            policy=Policy(),
            fmt="jsonl",
            quiet=True,
            config=config,
        )
    assert [r.state for r in store.select()] == ["completed"]


def test_runs_show_escapes_what_others_chose(hz: Cli, tmp_path: Path) -> None:
    key = "::warning::x ##[set-output name=y;]z"
    (tmp_path / "w\n::error::y").mkdir()
    ran = hz("run", "greet.yaml", "--input", "who=A", "-q", "--request-key", key,
             "--workdir", "w\n::error::y", "--no-receipt")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    [document] = json.loads(hz("runs", "list", "--format", "json").stdout)["runs"]
    assert document["request_key"] == key
    shown = hz("runs", "show", document["id"]).stdout.splitlines()
    assert shown[4:6] == [
        "request key: \\x3a:warning::x ##\\x5bset-output name=y;]z",
        f"workdir:     {tmp_path}/w\\n::error::y",
    ]
    assert not any(line.lstrip().startswith("::") for line in shown)


def test_cost_by_model_escapes_the_name_the_runner_reported(hz: Cli, tmp_path: Path) -> None:
    # The model's name comes from the agent's stream; the echo runner names the configured one.
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nagent_runner = "echo"\n[system.runner]\n'
        'model = "::warning::x\\u001b]0;t\\u0007"\n'
    )
    assert hz("run", "greet.yaml", "--input", "who=A", "-q", "--no-receipt").returncode == 0
    cost = hz("runs", "cost", "--by", "model")
    assert cost.stdout.splitlines()[1].split()[0] == "\\x3a:warning::x\\x1b]0;t\\x07"


def test_since_takes_ascii_digits_only(hz: Cli) -> None:
    done = hz("runs", "list", "--since", "٣d")  # an Arabic-Indic three
    assert done.returncode == 2
    assert done.stderr.endswith(
        "'٣d' is neither a duration (30m, 12h, 7d) nor an ISO date or time\n"
    )


@pytest.mark.parametrize("command", ["run", "submit"])
@pytest.mark.parametrize("key", ["", "  "])
def test_an_empty_request_key_is_refused(hz: Cli, tmp_path: Path, command: str, key: str) -> None:
    done = hz(command, "greet.yaml", "--input", "who=Ann", "--request-key", key)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        "Error: Invalid value for --request-key: an empty key names no request; leave the "
        "option out to start a new run\n"
    )
    assert not (tmp_path / "s" / "ledger.sqlite3").exists()  # nothing recorded


def test_the_batch_display_counts_a_batch(new_ledger: Any, tmp_path: Path) -> None:
    import io

    from hz.cli.ledger_run import BatchDisplay

    ledger = new_ledger()
    for key in ("a", "b"):
        ledger.create(make_packet(), key=key, workdir=tmp_path, receipt_dir=None, batch="b1")
    stream = io.StringIO()
    with BatchDisplay(ledger, "b1", stream, unread=lambda: 3) as display:
        line = display.text()
    # Targets not read yet (a batch reads them as slots free) count as queued.
    assert line == "hz: 0 done · 0 running · 5 queued · $0.00 reserved or spent"
    assert stream.getvalue().endswith("\r\x1b[K")

"""Publish steps in the ledger, on both backends: made once, taken at a new generation,
fenced (a writer that lost the step records nothing), a live writer's step left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hz.runtime.ledger.store import StaleOwner
from hz.runtime.ledger.store.publishes import (
    PENDING,
    PUBLISHED,
    PUBLISHING,
    SKIPPED,
    UNCERTAIN,
)
from tests.helpers.packets import make_packet


def _run(ledger: Any, tmp_path: Path) -> str:
    run_id, _ = ledger.create(make_packet(), key="k1", workdir=tmp_path, receipt_dir=None)
    return str(run_id)


def test_steps_are_made_once_and_taken_at_a_new_generation(new_ledger: Any, tmp_path: Path) -> None:
    ledger = new_ledger()
    run_id = _run(ledger, tmp_path)
    targets = [("files.write", {"path": "reports/a.md"}), ("webhook.post", {"webhook": "chat"})]
    made = ledger.add_steps(run_id, targets)
    again = new_ledger().add_steps(run_id, targets)
    assert [(s.step, s.state, s.marker) for s in again] == [
        (1, PENDING, f"hz-publish:{run_id}:1"),
        (2, PENDING, f"hz-publish:{run_id}:2"),
    ]
    assert made == again
    taken = ledger.take_step(run_id, 1, now=100.0, lease_seconds=50)
    assert taken is not None
    assert not taken.unobserved
    assert (taken.step.state, taken.step.generation, taken.step.lease_until) == (
        PUBLISHING,
        1,
        150.0,
    )
    # held by a live writer (its lease holds): nobody else takes it
    assert new_ledger().take_step(run_id, 1, now=120.0) is None
    written = ledger.writing(taken.step, "ab" * 32)
    done = ledger.settle_step(written, PUBLISHED, location="/srv/reports/a.md")
    assert (done.state, done.attempts, done.location, done.sha256) == (
        PUBLISHED,
        1,
        "/srv/reports/a.md",
        "ab" * 32,
    )
    assert ledger.take_step(run_id, 1, now=1000.0) is None  # published: a no-op


def test_a_writer_that_lost_its_step_records_nothing(new_ledger: Any, tmp_path: Path) -> None:
    first, second = new_ledger(), new_ledger()
    run_id = _run(first, tmp_path)
    first.add_steps(run_id, [("files.write", {"path": "reports/a.md"})])
    old = first.take_step(run_id, 1, now=100.0, lease_seconds=10)
    assert old is not None
    new = second.take_step(run_id, 1, now=200.0)  # the lease passed: the outcome unobserved
    assert new is not None
    assert (new.unobserved, new.step.generation) == (True, 2)
    with pytest.raises(StaleOwner):
        first.settle_step(old.step, PUBLISHED, location="late")
    with pytest.raises(StaleOwner):
        first.writing(old.step, "00" * 32)
    assert second.settle_step(new.step, UNCERTAIN, detail="cannot tell").state == UNCERTAIN
    assert first.take_step(run_id, 1, now=300.0) is None  # uncertain: never taken by itself
    assert first.take_step(run_id, 1, now=300.0, resend=True) is not None


def test_a_gone_writer_is_seen_before_its_lease_ends(new_ledger: Any, tmp_path: Path) -> None:
    ledger = new_ledger()
    run_id = _run(ledger, tmp_path)
    ledger.add_steps(run_id, [("files.write", {"path": "reports/a.md"})])
    assert ledger.take_step(run_id, 1, now=100.0, lease_seconds=1000) is not None
    assert ledger.take_step(run_id, 1, now=101.0, gone=lambda step: False) is None
    taken = ledger.take_step(run_id, 1, now=101.0, gone=lambda step: True)
    assert taken is not None
    assert taken.unobserved


def test_an_operator_skips_a_step_but_never_a_published_one(
    new_ledger: Any, tmp_path: Path
) -> None:
    ledger = new_ledger()
    run_id = _run(ledger, tmp_path)
    ledger.add_steps(run_id, [("files.write", {"path": "a"}), ("files.write", {"path": "b"})])
    skipped = ledger.skip_step(run_id, 1, "not wanted")
    assert skipped is not None
    assert skipped.state == SKIPPED
    taken = ledger.take_step(run_id, 2, now=1.0)
    ledger.settle_step(taken.step, PUBLISHED, location="b")
    assert ledger.skip_step(run_id, 2, "too late") is None

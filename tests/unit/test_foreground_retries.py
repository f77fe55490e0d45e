"""``run_foreground`` tells its caller of each automatic retry as it starts waiting for it:
the attempt that ended, the retry's run and number, and the wait."""

from __future__ import annotations

from pathlib import Path

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.ledger.foreground import Request, Retrying, run_foreground
from hz.runtime.ledger.owner import Binding, Policy
from hz.runtime.ledger.store import Ledger
from tests.helpers.packets import make_packet
from tests.helpers.scripted import Answers


def test_a_retry_that_completes_was_told_once(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    limited = AgentResult(
        runner="scripted",
        status="failed",
        failure_kind="rate_limited",
        reason="the API answered HTTP 429",
        retry_after_seconds=0.0,
        cost_usd=0.01,
    )
    done = AgentResult(runner="scripted", status="completed", draft="hi", cost_usd=0.02)
    told: list[Retrying] = []
    outcome = run_foreground(
        ledger,
        Request(make_packet(), "k", tmp_path, None, False),
        binding=Binding(Answers(limited, done), "scripted", ""),  # type: ignore[arg-type]
        policy=Policy(max_attempts=3),
        on_retry=told.append,
    )
    [first, second] = ledger.select()
    assert (outcome.run_id, outcome.state) == (second.id, "completed")
    [retry] = told
    assert (retry.after.run_id, retry.after.failure_kind, retry.after.reason) == (
        first.id,
        "rate_limited",
        "the API answered HTTP 429",
    )
    assert (retry.run_id, retry.attempt, retry.max_attempts) == (second.id, 2, 3)
    assert 0.0 <= retry.wait_seconds < 1.0

"""``hz worker --drain`` on either ledger: it runs what is runnable now and exits; a run held
for a spend ceiling stays queued for a later worker, and stderr says how many wait."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.ledger_env import Space, space


@pytest.fixture(params=["sqlite", "postgres"])
def s(request: pytest.FixtureRequest, tmp_path: Path) -> Space:
    dsn = None if request.param == "sqlite" else str(request.getfixturevalue("pg_dsn"))
    return space(
        tmp_path,
        "json",
        "--cost=0.6",
        "--prompt-file={prompt_file}",
        max_usd=0.6,
        extra='command_output = "json"\n[system.budget]\nmax_usd_per_day = 1.0\n',
        dsn=dsn,
    )


def submit(s: Space, who: str) -> str:
    done = s.cli("submit", "greet.yaml", "--input", f"who={who}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_drain_leaves_a_run_held_for_the_ceiling_queued_and_says_so(s: Space) -> None:
    first, second, third = (submit(s, who) for who in ("Ann", "Bo", "Cy"))
    # $0.60 spent today: neither $0.60 run after the first fits before the next UTC day.
    done = s.cli("worker", "--drain")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"{first}  completed  greet  greet.yaml\n",
        s.worker_started() + "hz: worker: drained; 2 runs held for a spend ceiling stay queued "
        "(hz runs list --state queued)\n",
    )
    where = "id = ?" if s.dsn is None else "id = %s"
    for run_id in (second, third):
        [row] = s.rows(where, (run_id,))
        assert (row["state"], row["held_reason"], row["dispatched_at"]) == (
            "queued",
            "max_usd_per_day",
            None,
        )
    assert len(s.starts()) == 1


def test_drain_says_nothing_when_nothing_is_held(s: Space) -> None:
    run_id = submit(s, "Ann")
    done = s.cli("worker", "--drain")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"{run_id}  completed  greet  greet.yaml\n",
        s.worker_started(),
    )

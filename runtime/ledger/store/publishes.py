"""A run's publishes: one row per step (``publish_steps``), fenced like a run.

A step moves ``pending → publishing → published | failed | uncertain | skipped``. Whoever
writes takes the step first (``take_step``): a new ``generation`` and a lease, in one
transaction; every later record says which generation it holds, so a process that lost the
step (its lease passed and another took it) can never record over the newer one
(``StaleOwner``). A step found ``publishing`` with its lease passed is one whose outcome
nobody observed (hz was killed mid-request): the taker learns so (``Taken.unobserved``) and
looks the step's marker up before anything is sent again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final

from hz.runtime.ledger.store.base import LedgerBase
from hz.runtime.ledger.store.errors import StaleOwner
from hz.runtime.ledger.store.identity import Owner

PENDING: Final = "pending"
PUBLISHING: Final = "publishing"
PUBLISHED: Final = "published"
FAILED: Final = "failed"
UNCERTAIN: Final = "uncertain"
SKIPPED: Final = "skipped"
STEP_STATES: Final = (PENDING, PUBLISHING, PUBLISHED, FAILED, UNCERTAIN, SKIPPED)
#: The states a step is taken from to write: never yet, or refused by the target (nothing was
#: written). ``uncertain`` is taken only when the operator says so (``resend``).
WRITABLE: Final = (PENDING, FAILED)
#: How long a writer holds a step before another may take it as unobserved.
STEP_LEASE_SECONDS: Final = 300.0
_DETAIL_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Step:
    run_id: str
    step: int
    target: str
    args: dict[str, Any]
    state: str
    generation: int
    attempts: int
    marker: str
    sha256: str | None
    location: str | None
    detail: str | None
    lease_until: float | None
    updated_at: float
    #: The process that took it last (``Owner``'s fields), to see whether it is gone.
    owner: dict[str, Any] | None = None

    @classmethod
    def read(cls, row: Any) -> Step:
        try:
            args = json.loads(row["args_json"])
        except (TypeError, ValueError):
            args = {}
        return cls(
            run_id=str(row["run_id"]),
            step=int(row["step"]),
            target=str(row["target"]),
            args=args if isinstance(args, dict) else {},
            state=str(row["state"]),
            generation=int(row["generation"]),
            attempts=int(row["attempts"]),
            marker=str(row["marker"]),
            sha256=None if row["sha256"] is None else str(row["sha256"]),
            location=None if row["location"] is None else str(row["location"]),
            detail=None if row["detail"] is None else str(row["detail"]),
            lease_until=None if row["lease_until"] is None else float(row["lease_until"]),
            updated_at=float(row["updated_at"]),
            owner=_owner(row["owner_json"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "to": self.target,
            "args": self.args,
            "state": self.state,
            "attempts": self.attempts,
            "location": self.location,
            "sha256": self.sha256,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Taken:
    """A step this process now holds at ``step.generation``; ``unobserved``: it was found
    ``publishing`` by a writer that is gone, so a write may have happened."""

    step: Step
    unobserved: bool


def _owner(text: Any) -> dict[str, Any] | None:
    try:
        found = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def marker_of(run_id: str, step: int) -> str:
    return f"hz-publish:{run_id}:{step}"


class PublishSteps(LedgerBase):
    def add_steps(self, run_id: str, targets: list[tuple[str, dict[str, Any]]]) -> list[Step]:
        """The run's steps, made ``pending`` the first time (a second call adds none)."""
        with self.tx() as c:
            have = {
                int(r["step"])
                for r in c.execute(
                    "SELECT step FROM publish_steps WHERE run_id = ?", (run_id,)
                ).fetchall()
            }
            now = self.now(c)
            for index, (target, args) in enumerate(targets, start=1):
                if index in have:
                    continue
                c.execute(
                    "INSERT INTO publish_steps (run_id, step, target, args_json, state, marker, "
                    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        index,
                        target,
                        json.dumps(args, sort_keys=True),
                        PENDING,
                        marker_of(run_id, index),
                        now,
                        now,
                    ),
                )
        return self.steps(run_id)

    def steps(self, run_id: str) -> list[Step]:
        return [
            Step.read(r)
            for r in self.connection.execute(
                "SELECT * FROM publish_steps WHERE run_id = ? ORDER BY step", (run_id,)
            ).fetchall()
        ]

    def take_step(
        self,
        run_id: str,
        step: int,
        *,
        lease_seconds: float = STEP_LEASE_SECONDS,
        now: float | None = None,
        resend: bool = False,
        owner: Owner | None = None,
        gone: Callable[[Step], bool] = lambda step: False,
    ) -> Taken | None:
        """The step at a new generation with a lease, held by ``owner``, or None when it is
        not to be written now (done, uncertain without ``resend``, or held by a writer whose
        lease holds and that ``gone`` does not see gone). ``now``: the time the lease is
        judged and written by (the database's clock when None)."""
        with self.tx() as c:
            row = c.execute(
                "SELECT * FROM publish_steps WHERE run_id = ? AND step = ?"  # noqa: S608
                f"{self.db.for_update}",
                (run_id, step),
            ).fetchone()
            if row is None:
                return None
            found = Step.read(row)
            moment = self.now(c) if now is None else now
            unobserved = found.state == PUBLISHING
            if unobserved and (found.lease_until or 0) > moment and not gone(found):
                return None
            again = resend and found.state == UNCERTAIN
            if not unobserved and found.state not in WRITABLE and not again:
                return None
            taken = c.execute(
                "UPDATE publish_steps SET state = ?, generation = generation + 1, "
                "lease_until = ?, owner_json = ?, updated_at = ? "
                "WHERE run_id = ? AND step = ? RETURNING *",
                (
                    PUBLISHING,
                    moment + lease_seconds,
                    None if owner is None else json.dumps(asdict(owner)),
                    moment,
                    run_id,
                    step,
                ),
            ).fetchone()
        return Taken(Step.read(taken), unobserved)

    def writing(
        self,
        held: Step,
        sha256: str,
        *,
        lease_seconds: float | None = None,
        now: float | None = None,
    ) -> Step:
        """Before a write: one more attempt on record, with the digest of what is sent; with
        ``lease_seconds``, the lease renewed from now (it must outlive the write in flight:
        another writer takes a step over only when its lease has passed)."""
        with self.tx() as c:
            if lease_seconds is None:
                row = c.execute(
                    "UPDATE publish_steps SET attempts = attempts + 1, sha256 = ? "
                    "WHERE run_id = ? AND step = ? AND generation = ? RETURNING *",
                    (sha256, held.run_id, held.step, held.generation),
                ).fetchone()
            else:
                moment = self.now(c) if now is None else now
                row = c.execute(
                    "UPDATE publish_steps SET attempts = attempts + 1, sha256 = ?, "
                    "lease_until = ? "
                    "WHERE run_id = ? AND step = ? AND generation = ? RETURNING *",
                    (sha256, moment + lease_seconds, held.run_id, held.step, held.generation),
                ).fetchone()
            if row is None:
                raise StaleOwner(held.run_id)
        return Step.read(row)

    def settle_step(
        self,
        held: Step,
        state: str,
        *,
        location: str | None = None,
        detail: str | None = None,
        sha256: str | None = None,
    ) -> Step:
        """The step's end as this generation saw it; ``StaleOwner`` when another took it."""
        with self.db.durable() as c:
            now = self.now(c)
            row = c.execute(
                "UPDATE publish_steps SET state = ?, location = COALESCE(?, location), "
                "detail = ?, sha256 = COALESCE(?, sha256), lease_until = NULL, updated_at = ? "
                "WHERE run_id = ? AND step = ? AND generation = ? RETURNING *",
                (
                    state,
                    location,
                    None if detail is None else detail[:_DETAIL_CHARS],
                    sha256,
                    now,
                    held.run_id,
                    held.step,
                    held.generation,
                ),
            ).fetchone()
            if row is None:
                raise StaleOwner(held.run_id)
        return Step.read(row)

    def skip_step(self, run_id: str, step: int, detail: str) -> Step | None:
        """An operator's decision: the step is not published (from any state but
        ``published`` and a live ``publishing``)."""
        with self.tx() as c:
            now = self.now(c)
            row = c.execute(
                "UPDATE publish_steps SET state = ?, detail = ?, generation = generation + 1, "
                "updated_at = ? WHERE run_id = ? AND step = ? AND state <> ? AND "
                "(state <> ? OR lease_until IS NULL OR lease_until <= ?) RETURNING *",
                (SKIPPED, detail, now, run_id, step, PUBLISHED, PUBLISHING, now),
            ).fetchone()
        return None if row is None else Step.read(row)

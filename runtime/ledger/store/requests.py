"""Requests becoming runs: a new run (or an adopted one) under a request key, a retry."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Packet
from hz.runtime.ledger.backend import Connection
from hz.runtime.ledger.paths import path_text
from hz.runtime.ledger.rows import COPIED, RunRow
from hz.runtime.ledger.states import TERMINAL, RunState
from hz.runtime.ledger.store.base import run_select
from hz.runtime.ledger.store.claims import Claims
from hz.runtime.ledger.store.errors import KeyHeld, KeyReused
from hz.runtime.ledger.store.identity import Owner, new_run_id

DEFAULT_QUEUE = "default"
#: A request as ``insert_run`` copies it: a run's ``RunRow.request()``, or a new one's values.
Request = dict[str, str | float | int | None]


class Requests(Claims):
    def create(
        self,
        packet: Packet,
        *,
        key: str,
        workdir: Path,
        receipt_dir: Path | None,
        force_new: bool = False,
        adopt: Owner | None = None,
        retry_of: str | None = None,
        attempt: int = 1,
        not_before: float = 0.0,
        batch: str | None = None,
        queue: str = DEFAULT_QUEUE,
        priority: int = 0,
        submitted: bool = False,
        target: Path | None = None,
    ) -> tuple[str, int]:
        """A new queued run, or with ``adopt`` an unowned queued run of the same key taken over
        (a retry waiting for its turn): ``(run id, generation)``; ``adopt`` owns the result.
        A run nobody adopts and outside a batch goes to the dispatcher (when there is one) in
        the same transaction.

        ``KeyHeld`` when the key already has a run and ``force_new`` is false; ``KeyReused``
        when that run is of another request (another job, input values, prompt, working
        directory or receipt directory), ``force_new`` or not: one key names one request.
        ``submitted``: the run is only queued, for a worker (``hz submit``), and a refusal says
        that nothing was queued rather than started. ``target``: the packet, job or contract
        the run was made from, recorded absolute (it is not part of the request)."""
        nothing = "nothing was queued" if submitted else "nothing was started"
        again, new = ("queues", "queue") if submitted else ("runs", "start")
        # Compared as the paths' own text (as ``RunRow`` reads them), stored as ``path_text``.
        workdir_text = str(workdir.resolve())
        receipt_text = None if receipt_dir is None else str(receipt_dir.resolve())
        with self.tx() as c:
            self.db.lock(c, f"request_key:{key}")
            found = c.execute(
                f"{run_select()} WHERE request_key = ? "
                f"ORDER BY created_at DESC, {self.db.insert_order} DESC LIMIT 1"
                f"{self.db.for_update}",
                (key,),
            ).fetchone()
            if found is not None:
                held = RunRow.read(found)
                state = held.state + (f" ({held.failure_kind})" if held.failure_kind else "")
                differs = _differences(held, packet, workdir_text, receipt_text)
                if differs:
                    listed = ", ".join(differs[:-1]) + (" and " if len(differs) > 1 else "")
                    raise KeyReused(
                        f"run {held.id} ({state}) holds this request key for another "
                        f"request; what differs: {listed}{differs[-1]}; {nothing}",
                        hint="a request key names one request: give this one a key of its own, "
                        f"or leave --request-key out to {new} a new run (hz runs show "
                        f"{held.id} shows the other)",
                    )
                if not force_new:
                    adoptable = (
                        held.state == RunState.QUEUED and held.owner is None and held.addressable
                    )
                    if adopt is not None and adoptable:
                        return held.id, self.claim_owned(c, held.id, adopt, "adopted")
                    raise KeyHeld(
                        f"run {held.id} ({state}) already holds this request key; {nothing}",
                        hint=f"see hz runs show {held.id}; --force-new {again} the request "
                        f"again under this key, another key (or none) {new}s a new run",
                    )
            template: Request = {
                "request_key": key,
                "batch": batch,
                "job_name": packet.job.name,
                "job_digest": packet.job_digest,
                "inputs_sha256": packet.inputs_sha256,
                "workdir": path_text(workdir_text),
                "receipt_dir": None if receipt_text is None else path_text(receipt_text),
                "packet_json": packet.model_dump_json(),
                "max_usd": packet.job.budget.max_usd,
                "queue": queue,
                "priority": priority,
                "target": None if target is None else path_text(os.path.abspath(target)),
            }
            run_id = self.insert_run(
                c,
                template,
                attempt=attempt,
                retry_of=retry_of,
                not_before=not_before,
                dispatch=adopt is None,
            )
            generation = 0 if adopt is None else self.claim_owned(c, run_id, adopt, None)
            return run_id, generation

    def insert_run(
        self,
        c: Connection,
        template: RunRow | Request,
        *,
        attempt: int = 1,
        retry_of: str | None = None,
        not_before: float = 0.0,
        dispatch: bool = True,
    ) -> str:
        """Inside a transaction: a new queued run with ``template``'s request (a row or a
        dict), handed to the dispatcher unless it belongs to a batch (the batch's own process
        runs it) or ``dispatch`` is false (its creator owns it at once)."""
        request = template.request() if isinstance(template, RunRow) else template
        run_id = new_run_id()
        values = [request[name] for name in COPIED]
        c.execute(
            f"INSERT INTO runs ({', '.join(COPIED)}, id, state, attempt, retry_of, "  # noqa: S608
            f"not_before, created_at) VALUES ({', '.join('?' * len(COPIED))}, ?, ?, "
            "?, ?, ?, ?)",
            (*values, run_id, RunState.QUEUED, attempt, retry_of, not_before, time.time()),
        )
        detail = f"retry of {retry_of} (attempt {attempt})" if retry_of else None
        self.event(c, run_id, RunState.QUEUED, detail)
        if dispatch and request["batch"] is None:
            queue, priority = request["queue"], request["priority"]
            self._enqueue(c, run_id, str(queue), int(priority or 0), not_before)
        return run_id

    def retry(self, run_id: str) -> str:
        """``hz runs retry``: a new queued run of the ended run's request, linked to it; its
        id. Refused (``HzError``) for a completed or live run, a run with values hz cannot
        read (a retry would copy them), and a run a newer run of its request followed."""
        self.get(run_id)  # an unknown id, or an unknown state, fails here
        with self.tx() as c:
            row = self.held(c, run_id)
            if row.malformed:
                raise HzError(
                    f"run {run_id} has values hz cannot read: {row.bad_columns()}; it is not "
                    "retried",
                    hint="the row was edited by hand or damaged: a retry would copy them",
                )
            self.db.lock(c, f"request_key:{row.request_key}")
            if row.state == RunState.COMPLETED:
                raise HzError(f"run {run_id} completed; a completed run is not retried")
            if row.state not in TERMINAL:
                raise HzError(f"run {run_id} is {row.state}; only an ended run can be retried")
            newer = c.execute(
                "SELECT id, state FROM runs WHERE request_key = ? AND created_at > ? "
                "ORDER BY created_at DESC LIMIT 1",
                (row.request_key, row.created_at),
            ).fetchone()
            if newer is not None:
                raise HzError(
                    f"run {newer['id']} ({newer['state']}) is newer for this request; retry "
                    "that one"
                )
            return self.insert_run(c, row, attempt=row.attempt + 1, retry_of=run_id)


def _differences(held: RunRow, packet: Packet, workdir: str, receipt_dir: str | None) -> list[str]:
    """What differs between the request of the run ``held`` and this one."""
    found = []
    if held.job_digest != packet.job_digest:
        name = packet.job.name
        found.append(
            f"the job (there {held.job_name}, here {name})"
            if held.job_name != name
            else f"the job ({name} there and here, but another version of it)"
        )
    if held.inputs_sha256 != packet.inputs_sha256:
        found.append("the input values")
    elif not found:
        # The same job and inputs render the same prompt; a packet made by hand may not. (Its
        # own column is read, whatever another column of the row holds.)
        from pydantic import ValidationError

        try:
            before = Packet.model_validate_json(held.packet_json).prompt_sha256
        except ValidationError:
            before = None
        if before != packet.prompt_sha256:
            found.append("the prompt")
    paths: tuple[tuple[str, str | None, str | None], ...] = (
        ("the working directory", held.workdir, workdir),
        ("the receipt directory", held.receipt_dir, receipt_dir),
    )
    for label, there, here in paths:
        if there != here:
            found.append(f"{label} (there {_shown(there)}, here {_shown(here)})")
    return found


def _shown(path: str | None) -> str:
    return "none" if path is None else path

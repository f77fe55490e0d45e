"""The receipt format: what one run's receipt file says. ``schemas/receipt.schema.json`` is
generated from ``Receipt``.

A receipt vouches for what ran (the job's digest, the inputs', the prompt's) and how it ended,
without the draft itself (only its sha256). ``sequence``, ``previous_receipt`` and
``previous_sha256`` place it in its directory's chain; ``digest`` is the sha256 of the compact
canonical JSON of everything else, so an edit shows (``hz receipts verify``). The run's
transcript is a file beside it (``transcript_file``, ``hz.runtime.artifacts.transcript``), vouched
for by ``transcript_sha256``. ``input_digests`` names the sha256 of each input fetched through a
provider (or given by hand in its place).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hz.runtime.artifacts.canonical import digest_of
from hz.runtime.artifacts.models import Frozen
from hz.runtime.artifacts.result import FailureKind, Status, Usage


class ReceiptBody(Frozen):
    """What one run's receipt says, before it is placed in a chain."""

    kind: Literal["receipt"] = "receipt"
    format_version: Literal[1] = 1
    job_name: str
    job_digest: str
    inputs_sha256: str
    #: The sha256 of each input the job reads through a provider, by name (the packet's
    #: ``sources``: fetched, or given by hand): which data the run saw, where it came from
    #: being in the packet the ledger keeps.
    input_digests: dict[str, str] = Field(default_factory=dict, exclude_if=lambda value: not value)
    prompt_sha256: str
    runner: str
    model: str | None
    status: Status
    failure_kind: FailureKind | None
    reason: str | None
    tool_calls: dict[str, int]
    tool_call_total: int
    turns: int | None
    usage: Usage
    cost_usd: float | None
    duration_seconds: float
    limits_unenforced: tuple[str, ...]
    session_widened: tuple[str, ...] = ()
    draft_sha256: str | None
    transcript_sha256: str | None = None
    started_at: str
    ended_at: str
    hz_version: str


class Receipt(ReceiptBody):
    """One receipt file: a run's receipt, placed in its directory's chain and sealed."""

    sequence: int
    previous_receipt: str | None
    previous_sha256: str | None
    #: The transcript's file name, in the receipt's directory.
    transcript_file: str | None = Field(default=None, pattern=r"^[^/\\]+\.transcript\.jsonl$")
    digest: str

    @classmethod
    def chained(
        cls,
        body: ReceiptBody,
        sequence: int,
        previous: tuple[str, str] | None,
        transcript_file: str | None = None,
    ) -> Receipt:
        """``body`` as receipt number ``sequence`` after ``previous`` (its file name and the
        sha256 of its bytes), with the digest of all that."""
        content: dict[str, Any] = {
            **body.to_json_data(),
            "transcript_file": transcript_file,
            "sequence": sequence,
            "previous_receipt": previous[0] if previous else None,
            "previous_sha256": previous[1] if previous else None,
        }
        return cls.model_validate({**content, "digest": digest_of(content)})

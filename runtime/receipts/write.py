"""Receipts: one JSON file per run, chained by the sha256 of the previous receipt file.

Files are named ``<sequence>-<job name>.json`` (sequence zero-padded to six digits, counting
from 1 in each directory). Each receipt records ``previous_sha256``, the sha256 of the bytes of
the receipt before it, and ``digest``, the sha256 of its own canonical content without the
digest. A writer holds an exclusive ``flock`` on ``<dir>/.lock`` while it reads the head of the
chain and adds the next receipt, so concurrent runs into one directory queue up instead of
forking the chain; the file is written to a temporary name in the same directory, fsynced,
linked into place (never over an existing receipt) and the directory fsynced, so a crash
leaves no half receipt. A run's transcript is written the same way first, beside it, as
``<receipt stem>.transcript.jsonl``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from hz import __version__
from hz.runtime.artifacts.canonical import canonical_json, sha256_hex
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.files import write_atomically
from hz.runtime.artifacts.models import Packet
from hz.runtime.artifacts.receipt import Receipt, ReceiptBody
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.receipts.files import read_receipt_file
from hz.runtime.transcript.build import TRANSCRIPT_SUFFIX, transcript_bytes, transcript_of

#: ASCII digits only: ``\d`` would take ``٠٠٠٠٠٩-a.json`` for receipt 9.
RECEIPT_NAME = re.compile(r"([0-9]{6,})-([a-z0-9][a-z0-9-]*)\.json")
LOCK_FILE = ".lock"
#: The default receipt directory, in the operator's state directory (``[system] state_dir``).
DEFAULT_DIR = "receipts"


def utc_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def receipt_body(
    packet: Packet,
    result: AgentResult,
    *,
    started_at: datetime,
    ended_at: datetime,
    transcript: bytes | None = None,
) -> ReceiptBody:
    """What one run's receipt says, before it is placed in a chain."""
    return ReceiptBody(
        job_name=packet.job.name,
        job_digest=packet.job_digest,
        inputs_sha256=packet.inputs_sha256,
        input_digests={name: source.sha256 for name, source in sorted(packet.sources.items())},
        # What the agent was actually given, so a receipt vouches for more than the job.
        prompt_sha256=sha256_hex(packet.prompt),
        runner=result.runner,
        model=result.model,
        status=result.status,
        failure_kind=result.failure_kind,
        reason=result.reason,
        tool_calls=result.tool_call_counts,
        tool_call_total=len(result.tool_calls),
        turns=result.turns,
        usage=result.usage,
        cost_usd=result.cost_usd,
        duration_seconds=round(result.duration_seconds, 3),
        limits_unenforced=result.limits_unenforced,
        session_widened=result.session_widened,
        draft_sha256=None if result.draft is None else sha256_hex(result.draft),
        transcript_sha256=None if transcript is None else sha256_hex(transcript),
        started_at=utc_iso(started_at),
        ended_at=utc_iso(ended_at),
        hz_version=__version__,
    )


def receipt_and_transcript(
    packet: Packet, result: AgentResult, *, started_at: datetime, ended_at: datetime
) -> tuple[ReceiptBody, bytes]:
    """The receipt body of a run and its transcript's bytes, for ``write_receipt``."""
    transcript = transcript_bytes(transcript_of(result))
    body = receipt_body(
        packet, result, started_at=started_at, ended_at=ended_at, transcript=transcript
    )
    return body, transcript


def receipt_files(directory: Path) -> list[tuple[int, Path]]:
    """``(sequence, path)`` of every file named like a receipt, in sequence order."""
    found = []
    for path in directory.iterdir():
        match = RECEIPT_NAME.fullmatch(path.name)
        if match and path.is_file() and not path.is_symlink():
            found.append((int(match[1]), path))
    return sorted(found)


def _free_name(directory: Path, stem: str) -> Path:
    """``stem.json``, or ``stem-2.json``, ... when something that is no receipt (a dangling
    link, a directory) holds the name: a planted entry must not stop every run's receipt."""
    target = directory / f"{stem}.json"
    number = 1
    while os.path.lexists(target):
        number += 1
        target = directory / f"{stem}-{number}.json"
    return target


def _sha256_of_head(directory: Path, head: Path) -> str:
    """The sha256 of the chain's last receipt, which the next one names. A file too large or of
    the wrong kind to be one hz wrote stops the chain: the receipt is not written after it."""
    try:
        return sha256_hex(read_receipt_file(head))
    except OSError as e:
        raise HzError(
            f"cannot write a receipt in {directory}: {head.name}, the last receipt of its "
            f"chain, cannot be read: {e.strerror or e}",
            hint=f"hz receipts verify {directory} checks the chain; move the file away, or "
            "give another directory with --receipt-dir",
        ) from e


def _make_private(directory: Path) -> None:
    """Create ``directory`` and every missing parent readable by this user only (``mkdir -p``
    gives the parents the umask's mode). By default it is ``receipts/`` in the state directory,
    which the run ledger shares: a first ``hz run --no-ledger`` must not leave the directory of
    the ledger (prompts, inputs) and of the transcripts (what the agent read) open to others."""
    missing = []
    for path in (directory, *directory.parents):
        if os.path.lexists(path):
            break
        missing.append(path)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made by a concurrent run meanwhile
            path.mkdir(mode=0o700)
    if not directory.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory))


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    # O_NOFOLLOW: a planted .lock link must not make hz create or open a file elsewhere.
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_receipt(directory: Path, body: ReceiptBody, transcript: bytes | None = None) -> Path:
    """Add ``body`` as the next receipt of the chain in ``directory`` (created if needed),
    with ``transcript`` beside it (the bytes ``body.transcript_sha256`` is of)."""
    if (transcript is None) != (body.transcript_sha256 is None) or (
        transcript is not None and sha256_hex(transcript) != body.transcript_sha256
    ):
        raise ValueError("the transcript is not the one the receipt names")
    try:
        # Looked at inside the try: a directory hz may not look at (another user's, a stale
        # NFS handle, an unmounted disk) is a receipt not written, said, never a crash.
        if directory.is_symlink():
            # A configured or given directory may lie in a tree a repository controls.
            raise HzError(
                f"cannot write a receipt in {directory}: it is a symbolic link",
                hint="give the real directory with --receipt-dir",
            )
        _make_private(directory)
        with _locked(directory):
            existing = receipt_files(directory)
            head = existing[-1] if existing else None
            sequence = head[0] + 1 if head else 1
            previous = (head[1].name, _sha256_of_head(directory, head[1])) if head else None
            slug = re.sub(r"[^a-z0-9-]+", "-", body.job_name.lower()).strip("-")
            target = _free_name(directory, f"{sequence:06d}-{slug[:64] or 'job'}")
            transcript_file = None
            if transcript is not None:
                transcript_path = target.with_name(target.stem + TRANSCRIPT_SUFFIX)
                # Renamed over a stale one (a crash between the two writes left it unclaimed).
                write_atomically(transcript_path, transcript, durable=True, mode=0o644)
                transcript_file = transcript_path.name
            receipt = Receipt.chained(body, sequence, previous, transcript_file)
            # Linked, never renamed over an existing receipt (FileExistsError then).
            write_atomically(
                target,
                canonical_json(receipt.to_json_data()),
                overwrite=False,
                durable=True,
                mode=0o644,
            )
            return target
    except OSError as e:
        raise HzError(f"cannot write a receipt in {directory}: {e}") from e

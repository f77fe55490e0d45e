"""git's output as values: commits, file statuses, text."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from hz.runtime.artifacts.operations import Window
from hz.runtime.artifacts.printable import printable
from hz.runtime.providers.protocol import HZ724, ProviderError

#: A commit's fields as ``git.log`` asks for them: hash, author, email, committer time (Unix
#: seconds), subject, body. ``-z`` ends each commit with a NUL.
_FIELDS = ("%H", "%an", "%ae", "%ct", "%s", "%b")
LOG_FORMAT = "%x00".join(_FIELDS)
HASH = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


def window_options(window: Window | None) -> list[str]:
    """Commits whose committer time is in ``[since, until)``. ``--since-as-filter`` keeps
    walking past an older commit (``--since`` stops there); git's times are whole seconds."""
    if window is None:
        return []
    since = math.ceil(window.since.timestamp())
    until = math.ceil(window.until.timestamp()) - 1
    return [f"--since-as-filter=@{since}", f"--until=@{until}"]


def commits(out: bytes) -> list[dict[str, str]]:
    fields = out.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    size = len(_FIELDS)
    if len(fields) % size:
        raise unreadable("a commit record has the wrong number of fields")
    commits = []
    for start in range(0, len(fields), size):
        commit, author, email, seconds, subject, body = fields[start : start + size]
        if not HASH.fullmatch(commit) or not seconds.isdigit():
            raise unreadable("a commit record does not start with a hash and a time")
        when = datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        commits.append(
            {
                "commit": commit.decode("ascii"),
                "author": text(author),
                "email": text(email),
                "date": when,
                "subject": text(subject),
                "body": text(body).rstrip("\n"),
            }
        )
    return commits


def name_status(out: bytes) -> list[tuple[str, str]]:
    """``STATUS NUL PATH NUL`` pairs (renames are off, so every record has one path)."""
    fields = out.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 2:
        raise unreadable("a --name-status record has no path")
    pairs = []
    for start in range(0, len(fields), 2):
        status = fields[start].decode("ascii", errors="replace")
        if not re.fullmatch(r"[A-Z][0-9]{0,3}", status):
            raise unreadable(f"{printable(status)!r} is no file status")
        pairs.append((status[0], text(fields[start + 1])))
    return pairs


def net_changes(newest_first: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Each path once, with its change across the window: the commits' statuses (newest
    first) folded from the oldest to the newest. A file added and then deleted in the window
    is left out; deleted and added again is modified."""
    newest: dict[str, str] = {}
    oldest: dict[str, str] = {}
    for status, path in newest_first:
        newest.setdefault(path, status)
        oldest[path] = status
    changes = []
    for path, last in newest.items():
        first = oldest[path]
        if first == "A":
            if last == "D":
                continue
            status = "A"
        elif last == "D":
            status = "D"
        elif first == "D":
            status = "M"
        else:
            status = last
        changes.append({"path": path, "status": status})
    return sorted(changes, key=lambda change: change["path"])


def whole_chars(data: bytes) -> bytes:
    """``data`` without an incomplete UTF-8 sequence at its end (where a cap cut it)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def unreadable(why: str) -> ProviderError:
    return ProviderError(
        HZ724, f"git's output could not be read: {why}", hint="report this with your git version"
    )

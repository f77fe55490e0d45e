"""One bounded HTTP exchange for the publishers: no redirect followed, the answer read in
chunks up to a cap, the whole exchange within a deadline (httpx's timeout bounds each wait;
a server that trickles is stopped here)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

#: The most of an answer read: a comment's or an issue's JSON is a few KiB, a page of 100 of
#: them a few hundred.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class TooSlow(Exception):
    """The answer did not arrive within the exchange's deadline."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    reason: str
    body: bytes
    #: The answer was longer than the cap: ``body`` holds its start.
    cut: bool


def exchange(
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    json: Any = None,
    timeout: float,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> Answer:
    """``method url`` and its answer; httpx's errors pass through (the caller says what a
    lost answer means), ``TooSlow`` past ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    with (
        httpx.Client(follow_redirects=False, trust_env=True) as client,
        client.stream(
            method, url, headers=headers, json=json, timeout=httpx.Timeout(timeout)
        ) as response,
    ):
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_raw():
            if time.monotonic() > deadline:
                raise TooSlow(f"no whole answer within {timeout:g} s")
            chunks.append(chunk[: max_bytes - size])
            size += len(chunk)
            if size >= max_bytes:
                return Answer(response.status_code, response.reason_phrase, b"".join(chunks), True)
        return Answer(response.status_code, response.reason_phrase, b"".join(chunks), False)

"""One bounded HTTP exchange for the publishers: no redirect followed, the answer read in
chunks up to a cap, the whole exchange within a deadline (httpx's timeout bounds each wait;
the watchdog of the github provider, ``hz.runtime.providers.watchdog``, holds the whole
request to the deadline, headers included)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

from hz.runtime.providers.watchdog import Watchdog

#: The most of an answer read: a comment's or an issue's JSON is a few KiB, a page of 100 of
#: them a few hundred.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class NotSent(Exception):
    """The request could not be made (a URL or a header httpx refuses): nothing left hz."""


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
    lost answer means), ``TooSlow`` past ``timeout`` seconds in all — the connection, the
    status line and the headers too (a watchdog shuts the connection at the deadline: a
    server that trickles header lines is stopped as one that trickles its body) — and
    ``NotSent`` for a request that could not be made (nothing left hz)."""
    deadline = time.monotonic() + timeout
    watchdog = Watchdog()
    with httpx.Client(follow_redirects=False, trust_env=True) as client:
        try:
            request = client.build_request(
                method,
                url,
                headers=headers,
                json=json,
                timeout=httpx.Timeout(timeout),
                extensions={"trace": watchdog.trace},
            )
        except (httpx.InvalidURL, ValueError, UnicodeError) as e:  # the URL or a header
            raise NotSent(type(e).__name__) from e
        try:
            with watchdog.armed(timeout):
                response = client.send(request, stream=True)
                try:
                    return _read(response, deadline, timeout, max_bytes)
                finally:
                    response.close()
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as e:
            # Refused by httpx or h11 before a byte of the request was written.
            raise NotSent(type(e).__name__) from e
        except httpx.HTTPError as e:
            if watchdog.stopped.is_set():
                raise TooSlow(f"no whole answer within {timeout:g} s") from e
            raise


def _read(response: httpx.Response, deadline: float, timeout: float, max_bytes: int) -> Answer:
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

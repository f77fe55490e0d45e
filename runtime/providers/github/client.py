"""One fetch's conversation with GitHub's REST API, over httpx, every wait and read bounded.

- Requests carry ``Accept``, ``X-GitHub-Api-Version``, ``User-Agent`` and the token as
  ``Authorization: Bearer``, only to the origin of ``api_url``: a redirect is followed only
  within that origin (GitHub's 301 for a renamed repository), a ``Link`` or a redirect to
  another host ends the fetch and the token is not sent there (httpx's own redirects are off).
- Every answer is read in chunks as it arrives (``iter_raw``, no decompression: hz asks for
  ``identity`` and refuses an encoded body) against the fetch's byte budget, and cut at it;
  each read waits at most ``timeout_seconds`` and never past the fetch's deadline, checked
  between chunks too. A watchdog holds the whole request to the deadline: at it, the
  connection's socket is shut down (a server that trickles header lines, each within the
  read timeout, is stopped there too, not when h11's header limit is reached).
- Rate limits (403/429 with ``retry-after``, or ``x-ratelimit-remaining: 0`` and
  ``x-ratelimit-reset``, or a secondary limit's message) are waited with the request's
  injected sleep while the total stays within ``max_wait_seconds`` and the deadline;
  otherwise ``HZ723`` says when the limit resets, in GitHub's own time (its ``Date`` header).
- ``ETag``s are kept by the provider (``ResponseCache``): a repeated ``GET`` sends
  ``If-None-Match`` and a ``304`` (free of the primary rate limit) answers from the cache.

httpx is imported by this module only; the provider imports it when it fetches, so hz works
without the ``github`` extra until a ``github`` input is read.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from hz import __version__
from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.printable import cut, printable
from hz.runtime.providers.github.settings import GitHubSettings, key_name
from hz.runtime.providers.protocol import (
    HZ721,
    HZ722,
    HZ723,
    HZ724,
    HZ725,
    HZ726,
    FetchRequest,
    ProviderError,
)
from hz.runtime.providers.watchdog import Watchdog

API_VERSION = "2022-11-28"
JSON_MEDIA = "application/vnd.github+json"
DIFF_MEDIA = "application/vnd.github.diff"
PER_PAGE = 100
#: What of an error answer is read for its message.
ERROR_BYTES = 64 * 1024
MAX_REDIRECTS = 5
#: Rate-limited answers waited out for one request before giving up, whatever the ceiling.
MAX_RATE_LIMIT_WAITS = 5
#: A secondary rate limit without ``retry-after``: GitHub says to wait at least a minute.
SECONDARY_WAIT_SECONDS = 60
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MESSAGE_CHARS = 200
MAX_SHOWN_WAIT = 10.0**8


class ResponseCache:
    """``ETag`` and body of recent ``200`` answers by URL and media type, bounded in entries
    and bytes, shared by the fetches of one provider instance (one command, or one worker)."""

    def __init__(self, *, max_entries: int = 256, max_bytes: int = 16 * 1024 * 1024) -> None:
        self._entries: OrderedDict[tuple[str, str], tuple[str, bytes]] = OrderedDict()
        self._bytes = 0
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> tuple[str, bytes] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[str, str], etag: str, body: bytes) -> None:
        if len(body) > self._max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old[1])
            self._entries[key] = (etag, body)
            self._bytes += len(body)
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= len(dropped)


@dataclass(frozen=True, slots=True)
class Answer:
    body: bytes
    #: The next page's URL (``Link: <…>; rel="next"``), already checked to be on the API's origin.
    next_url: str | None
    truncated: bool = False


class Session:
    """The requests of one fetch: one httpx client, one byte budget, one wait budget."""

    def __init__(
        self,
        settings: GitHubSettings,
        token: str,
        request: FetchRequest,
        cache: ResponseCache,
    ) -> None:
        self.settings = settings
        self._token = token
        self._request = request
        self._cache = cache
        self._origin = _origin(settings.api_url)
        self._prefix = urlsplit(settings.api_url).path.rstrip("/")
        #: The fetch's cap: what the value may take as the fetch counts it.
        self.cap = min(settings.max_bytes, request.max_bytes)
        #: The bytes this fetch's answers may still take as read.
        self.budget = self.cap
        self._waited = 0.0
        # The token as it may appear in a message: raw, escaped (a repr, JSON), URL-quoted.
        forms = {token, repr(token)[1:-1], repr(token.encode())[2:-1], json.dumps(token)[1:-1]}
        self._secrets = sorted((f for f in forms if f), key=len, reverse=True)
        self._watchdog = Watchdog()
        # trust_env: the operator's proxy (HTTPS_PROXY) and CA bundle (SSL_CERT_FILE) apply;
        # httpx reads no .netrc. Redirects are hz's business (same origin only).
        self._client = httpx.Client(follow_redirects=False, trust_env=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()

    def url(self, path: str) -> str:
        return f"{self.settings.api_url}{path}"

    def json(self, url: str, what: str, *, page: int = 1) -> tuple[Any, str | None]:
        """One JSON answer and the URL of its next page."""
        answer = self.get(url, what, page=page)
        try:
            return strict_json.loads(answer.body), answer.next_url
        except (strict_json.JsonError, RecursionError) as e:
            raise ProviderError(
                HZ724,
                f"GitHub's answer for {what} ({self._shown(url, page)}) is not JSON: "
                f"{self.outside(str(e))}",
                hint="check [providers.github] api_url: it must be GitHub's REST API",
            ) from e

    def pages(self, url: str, what: str) -> Any:
        """Every page of a list, following ``Link: rel="next"``: ``HZ725`` past
        ``max_pages``. Yields each page's items (the caller may stop early)."""
        page = 1
        next_url: str | None = url
        while next_url is not None:
            if page > self.settings.max_pages:
                raise ProviderError(
                    HZ725,
                    f"{what} take more than {self.settings.max_pages} pages of {PER_PAGE} "
                    f"({key_name('max_pages')})",
                    hint="narrow the window or the arguments, or raise max_pages",
                )
            items, next_url = self.json(next_url, what, page=page)
            if not isinstance(items, list):
                raise ProviderError(
                    HZ724,
                    f"GitHub's answer for {what} ({self._shown(url, page)}) is not a list "
                    f"(got {_kind(items)})",
                )
            yield items
            page += 1

    def get(
        self,
        url: str,
        what: str,
        *,
        accept: str = JSON_MEDIA,
        page: int = 1,
        cut_at: int = 0,
        too_large: int | None = None,
    ) -> Answer:
        """One answer's body within the budget (``HZ725`` past it), or with ``cut_at`` cut
        there and marked ``truncated``; the status ``too_large`` (GitHub's refusal to show
        something that big) is an empty, truncated answer. Redirects within the API's origin
        are followed."""
        rate_limit_waits = 0
        redirects = 0
        while True:
            remaining = self._request.deadline - self._request.clock()
            if remaining <= 0:
                raise self._timeout(url, what, page)
            key = (url, accept)
            cached = self._cache.get(key)
            headers = {
                "Accept": accept,
                "Accept-Encoding": "identity",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": f"hz/{__version__}",
                "Authorization": f"Bearer {self._token}",
            }
            if cached is not None:
                headers["If-None-Match"] = cached[0]
            timeout = httpx.Timeout(min(self.settings.timeout_seconds, remaining))
            trace = {"trace": self._watchdog.trace}
            try:
                with (
                    self._watchdog.armed(remaining),
                    self._client.stream(
                        "GET", url, headers=headers, timeout=timeout, extensions=trace
                    ) as response,
                ):
                    status = response.status_code
                    if status in _REDIRECTS and "location" in response.headers:
                        redirects += 1
                        url = self._redirect(url, response, what, page, redirects)
                        continue
                    if status == 304 and cached is not None:
                        return self._from_cache(cached[1], response, url, what, page, cut_at)
                    if status == too_large:
                        return Answer(b"", None, truncated=True)
                    if status != 200:
                        message = self.outside(self._error_message(response))
                        wait = _rate_limit(status, response.headers, message)
                        if wait is None:
                            raise self._status(status, response, message, url, what, page)
                        rate_limit_waits += 1
                        self._wait(wait, response.headers, url, what, page, rate_limit_waits)
                        continue
                    body, truncated = self._read(response, url, what, page, cut_at)
                    etag = response.headers.get("etag")
                    if etag and not truncated:
                        self._cache.put(key, etag, body)
                    return Answer(body, self._next(response, url, what, page), truncated)
            except httpx.TimeoutException as e:
                raise self._timeout(url, what, page) from e
            except httpx.HTTPError as e:
                if self._watchdog.stopped.is_set():  # shut at the deadline
                    raise self._timeout(url, what, page) from e
                raise ProviderError(
                    HZ722,
                    f"GitHub could not be reached for {what} ({self._shown(url, page)}): "
                    f"{type(e).__name__}: {self.outside(str(e))}",
                    hint=f"check {key_name('api_url')} and the network (a proxy is taken from "
                    "HTTPS_PROXY)",
                ) from e

    def outside(self, text: str) -> str:
        """Text from GitHub (or from httpx, which may quote the headers sent) for a message:
        the token never, in no escaped form either; control characters escaped."""
        shown = printable(self._redact(text))
        return cut(self._redact(shown), _MESSAGE_CHARS)

    def _redact(self, text: str) -> str:
        for form in self._secrets:
            text = text.replace(form, "[token]")
        return text

    # -- reading -----------------------------------------------------------------------------

    def _read(
        self, response: httpx.Response, url: str, what: str, page: int, cut_at: int
    ) -> tuple[bytes, bool]:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise ProviderError(
                HZ724,
                f"GitHub's answer for {what} ({self._shown(url, page)}) is encoded "
                f"({self.outside(encoding)}) though hz asked for none",
            )
        limit = cut_at if cut_at else self.budget
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_raw():
            if self._request.clock() > self._request.deadline:
                raise self._timeout(url, what, page)
            if size + len(chunk) > limit:
                if cut_at:
                    chunks.append(chunk[: limit - size])
                    size = limit
                    self.budget -= size
                    return b"".join(chunks), True
                raise self._too_large(url, what, page)
            chunks.append(chunk)
            size += len(chunk)
        self.budget -= size
        return b"".join(chunks), False

    def _from_cache(
        self, body: bytes, response: httpx.Response, url: str, what: str, page: int, cut_at: int
    ) -> Answer:
        if cut_at and len(body) > cut_at:
            self.budget -= cut_at
            return Answer(body[:cut_at], self._next(response, url, what, page), True)
        if len(body) > self.budget:
            raise self._too_large(url, what, page)
        self.budget -= len(body)
        return Answer(body, self._next(response, url, what, page))

    def _error_message(self, response: httpx.Response) -> str:
        """GitHub's ``message`` of an error answer (read up to ``ERROR_BYTES``), else the
        status's reason."""
        data = b""
        for chunk in response.iter_raw():
            data += chunk
            if len(data) >= ERROR_BYTES:
                break
        try:
            parsed = strict_json.loads(data[:ERROR_BYTES])
        except (strict_json.JsonError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return str(parsed["message"])
        return response.reason_phrase

    # -- where to go next --------------------------------------------------------------------

    def _next(self, response: httpx.Response, url: str, what: str, page: int) -> str | None:
        link = response.headers.get("link")
        if not link:
            return None
        target = response.links.get("next", {}).get("url")
        if not target:
            return None
        try:
            absolute = str(response.url.join(target))
        except httpx.InvalidURL as e:
            raise ProviderError(
                HZ724,
                f"GitHub's next page of {what} ({self._shown(url, page)}) is no valid URL "
                f"({self.outside(target)}): {self.outside(str(e))}",
            ) from e
        if _origin(absolute) != self._origin:
            raise ProviderError(
                HZ724,
                f"GitHub's next page of {what} ({self._shown(url, page)}) is on another host "
                f"({self.outside(urlsplit(absolute).netloc)}): hz sends the token only to "
                f"{key_name('api_url')}",
            )
        return absolute

    def _redirect(
        self, url: str, response: httpx.Response, what: str, page: int, redirects: int
    ) -> str:
        # httpx has parsed the location already (an invalid one is its RemoteProtocolError).
        target = str(response.url.join(response.headers["location"]))
        if _origin(target) != self._origin:
            raise ProviderError(
                HZ722,
                f"GitHub redirected {what} ({self._shown(url, page)}) to another host "
                f"({self.outside(urlsplit(target).netloc)}); hz sends the token only to "
                f"{key_name('api_url')} and did not follow",
            )
        if redirects > MAX_REDIRECTS:
            raise ProviderError(
                HZ722,
                f"GitHub redirected {what} ({self._shown(url, page)}) more than "
                f"{MAX_REDIRECTS} times",
            )
        return target

    # -- rate limits -------------------------------------------------------------------------

    def _wait(
        self,
        wait: float,
        headers: httpx.Headers,
        url: str,
        what: str,
        page: int,
        attempt: int,
    ) -> None:
        try:
            end = _server_time(headers) + timedelta(seconds=wait)
        except OverflowError:  # GitHub's Date is near the year 9999: hz's own clock then
            end = datetime.now(UTC) + timedelta(seconds=wait)
        until = end.strftime("%Y-%m-%dT%H:%M:%SZ")
        limited = (
            f"GitHub's rate limit stopped {what} ({self._shown(url, page)}) until {until} "
            f"({wait:g} s)"
        )
        hint = (
            "run it again after that time, or raise max_wait_seconds (and the fetch's timeout) "
            "to wait for it"
        )
        ceiling = self.settings.max_wait_seconds
        if attempt > MAX_RATE_LIMIT_WAITS:
            raise ProviderError(
                HZ723, f"{limited}, still after {MAX_RATE_LIMIT_WAITS} waits", hint=hint
            )
        if self._waited + wait > ceiling:
            waited = f", after {self._waited:g} s waited already" if self._waited else ""
            raise ProviderError(
                HZ723,
                f"{limited}: longer than {key_name('max_wait_seconds')} allows "
                f"({ceiling:g} s{waited})",
                hint=hint,
            )
        left = self._request.deadline - self._request.clock()
        if wait > left:
            raise ProviderError(
                HZ723,
                f"{limited}: past the fetch's deadline ({max(left, 0):.0f} s left)",
                hint=hint,
            )
        self._request.sleep(wait)
        self._waited += wait

    # -- errors ------------------------------------------------------------------------------

    def _status(
        self, status: int, response: httpx.Response, message: str, url: str, what: str, page: int
    ) -> ProviderError:
        answered = f"GitHub answered {status} {self.outside(response.reason_phrase)}".rstrip()
        if status == 401:
            return ProviderError(
                HZ721,
                f"GitHub refused the token in {self.settings.token_env} "
                f"({key_name('token_env')}): {status} {message}",
                hint="check that the token is valid, not expired and not revoked",
            )
        hint = None
        if status == 404:
            hint = (
                "check the repository and the number; GitHub also answers 404 for a private "
                "repository the token cannot read"
            )
        elif status == 403:
            hint = "the token may lack read access to the repository (docs/providers-github.md)"
        return ProviderError(
            HZ722, f"{answered} for {what} ({self._shown(url, page)}): {message}", hint=hint
        )

    def _timeout(self, url: str, what: str, page: int) -> ProviderError:
        return ProviderError(
            HZ726,
            f"GitHub did not answer {what} ({self._shown(url, page)}) in time (the fetch's "
            f"deadline, or {self.settings.timeout_seconds:g} s without a byte: "
            f"{key_name('timeout_seconds')})",
            hint="try again later, or raise the timeout",
        )

    def _too_large(self, url: str, what: str, page: int) -> ProviderError:
        cap = min(self.settings.max_bytes, self._request.max_bytes)
        return ProviderError(
            HZ725,
            f"GitHub's answers for {what} ({self._shown(url, page)}) are larger than the "
            f"{cap}-byte cap of one fetch ({key_name('max_bytes')})",
            hint="narrow the window or the arguments, or raise max_bytes",
        )

    def _shown(self, url: str, page: int) -> str:
        """``GET /repos/acme/app/pulls`` (the path under ``api_url``, no query), and the page
        when it is not the first."""
        path = urlsplit(url).path
        if self._prefix and path.startswith(self._prefix):
            path = path[len(self._prefix) :]
        shown = f"GET {self.outside(path)}"
        return shown if page == 1 else f"{shown}, page {page}"


def _rate_limit(status: int, headers: httpx.Headers, message: str) -> float | None:
    """Seconds to wait when the answer is a rate limit, else ``None``."""
    if status not in (403, 429):
        return None
    retry_after = headers.get("retry-after", "").strip()
    remaining = headers.get("x-ratelimit-remaining", "").strip()
    reset = headers.get("x-ratelimit-reset", "").strip()
    if retry_after.isdigit() and len(retry_after) <= 9:
        wait = float(retry_after)
    elif remaining == "0" and reset.isdigit() and len(reset) <= 12:
        wait = int(reset) - _server_time(headers).timestamp()
    elif status == 429 or "rate limit" in message.lower():
        wait = SECONDARY_WAIT_SECONDS
    else:
        return None
    # A reset years away is past any ceiling; kept in the range a date can show.
    return min(max(wait, 1.0), MAX_SHOWN_WAIT)


def _server_time(headers: httpx.Headers) -> datetime:
    """GitHub's time (its ``Date`` header), which its reset times are on; hz's own without."""
    date = headers.get("date")
    if date:
        try:
            return parsedate_to_datetime(date).astimezone(UTC)
        except (TypeError, ValueError, OverflowError):
            pass
    return datetime.now(UTC)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:  # no port at all: no origin hz talks to
        return "", "", None
    return parts.scheme, (parts.hostname or "").lower(), port


def _kind(value: Any) -> str:
    return {dict: "an object", str: "a string", type(None): "null"}.get(type(value), "a value")

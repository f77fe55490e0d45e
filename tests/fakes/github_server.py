"""A fake of GitHub's REST API for the ``github`` provider: the endpoints hz reads, with
GitHub's payload shapes, ``Link`` pagination, ``ETag``s, and failures a test chooses.

    with FakeGitHub() as github:
        github.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        github.fail("/repos/acme/app/pulls", rate_limited(reset_in=30))

Writes (``POST …/issues/{n}/comments``, ``POST …/issues``, ``PATCH …/issues/{n}``,
``POST …/statuses/{sha}``, listed back by ``GET …/commits/{sha}/statuses``) are stored first;
``after_write`` loses their answer (held, dropped, a 502) to test what hz does then.

Served like GitHub: ``GET /repos/{o}/{r}/pulls`` (``state``, ``base``, ``sort=updated``,
``direction``), ``/pulls/{n}`` (JSON, or the diff for ``Accept: application/vnd.github.diff``),
``/pulls/{n}/files``, ``/issues`` (``state``, ``since``, ``labels``; pull requests included, as
GitHub does), ``/issues/{n}``, ``/issues/{n}/comments``, ``/rate_limit``. Lists take
``per_page`` (default 30, at most 100) and ``page``, and answer with ``Link`` ``next``/``last``.

The server's clock is ``now`` (its ``Date`` header), so a rate limit's reset is exact. Every
request is recorded with its headers (``seen``): a test proves where the token went.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.fakes.sse_server import JsonSseHandler, LoopbackServer

NOW = datetime(2026, 3, 9, 12, 0, 0, tzinfo=UTC)
DOCS = "https://docs.github.com/rest"


@dataclass(frozen=True)
class Fault:
    """What a matching request gets instead of its answer. ``status`` and ``body`` answer at
    once; ``delay`` holds the headers back that many seconds; ``trickle`` sends ``body`` one
    byte every that many seconds; ``huge`` streams a JSON list of that many bytes;
    ``header_trickle`` sends one header line every that many seconds, and never a body."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    delay: float = 0.0
    trickle: float = 0.0
    huge: int = 0
    header_trickle: float = 0.0


def rate_limited(reset_in: int, *, status: int = 403) -> Fault:
    """The primary rate limit: ``x-ratelimit-remaining: 0``, reset ``reset_in`` s after now."""
    reset = int(NOW.timestamp()) + reset_in
    return Fault(
        status,
        (
            ("x-ratelimit-limit", "5000"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-used", "5000"),
            ("x-ratelimit-reset", str(reset)),
            ("x-ratelimit-resource", "core"),
        ),
        _error("API rate limit exceeded for user ID 1."),
    )


def retry_after(seconds: int, *, status: int = 429) -> Fault:
    """A secondary rate limit with ``retry-after``."""
    return Fault(
        status,
        (("retry-after", str(seconds)),),
        _error("You have exceeded a secondary rate limit. Please wait a few minutes."),
    )


def error(status: int, message: str) -> Fault:
    return Fault(status, (), _error(message))


def malformed(body: bytes = b'[{"number": 1, "title": ') -> Fault:
    return Fault(200, (), body)


def slow(seconds: float) -> Fault:
    return Fault(delay=seconds)


def trickle(body: bytes, every: float) -> Fault:
    return Fault(body=body, trickle=every)


def header_trickle(every: float) -> Fault:
    return Fault(header_trickle=every)


def huge(size: int) -> Fault:
    return Fault(huge=size)


def redirect(location: str, status: int = 302) -> Fault:
    return Fault(status, (("Location", location),))


def _error(message: str) -> bytes:
    return json.dumps({"message": message, "documentation_url": DOCS}).encode()


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


@dataclass
class _State:
    origin: str = ""
    prefix: str = ""
    now: datetime = NOW
    pulls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    files: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    diffs: dict[tuple[str, int], str] = field(default_factory=dict)
    issues: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    comments: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    faults: list[tuple[re.Pattern[str], str | None, Fault, list[int], str]] = field(
        default_factory=list
    )
    #: Writes whose answer goes wrong *after* the write is stored: (path, mode, times left).
    after_write: list[tuple[re.Pattern[str], str, list[int]]] = field(default_factory=list)
    #: Writes whose answer (the stored item) has these fields changed; None: left out.
    answer_fields: list[tuple[re.Pattern[str], dict[str, Any], bool]] = field(default_factory=list)
    statuses: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    #: The token's user (``GET /user``, and the author of every write); None: a token that
    #: cannot ask (a GitHub App's).
    login: str | None = "hz-bot"
    stored: threading.Event = field(default_factory=threading.Event)
    seen: list[Seen] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def fault_for(self, path: str, accept: str, method: str = "GET") -> Fault | None:
        with self.lock:
            for pattern, media, fault, left, verb in self.faults:
                if (
                    pattern.fullmatch(path)
                    and media in (None, accept)
                    and verb == method
                    and left[0] != 0
                ):
                    left[0] -= 1
                    return fault
        return None


def _user(login: str) -> dict[str, Any]:
    return {
        "login": login,
        "id": sum(login.encode()),
        "node_id": f"U_{login}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{sum(login.encode())}?v=4",
        "html_url": f"https://github.com/{login}",
        "type": "User",
        "site_admin": False,
    }


def _label(repo: str, name: str) -> dict[str, Any]:
    return {
        "id": sum(name.encode()),
        "node_id": f"LA_{name}",
        "url": f"https://api.github.com/repos/{repo}/labels/{name}",
        "name": name,
        "color": "d73a4a",
        "default": False,
        "description": None,
    }


_UTC = "%Y-%m-%dT%H:%M:%SZ"


class _Handler(JsonSseHandler):
    server: Any

    def date_time_string(self, timestamp: float | None = None) -> str:
        return format_datetime(self.server.state.now, usegmt=True)

    def handle(self) -> None:
        # The client stopped reading (a cap, a timeout): what the test is about.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    def do_GET(self) -> None:
        state: _State = self.server.state
        parts = urlsplit(self.path)
        if not parts.path.startswith(state.prefix):
            self._answer(404, {"message": "Not Found", "documentation_url": DOCS}, [], {})
            return
        parts = parts._replace(path=parts.path[len(state.prefix) :])
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.seen.append(Seen("GET", parts.path, query, headers))
        fault = state.fault_for(parts.path, headers.get("accept", ""))
        if fault is not None:
            self._fault(fault)
            return
        status, payload, extra = self._route(parts.path, query, headers)
        self._answer(status, payload, extra, headers)

    def do_POST(self) -> None:
        self._write("POST")

    def do_PATCH(self) -> None:
        self._write("PATCH")

    def _write(self, method: str) -> None:
        """A write: stored first, then answered, unless a fault says the answer is lost
        (``hold``: never answered until released; ``drop``: the connection closed; ``5xx``:
        a 502 after storing)."""
        state: _State = self.server.state
        path = urlsplit(self.path).path[len(state.prefix) :]
        headers = {k.lower(): v for k, v in self.headers.items()}
        length = min(int(headers.get("content-length", "0") or 0), 1 << 20)
        data = json.loads(self.rfile.read(length) or b"{}")
        with state.lock:
            state.seen.append(Seen(method, path, {}, headers))
        fault = state.fault_for(path, headers.get("accept", ""), method)
        if fault is not None:
            self._fault(fault)
            return
        status, payload = self._store(method, path, data)
        with state.lock:
            kept = payload
            for pattern, fields, stored in state.answer_fields:
                if pattern.fullmatch(path) and isinstance(payload, dict):
                    payload = {k: v for k, v in {**payload, **fields}.items() if v is not None}
                    if stored and isinstance(kept, dict):  # what GET lists back holds it too
                        kept.update(fields)
                        for name in [k for k, v in fields.items() if v is None]:
                            kept.pop(name, None)
        mode = None
        with state.lock:
            for pattern, chosen, left in state.after_write:
                if pattern.fullmatch(path) and left[0] != 0:
                    left[0] -= 1
                    mode = chosen
                    break
        state.stored.set()
        if mode == "hold":
            state.release.wait(600)
            return
        if mode == "drop":
            self.close_connection = True
            return
        if mode == "5xx":
            self._answer(502, {"message": "Server Error"}, [], {})
            return
        self._answer(status, payload, [], {})

    def _store(self, method: str, path: str, data: dict[str, Any]) -> tuple[int, Any]:
        state: _State = self.server.state
        comment = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path)
        issue = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues(?:/(\d+))?", path)
        status = re.fullmatch(r"/repos/([^/]+/[^/]+)/statuses/([0-9a-f]{40})", path)
        with state.lock:
            if comment is not None and method == "POST":
                repo, number = comment[1], int(comment[2])
                items = state.comments.setdefault((repo, number), [])
                index = 3000 + sum(len(v) for v in state.comments.values())
                item = {
                    "id": index,
                    "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{index}",
                    "user": _user(state.login or "hz-app[bot]"),
                    "created_at": state.now.strftime(_UTC),
                    "updated_at": state.now.strftime(_UTC),
                    "body": data.get("body", ""),
                }
                items.append(item)
                return 201, item
            if issue is not None and issue[2] is None and method == "POST":
                repo = issue[1]
                number = 1 + max([i["number"] for i in state.issues.get(repo, [])] or [0])
            elif issue is not None and method == "PATCH":
                repo, number = issue[1], int(issue[2])
                found = next((i for i in state.issues.get(repo, []) if i["number"] == number), None)
                if found is None:
                    return 404, {"message": "Not Found", "documentation_url": DOCS}
                found["body"] = data.get("body", found["body"])
                return 200, found
            elif status is not None:
                item = {
                    "state": data.get("state"),
                    "context": data.get("context"),
                    "description": data.get("description"),
                    "creator": _user(state.login or "hz-app[bot]"),
                }
                state.statuses.setdefault((status[1], status[2]), []).insert(0, item)
                return 201, item
            else:
                return 404, {"message": "Not Found", "documentation_url": DOCS}
            created = {
                "number": number,
                "title": data.get("title", ""),
                "body": data.get("body"),
                "state": "open",
                "labels": [_label(repo, name) for name in data.get("labels", [])],
                "html_url": f"https://github.com/{repo}/issues/{number}",
                "user": _user(state.login or "hz-app[bot]"),
                "created_at": state.now.strftime(_UTC),
                "updated_at": state.now.strftime(_UTC),
            }
            state.issues.setdefault(repo, []).append(created)
            return 201, created

    # -- answers -----------------------------------------------------------------------------

    def _answer(
        self,
        status: int,
        payload: Any,
        extra: list[tuple[str, str]],
        request_headers: dict[str, str],
    ) -> None:
        if isinstance(payload, str):
            body, kind = payload.encode(), "text/plain; charset=utf-8"
        else:
            body, kind = json.dumps(payload).encode(), "application/json; charset=utf-8"
        if status == 200:
            etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
            extra = [*extra, ("ETag", etag)]
            if request_headers.get("if-none-match") == etag:
                status, body = 304, b""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (*_RATE_HEADERS, *extra):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _fault(self, fault: Fault) -> None:
        state: _State = self.server.state
        if fault.delay and state.release.wait(fault.delay):
            return
        if fault.huge:
            self._huge(fault.huge)
            return
        if fault.header_trickle:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            while not state.release.wait(fault.header_trickle):
                self.wfile.write(b"X-A: a\r\n")
                self.wfile.flush()
            return
        self.send_response(fault.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(fault.body)))
        for name, value in fault.headers:
            self.send_header(name, value)
        self.end_headers()
        if not fault.trickle:
            self.wfile.write(fault.body)
            return
        for index in range(len(fault.body)):
            self.wfile.write(fault.body[index : index + 1])
            self.wfile.flush()
            if state.release.wait(fault.trickle):
                return

    def _huge(self, size: int) -> None:
        """A JSON list of ``size`` bytes, generated as it is sent (never held whole)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        item = b'{"number": 1, "title": "' + b"x" * 65000 + b'"},'
        sent = 1
        self.wfile.write(b"[")
        while sent + len(item) + 1 < size:
            self.wfile.write(item)
            sent += len(item)
        self.wfile.write(b" " * (size - sent - 1) + b"]")

    # -- routes ------------------------------------------------------------------------------

    def _route(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> tuple[int, Any, list[tuple[str, str]]]:
        state: _State = self.server.state
        if path == "/user":  # the token's own user (GitHub App tokens are refused: 403)
            if state.login is None:
                return 403, {"message": "Resource not accessible by integration"}, []
            return 200, _user(state.login), []
        if path == "/rate_limit":
            core = {"limit": 5000, "remaining": 4990, "reset": int(state.now.timestamp()) + 3600}
            return 200, {"resources": {"core": core}, "rate": core}, []
        statuses = re.fullmatch(r"/repos/([^/]+/[^/]+)/commits/([0-9a-f]{40})/statuses", path)
        if statuses is not None:
            with state.lock:
                found = list(state.statuses.get((statuses[1], statuses[2]), []))
            return self._page(path, query, found)
        match = re.fullmatch(r"/repos/([^/]+/[^/]+)/(pulls|issues)(?:/(\d+)(?:/(\w+))?)?", path)
        if match is None:
            return 404, {"message": "Not Found", "documentation_url": DOCS}, []
        repo, kind, number, sub = match[1], match[2], match[3], match[4]
        if number is None:
            items = state.pulls.get(repo) if kind == "pulls" else state.issues.get(repo)
            if items is None:
                return 404, {"message": "Not Found", "documentation_url": DOCS}, []
            return self._page(path, query, _filtered(kind, items, query))
        n = int(number)
        if kind == "pulls" and sub is None:
            pull = next((p for p in state.pulls.get(repo, []) if p["number"] == n), None)
            if pull is None:
                return 404, {"message": "Not Found", "documentation_url": DOCS}, []
            if headers.get("accept") == "application/vnd.github.diff":
                return 200, state.diffs.get((repo, n), ""), []
            return 200, pull, []
        if kind == "pulls" and sub == "files" and (repo, n) in state.files:
            return self._page(path, query, state.files[(repo, n)])
        if kind == "issues" and sub is None:
            found = next((i for i in state.issues.get(repo, []) if i["number"] == n), None)
            if found is not None:
                return 200, found, []
        if kind == "issues" and sub == "comments" and (repo, n) in state.comments:
            return self._page(path, query, state.comments[(repo, n)])
        if (
            kind == "issues"
            and sub == "comments"
            and any(p["number"] == n for p in state.pulls.get(repo, []))
        ):
            return self._page(path, query, [])
        return 404, {"message": "Not Found", "documentation_url": DOCS}, []

    def _page(
        self, path: str, query: dict[str, str], items: list[dict[str, Any]]
    ) -> tuple[int, Any, list[tuple[str, str]]]:
        per_page = min(int(query.get("per_page", "30")), 100)
        page = int(query.get("page", "1"))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        base = f"{self.server.state.origin}{self.server.state.prefix}{path}"

        def at(number: int) -> str:
            return f"{base}?{urlencode({**query, 'page': str(number)})}"

        if page < last:
            links.append(f'<{at(page + 1)}>; rel="next"')
            links.append(f'<{at(last)}>; rel="last"')
        if page > 1:
            links.append(f'<{at(page - 1)}>; rel="prev"')
            links.append(f'<{at(1)}>; rel="first"')
        return 200, chunk, [("Link", ", ".join(links))] if links else []


_RATE_HEADERS = (
    ("x-ratelimit-limit", "5000"),
    ("x-ratelimit-remaining", "4990"),
    ("x-ratelimit-used", "10"),
    ("x-ratelimit-resource", "core"),
    ("X-GitHub-Api-Version-Selected", "2022-11-28"),
)


def _filtered(
    kind: str, items: list[dict[str, Any]], query: dict[str, str]
) -> list[dict[str, Any]]:
    state = query.get("state", "open")
    found = [i for i in items if state == "all" or i["state"] == state]
    if kind == "pulls" and "base" in query:
        found = [i for i in found if i["base"]["ref"] == query["base"]]
    if kind == "issues" and "since" in query:
        since = datetime.fromisoformat(query["since"])
        found = [i for i in found if datetime.fromisoformat(i["updated_at"]) >= since]
    if kind == "issues" and "labels" in query:
        wanted = set(query["labels"].split(","))
        found = [i for i in found if wanted <= {label["name"] for label in i["labels"]}]
    key = "updated_at" if query.get("sort") == "updated" else "created_at"
    return sorted(found, key=lambda i: i[key], reverse=query.get("direction", "desc") == "desc")


class FakeGitHub(LoopbackServer[_State]):
    """The server on 127.0.0.1 and a free port (``host="localhost"`` names it by another host
    for redirect tests), under ``prefix`` as GitHub Enterprise Server's ``/api/v3``."""

    def __init__(self, *, host: str = "127.0.0.1", prefix: str = "") -> None:
        super().__init__(_Handler, _State(prefix=prefix))
        self._host = host
        # A short poll: closing the server (every test) then takes no half second.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """The API's base URL (GitHub Enterprise Server's has a path: ``prefix``)."""
        return self.origin.replace("127.0.0.1", self._host, 1) + self.state.prefix

    def __enter__(self) -> FakeGitHub:
        self.state.origin = self.url.removesuffix(self.state.prefix)
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def seen(self) -> list[Seen]:
        with self.state.lock:
            return list(self.state.seen)

    def fail(
        self,
        path: str,
        fault: Fault,
        *,
        times: int = -1,
        accept: str | None = None,
        method: str = "GET",
    ) -> None:
        """Answer ``method`` requests whose path (a regular expression, no query) matches,
        and whose ``Accept`` is ``accept`` when given, with ``fault``, ``times`` times (-1:
        always)."""
        with self.state.lock:
            self.state.faults.append((re.compile(path), accept, fault, [times], method))

    def after_write(self, path: str, mode: str, *, times: int = 1) -> None:
        """Store the writes to ``path`` (a regular expression), then lose the answer:
        ``hold`` (no answer until the server closes), ``drop`` (the connection closed) or
        ``5xx`` (a 502)."""
        with self.state.lock:
            self.state.after_write.append((re.compile(path), mode, [times]))

    def answer_fields(self, path: str, *, stored: bool = False, **fields: Any) -> None:
        """Store the writes to ``path`` (a regular expression), then answer with ``fields``
        changed in what was stored (None: the field left out), as a server whose answer lacks
        or garbles one; ``stored``: changed in what is stored too (and listed back)."""
        with self.state.lock:
            self.state.answer_fields.append((re.compile(path), fields, stored))

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        with self.state.lock:
            return list(self.state.comments.get((repo, number), []))

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        title: str = "",
        merged_at: str | None = None,
        updated_at: str | None = None,
        created_at: str = "2026-01-05T09:00:00Z",
        state: str = "closed",
        author: str | None = "octocat",
        body: str | None = "",
        labels: tuple[str, ...] = (),
        base: str = "main",
        files: tuple[dict[str, Any], ...] = (),
        diff: str = "",
    ) -> dict[str, Any]:
        api = f"https://api.github.com/repos/{repo}"
        html = f"https://github.com/{repo}"
        pull = {
            "url": f"{api}/pulls/{number}",
            "id": 1000 + number,
            "node_id": f"PR_{number}",
            "html_url": f"{html}/pull/{number}",
            "diff_url": f"{html}/pull/{number}.diff",
            "patch_url": f"{html}/pull/{number}.patch",
            "issue_url": f"{api}/issues/{number}",
            "number": number,
            "state": state,
            "locked": False,
            "title": title or f"Pull request {number}",
            "user": None if author is None else _user(author),
            "body": body,
            "labels": [_label(repo, name) for name in labels],
            "created_at": created_at,
            "updated_at": updated_at or merged_at or created_at,
            "closed_at": merged_at,
            "merged_at": merged_at,
            "merge_commit_sha": hashlib.sha1(f"{repo}{number}".encode()).hexdigest(),
            "draft": False,
            "head": {"label": f"octocat:topic-{number}", "ref": f"topic-{number}", "sha": "a" * 40},
            "base": {"label": f"acme:{base}", "ref": base, "sha": "b" * 40},
            "author_association": "MEMBER",
        }
        with self.state.lock:
            self.state.pulls.setdefault(repo, []).append(pull)
            self.state.files[(repo, number)] = [_file(repo, f) for f in files]
            self.state.diffs[(repo, number)] = diff
        return pull

    def add_issue(
        self,
        repo: str,
        number: int,
        *,
        title: str = "",
        updated_at: str = "2026-03-05T10:00:00Z",
        state: str = "open",
        author: str | None = "octocat",
        body: str | None = "",
        labels: tuple[str, ...] = (),
        pull_request: bool = False,
        comments: tuple[tuple[str | None, str, str], ...] = (),
    ) -> dict[str, Any]:
        """``comments``: (author, created_at, body) each."""
        api = f"https://api.github.com/repos/{repo}"
        issue: dict[str, Any] = {
            "url": f"{api}/issues/{number}",
            "repository_url": api,
            "comments_url": f"{api}/issues/{number}/comments",
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "id": 2000 + number,
            "node_id": f"I_{number}",
            "number": number,
            "title": title or f"Issue {number}",
            "user": None if author is None else _user(author),
            "labels": [_label(repo, name) for name in labels],
            "state": state,
            "locked": False,
            "assignee": None,
            "assignees": [],
            "comments": len(comments),
            "created_at": "2026-01-02T08:00:00Z",
            "updated_at": updated_at,
            "closed_at": None if state == "open" else updated_at,
            "author_association": "MEMBER",
            "body": body,
        }
        if pull_request:
            issue["pull_request"] = {"url": f"{api}/pulls/{number}", "merged_at": None}
        with self.state.lock:
            self.state.issues.setdefault(repo, []).append(issue)
            self.state.comments[(repo, number)] = [
                {
                    "id": 3000 + index,
                    "node_id": f"IC_{index}",
                    "url": f"{api}/issues/comments/{3000 + index}",
                    "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{index}",
                    "user": None if who is None else _user(who),
                    "created_at": created,
                    "updated_at": created,
                    "author_association": "MEMBER",
                    "body": text,
                }
                for index, (who, created, text) in enumerate(comments)
            ]
        return issue


def _file(repo: str, spec: dict[str, Any]) -> dict[str, Any]:
    name = spec["filename"]
    return {
        "sha": hashlib.sha1(name.encode()).hexdigest(),
        "filename": name,
        "status": spec.get("status", "modified"),
        "additions": spec.get("additions", 1),
        "deletions": spec.get("deletions", 0),
        "changes": spec.get("additions", 1) + spec.get("deletions", 0),
        "blob_url": f"https://github.com/{repo}/blob/{'c' * 40}/{name}",
        "raw_url": f"https://github.com/{repo}/raw/{'c' * 40}/{name}",
        "contents_url": f"https://api.github.com/repos/{repo}/contents/{name}",
        "patch": "@@ -1 +1 @@\n-old\n+new",
    }


def times(start: datetime, count: int, step: timedelta) -> Iterator[str]:
    """``count`` UTC times from ``start``, ``step`` apart, as GitHub writes them."""
    for index in range(count):
        yield (start + index * step).strftime(_UTC)

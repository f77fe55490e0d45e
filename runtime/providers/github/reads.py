"""The four operations over GitHub's REST API, each a function of a ``Session``, the input's
arguments and its resolved window, returning the catalog's result shape.

- ``code-host.merged_pull_requests``: ``GET /repos/{o}/{r}/pulls?state=closed&sort=updated&
  direction=desc`` (``base`` passed on), keeping those whose ``merged_at`` lies in the window;
  paging stops at the first page that ends before the window's start (a pull request is
  updated when it is merged, so nothing older can have been merged in the window). Not the
  search API: its 30 requests a minute, its 1,000 results and its index lag would make the
  answer depend on GitHub's load.
- ``code-host.pull_request``: the pull request, its files (paginated), and its diff (the
  ``application/vnd.github.diff`` media type), read up to what the fetch's byte budget has
  left and cut further, on a character, so that the whole value fits the fetch's cap as the
  fetch counts it (its canonical JSON as UTF-8; ``truncated``); GitHub's 406 for a diff too
  large to show gives an empty, truncated diff.
- ``tracker.issues_updated``: ``GET /repos/{o}/{r}/issues?since=…&sort=updated&
  direction=desc``, ``updated_at`` before the window's end, pull requests left out.
- ``tracker.issue``: the issue and its comments (paginated).

Every field read is checked: an answer of another shape is ``HZ724`` naming the field.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from hz.runtime.artifacts.operations import Window
from hz.runtime.providers.fit import fitted
from hz.runtime.providers.github.client import DIFF_MEDIA, PER_PAGE, Session
from hz.runtime.providers.protocol import HZ724, ProviderError

Read = Callable[[Session, Mapping[str, Any], Window | None], Any]


class _Shape:
    """Reads fields of GitHub's answer for ``what``; ``HZ724`` names the one that is wrong."""

    def __init__(self, session: Session, what: str) -> None:
        self.session = session
        self.what = what

    def bad(self, problem: str) -> ProviderError:
        return ProviderError(
            HZ724,
            f"GitHub's answer for {self.what} is not what its API documents: {problem}",
            hint="check [providers.github] api_url: it must be GitHub's REST API",
        )

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.bad(f"{where} is not an object")
        return value

    def text(self, item: Mapping[str, Any], key: str, where: str) -> str:
        value = item.get(key)
        if not isinstance(value, str):
            raise self.bad(f"{where}.{key} is not a string")
        return value

    def opt_text(self, item: Mapping[str, Any], key: str, where: str) -> str | None:
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise self.bad(f"{where}.{key} is not a string or null")
        return value

    def whole(self, item: Mapping[str, Any], key: str, where: str) -> int:
        value = item.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.bad(f"{where}.{key} is not a whole number")
        return value

    def moment(self, item: Mapping[str, Any], key: str, where: str) -> datetime | None:
        text = self.opt_text(item, key, where)
        if text is None:
            return None
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            raise self.bad(f"{where}.{key} is not an ISO 8601 time with a zone")
        try:
            return moment.astimezone(UTC)
        except OverflowError:  # 9999-12-31T23:59:59-01:00 is past the last year
            raise self.bad(f"{where}.{key} is out of the years 1 to 9999 in UTC") from None

    def author(self, item: Mapping[str, Any], where: str) -> str | None:
        user = item.get("user")
        if user is None:  # a deleted account
            return None
        return self.text(self.obj(user, f"{where}.user"), "login", f"{where}.user")

    def labels(self, item: Mapping[str, Any], where: str) -> list[str]:
        labels = item.get("labels", [])
        if not isinstance(labels, list):
            raise self.bad(f"{where}.labels is not a list")
        return [
            self.text(self.obj(label, f"{where}.labels[{i}]"), "name", f"{where}.labels[{i}]")
            for i, label in enumerate(labels)
        ]


def utc(moment: datetime | None) -> str | None:
    """``2026-03-09T12:00:00Z`` (a year before 1000 with its four digits, as RFC 3339 has)."""
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def _repo_path(args: Mapping[str, Any]) -> str:
    # The provider has checked the repository (owner/name, neither "." nor "..").
    owner, _, name = str(args["repository"]).partition("/")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def _listed(
    shape: _Shape,
    path: str,
    params: Mapping[str, str] | None = None,
    *,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each object of the list at ``path``, page after page, with where it stands in GitHub's
    answer (``page 2 item 5``); ``stop``, asked once the caller is done with a page, ends the
    paging there (no further page is read)."""
    session = shape.session
    url = f"{session.url(path)}?{urlencode({**(params or {}), 'per_page': str(PER_PAGE)})}"
    for page, items in enumerate(session.pages(url, shape.what), start=1):
        for index, raw in enumerate(items):
            where = f"page {page} item {index}"
            yield where, shape.obj(raw, where)
        if stop():
            return


def _pull_fields(shape: _Shape, item: Mapping[str, Any], where: str) -> dict[str, Any]:
    return {
        "number": shape.whole(item, "number", where),
        "title": shape.text(item, "title", where),
        "url": shape.text(item, "html_url", where),
        "author": shape.author(item, where),
        "merged_at": utc(shape.moment(item, "merged_at", where)),
        "body": shape.opt_text(item, "body", where),
        "labels": shape.labels(item, where),
    }


def merged_pull_requests(
    session: Session, args: Mapping[str, Any], window: Window | None
) -> list[dict[str, Any]]:
    repository = str(args["repository"])
    what = f"the merged pull requests of {repository}"
    params = {"state": "closed", "sort": "updated", "direction": "desc"}
    if "base" in args:
        params["base"] = str(args["base"])
    shape = _Shape(session, what)
    found: list[tuple[datetime, int, dict[str, Any]]] = []
    # The oldest update seen: paging stops after the first page that goes back before the
    # window (every page before it stayed within, so the oldest so far is that page's).
    oldest: datetime | None = None

    def past_window() -> bool:
        return window is not None and oldest is not None and oldest < window.since

    for where, item in _listed(shape, f"{_repo_path(args)}/pulls", params, stop=past_window):
        updated = shape.moment(item, "updated_at", where)
        merged = shape.moment(item, "merged_at", where)
        if updated is not None:
            oldest = updated if oldest is None else min(oldest, updated)
        if merged is None or not _within(merged, window):
            continue
        record = _pull_fields(shape, item, where)
        found.append((merged, record["number"], record))
    found.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
    return [record for _, _, record in found]


def pull_request(
    session: Session, args: Mapping[str, Any], window: Window | None = None
) -> dict[str, Any]:
    repository, number = str(args["repository"]), int(args["number"])
    what = f"pull request {number} of {repository}"
    path = f"{_repo_path(args)}/pulls/{number}"
    shape = _Shape(session, what)
    raw, _ = session.json(session.url(path), what)
    item = shape.obj(raw, "the pull request")
    record = _pull_fields(shape, item, "the pull request")
    record["state"] = shape.text(item, "state", "the pull request")

    files_what = f"the files of pull request {number} of {repository}"
    files_shape = _Shape(session, files_what)
    record["files"] = [
        {
            "path": files_shape.text(entry, "filename", where),
            "status": files_shape.text(entry, "status", where),
            "additions": files_shape.whole(entry, "additions", where),
            "deletions": files_shape.whole(entry, "deletions", where),
        }
        for where, entry in _listed(files_shape, f"{path}/files")
    ]
    record["diff"], record["truncated"] = _diff(session, session.url(path), number, repository)
    # The diff is read up to the bytes the budget has left; the fetch counts the whole value
    # as JSON, where a line break takes two bytes: cut further so that it fits that count.
    return fitted(record, "diff", session.cap)


def _diff(session: Session, url: str, number: int, repository: str) -> tuple[str, bool]:
    what = f"the diff of pull request {number} of {repository}"
    cut_at = max(session.budget, 1)
    # GitHub refuses a diff too large to show (406, "diff exceeded the maximum number of
    # lines"): the value says so (empty, truncated) rather than failing the whole input.
    answer = session.get(url, what, accept=DIFF_MEDIA, cut_at=cut_at, too_large=406)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # Not final when cut: a character split by the cut is dropped rather than replaced.
    return decoder.decode(answer.body, final=not answer.truncated), answer.truncated


def _issue_fields(shape: _Shape, item: Mapping[str, Any], where: str) -> dict[str, Any]:
    return {
        "number": shape.whole(item, "number", where),
        "title": shape.text(item, "title", where),
        "url": shape.text(item, "html_url", where),
        "author": shape.author(item, where),
        "state": shape.text(item, "state", where),
        "updated_at": utc(shape.moment(item, "updated_at", where)),
        "body": shape.opt_text(item, "body", where),
        "labels": shape.labels(item, where),
    }


def issues_updated(
    session: Session, args: Mapping[str, Any], window: Window | None
) -> list[dict[str, Any]]:
    repository = str(args["repository"])
    what = f"the issues of {repository}"
    params = {"state": str(args.get("state", "all")), "sort": "updated", "direction": "desc"}
    if window is not None:
        params["since"] = window.to_json()["since"]
    if args.get("labels"):
        params["labels"] = ",".join(str(label) for label in args["labels"])
    shape = _Shape(session, what)
    found: list[dict[str, Any]] = []
    for where, item in _listed(shape, f"{_repo_path(args)}/issues", params):
        if "pull_request" in item:
            continue
        updated = shape.moment(item, "updated_at", where)
        if updated is None:
            raise shape.bad(f"{where}.updated_at is missing")
        if _within(updated, window):
            found.append(_issue_fields(shape, item, where))
    return found


def issue(
    session: Session, args: Mapping[str, Any], window: Window | None = None
) -> dict[str, Any]:
    repository, number = str(args["repository"]), int(args["number"])
    what = f"issue {number} of {repository}"
    path = f"{_repo_path(args)}/issues/{number}"
    shape = _Shape(session, what)
    raw, _ = session.json(session.url(path), what)
    record = _issue_fields(shape, shape.obj(raw, "the issue"), "the issue")
    comments_what = f"the comments of issue {number} of {repository}"
    comments_shape = _Shape(session, comments_what)
    comments: list[dict[str, Any]] = []
    for where, entry in _listed(comments_shape, f"{path}/comments"):
        created = comments_shape.moment(entry, "created_at", where)
        if created is None:
            raise comments_shape.bad(f"{where}.created_at is missing")
        comments.append(
            {
                "author": comments_shape.author(entry, where),
                "created_at": utc(created),
                "body": comments_shape.text(entry, "body", where),
            }
        )
    record["comments"] = comments
    return record


def _within(moment: datetime, window: Window | None) -> bool:
    return window is None or window.since <= moment < window.until


#: The operations, by name.
READS: Mapping[str, Read] = {
    "code-host.merged_pull_requests": merged_pull_requests,
    "code-host.pull_request": pull_request,
    "tracker.issues_updated": issues_updated,
    "tracker.issue": issue,
}

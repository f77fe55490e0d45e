"""The code-host and tracker targets on GitHub's REST API, with the token and API of
``[providers.github]`` (the same settings the github provider reads with).

Each body ends with the step's marker as a hidden HTML comment (``<!-- hz-publish:RUN:N -->``);
GitHub keeps it and does not show it, so a write whose answer was lost is found again by
listing the issue's comments (or the repository's newest issues, or the issue's body). A
commit status holds no comment: it is found by its context and description. Writes never
follow a redirect and send the token only to ``api_url``.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any
from urllib.parse import quote

import httpx

from hz import __version__
from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.operations import REPOSITORY_FORM
from hz.runtime.artifacts.printable import cut, printable
from hz.runtime.ledger.store import Step
from hz.runtime.providers.github.client import API_VERSION, JSON_MEDIA
from hz.runtime.providers.github.settings import TOKEN_CHARS, GitHubSettings
from hz.runtime.publish.draft import Payload
from hz.runtime.publish.targets.base import CannotTell, Refused, Unobserved
from hz.runtime.publish.targets.http import MAX_ANSWER_BYTES, Answer, NotSent, TooSlow, exchange

#: Pages of 100 comments or issues searched for a marker before hz says it cannot tell.
MAX_LOOKUP_PAGES = 20
#: An ``html_url`` hz records as where a draft went: an http(s) URL of printable ASCII without a
#: blank, of a sane length. Anything else in GitHub's answer (missing, not a string, a newline,
#: an escape sequence, ``javascript:``) is not recorded.
_HTML_URL = re.compile(r"https?://[!-~]{1,2000}")
#: Said after the location hz built itself when GitHub's answer gave none it records.
NO_HTML_URL = "GitHub's answer gave no usable html_url"
_MESSAGE_CHARS = 200


def marker_comment(step: Step) -> str:
    return f"<!-- {step.marker} -->"


class GitHubPublisher:
    def __init__(self, settings: GitHubSettings, environ: dict[str, str] | None = None) -> None:
        self.settings = settings
        self._environ = os.environ if environ is None else environ
        #: Each exchange's bound, the operator's for the provider (``timeout_seconds``).
        self._timeout = settings.timeout_seconds
        #: The token's user once asked: a login, "" when GitHub will not say, None: not asked.
        self._whoami: str | None = None

    def credential(self, step: Step) -> str | None:
        return self.settings.token_env

    def where(self, step: Step) -> str:
        args = step.args
        repo = args.get("repository")
        match step.target:
            case "code-host.pull_request_comment":
                return f"a comment on {repo}#{args.get('pull_request')} ({self.settings.api_url})"
            case "code-host.issue_comment":
                return f"a comment on {repo}#{args.get('issue')} ({self.settings.api_url})"
            case "tracker.create_issue":
                return f"a new issue in {repo} ({self.settings.api_url})"
            case "tracker.update_issue_body":
                return f"section {args.get('section')!r} of {repo}#{args.get('issue')}"
            case _:
                return f"status {args.get('context')!r} of {repo}@{args.get('sha')}"

    # -- writing -----------------------------------------------------------------------------

    def write(self, step: Step, payload: Payload) -> str:
        args = step.args
        repo = self._repo(args)
        body = f"{payload.text}\n\n{marker_comment(step)}"
        match step.target:
            case "code-host.pull_request_comment" | "code-host.issue_comment":
                number = _number(args)
                answer = self._send(
                    "POST", f"/repos/{repo}/issues/{number}/comments", {"body": body}
                )
                return self._comment_location(answer, repo, number)
            case "tracker.create_issue":
                sent: dict[str, Any] = {"title": args["title"], "body": body}
                if args.get("labels"):
                    sent["labels"] = list(args["labels"])
                answer = self._send("POST", f"/repos/{repo}/issues", sent)
                return self._issue_location(answer, repo, answer.get("number"))
            case "tracker.update_issue_body":
                path = f"/repos/{repo}/issues/{int(args['issue'])}"
                try:
                    issue = self._get(path)
                except CannotTell as e:
                    raise Refused(str(e)) from e
                old = issue.get("body") or "" if isinstance(issue, dict) else ""
                new = with_section(str(old), str(args["section"]), body)
                answer = self._send("PATCH", path, {"body": new})
                return self._issue_location(answer, repo, int(args["issue"]))
            case _:
                # The draft's first line, escaped and held to GitHub's 140 characters by
                # ``prepare`` (refused over it, never cut here).
                sent = {
                    "state": args.get("state", "success"),
                    "context": args["context"],
                    "description": payload.text,
                }
                self._send("POST", f"/repos/{repo}/statuses/{args['sha']}", sent)
                return f"{self.settings.api_url}/repos/{repo}/commits/{args['sha']}/statuses"

    def lookup(self, step: Step) -> str | None:
        """Where the step's write is: a body ending in its marker whose text before it is what
        the step sent (its sha256), so a comment someone else wrote with the marker in it does
        not count."""
        args = step.args
        repo = self._repo(args, CannotTell)
        match step.target:
            case "code-host.pull_request_comment" | "code-host.issue_comment":
                number = _number(args)
                for item in self._pages(f"/repos/{repo}/issues/{number}/comments?per_page=100"):
                    if _ours(step, str(item.get("body") or "")) and self._by_us(item, "user"):
                        return self._comment_location(item, repo, number)
                return None
            case "tracker.create_issue":
                query = "?state=all&sort=created&direction=desc&per_page=100"
                for item in self._pages(f"/repos/{repo}/issues{query}"):
                    if _ours(step, str(item.get("body") or "")) and self._by_us(item, "user"):
                        return self._issue_location(item, repo, item.get("number"))
                return None
            case "tracker.update_issue_body":
                issue = self._get(f"/repos/{repo}/issues/{int(args['issue'])}")
                body = str(issue.get("body") or "") if isinstance(issue, dict) else ""
                section = section_of(body, str(args["section"]))
                found = section is not None and _ours(step, section)
                return self._issue_location(issue, repo, int(args["issue"])) if found else None
            case _:
                # A status holds no marker. It counts only when the commit's newest status of
                # the context (GitHub lists them newest first) is what this step sent — the
                # state, and the description whose sha256 the step recorded — by the token's
                # own user: an older status of the context (a previous run's verdict) is not
                # ours, and sending again only supersedes it, as a status does.
                path = f"/repos/{repo}/commits/{args['sha']}/statuses?per_page=100"
                for item in self._pages(path):
                    if item.get("context") != args["context"]:
                        continue
                    description = str(item.get("description") or "").encode("utf-8")
                    if (
                        item.get("state") == args.get("state", "success")
                        and step.sha256 is not None
                        and hashlib.sha256(description).hexdigest() == step.sha256
                        and self._by_us(item, "creator")
                    ):
                        return (
                            f"{self.settings.api_url}/repos/{repo}/commits/{args['sha']}/statuses"
                        )
                    return None
                return None

    def _comment_location(self, answer: dict[str, Any], repo: str, number: int) -> str:
        """Where a comment is: its ``html_url``, else its API URL from its ``id`` (else the
        issue's comments), said to be hz's own (``NO_HTML_URL``)."""
        if (url := _html_url(answer)) is not None:
            return url
        found = answer.get("id")
        if _whole(found):
            return f"{self.settings.api_url}/repos/{repo}/issues/comments/{found}; {NO_HTML_URL}"
        return f"{self.settings.api_url}/repos/{repo}/issues/{number}/comments; {NO_HTML_URL}"

    def _issue_location(self, answer: dict[str, Any], repo: str, number: Any) -> str:
        """Where an issue is: its ``html_url``, else its API URL from its number (else the
        repository's issues), said to be hz's own (``NO_HTML_URL``)."""
        if (url := _html_url(answer)) is not None:
            return url
        if _whole(number):
            return f"{self.settings.api_url}/repos/{repo}/issues/{number}; {NO_HTML_URL}"
        return f"{self.settings.api_url}/repos/{repo}/issues; {NO_HTML_URL}"

    def _by_us(self, item: dict[str, Any], field: str) -> bool:
        """Whether ``item`` (a comment, an issue: ``user``; a status: ``creator``) was written
        by the token's own user, so that someone who learnt the marker and posted the exact
        body first is not adopted. True when GitHub does not let hz know who the token is (a
        GitHub App's token cannot ask ``GET /user``)."""
        login = self._login()
        if login is None:
            return True
        author = item.get(field)
        return isinstance(author, dict) and author.get("login") == login

    def _login(self) -> str | None:
        """The token's user (``GET /user``, asked once), or None when GitHub will not say."""
        if self._whoami is not None:
            return self._whoami or None
        url = f"{self.settings.api_url}/user"
        try:
            answer = exchange("GET", url, headers=self._headers(), timeout=self._timeout)
        except (httpx.HTTPError, TooSlow, NotSent, Refused) as e:
            raise CannotTell(
                f"GitHub could not say who the token is (GET /user): {type(e).__name__}"
            ) from e
        if answer.status in (401, 403, 404):
            self._whoami = ""
            return None
        try:
            data = strict_json.loads(answer.body) if answer.status == 200 else None
        except (strict_json.JsonError, RecursionError):
            data = None
        login = data.get("login") if isinstance(data, dict) else None
        if not isinstance(login, str) or not login:
            raise CannotTell(
                f"GitHub could not say who the token is (GET /user): {answer.status} "
                f"{self._message(answer)}"
            )
        self._whoami = login
        return login

    # -- HTTP --------------------------------------------------------------------------------

    def _repo(self, args: dict[str, Any], error: type[Exception] = Refused) -> str:
        """The repository as a URL path, or ``error`` for one GitHub has no path for (an HTTP
        client folds ``acme/..`` into ``/repos``: another repository, past the policy)."""
        repository = args.get("repository")
        if not isinstance(repository, str) or not REPOSITORY_FORM.match(repository):
            shown = repr(printable(repository)) if isinstance(repository, str) else "(none)"
            raise error(
                f"repository {shown} is not a GitHub repository's owner/name "
                "(letters, digits, '_', '.', '-'; neither part . or ..)"
            )
        owner, _, name = repository.partition("/")
        return f"{quote(owner, safe='')}/{quote(name, safe='')}"

    def longest_seconds(self, step: Step) -> float:
        """The longest one write may take: the exchange's bound (an update's GET, then its
        PATCH: two)."""
        exchanges = 2 if step.target == "tracker.update_issue_body" else 1
        return exchanges * self._timeout

    def check(self, step: Step) -> None:
        """Before the attempt is recorded: ``Refused`` for a repository with no path or a
        token that cannot be sent."""
        self._repo(step.args)
        self._token()

    def _token(self) -> str:
        name = self.settings.token_env
        token = self._environ.get(name, "")
        if not token:
            raise Refused(
                f"the environment variable {name} holding the GitHub token "
                "is not set ([providers.github] token_env)"
            )
        if not TOKEN_CHARS.fullmatch(token):
            raise Refused(
                f"the token in {name} ([providers.github] token_env) has blanks, control "
                "characters or characters that are not ASCII around or in it (it is not shown)"
            )
        return token

    def _headers(self) -> dict[str, str]:
        token = self._token()
        return {
            "Accept": JSON_MEDIA,
            "Accept-Encoding": "identity",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"hz/{__version__}",
            "Authorization": f"Bearer {token}",
        }

    def _send(self, method: str, path: str, data: dict[str, Any]) -> dict[str, Any]:
        headers = self._headers()
        url = f"{self.settings.api_url}{path}"
        shown = f"{method} {path}"
        try:
            answer = exchange(method, url, headers=headers, json=data, timeout=self._timeout)
        except NotSent as e:
            raise Refused(f"GitHub was not asked ({shown}): {e}") from e
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            raise Refused(f"GitHub could not be reached ({shown}): {type(e).__name__}") from e
        except (httpx.HTTPError, TooSlow) as e:
            raise Unobserved(f"no answer from GitHub for {shown}: {type(e).__name__}") from e
        status = answer.status
        if status >= 500 or status in (408, 429):
            raise Unobserved(f"GitHub answered {status} for {shown}: {self._message(answer)}")
        if status not in (200, 201):
            raise Refused(f"GitHub answered {status} for {shown}: {self._message(answer)}")
        try:
            found = strict_json.loads(answer.body)
        except (strict_json.JsonError, RecursionError):
            return {}  # written all the same; where is unknown
        return found if isinstance(found, dict) else {}

    def _get(self, path: str) -> Any:
        url = f"{self.settings.api_url}{path}"
        try:
            answer = exchange("GET", url, headers=self._headers(), timeout=self._timeout)
        except Refused as e:
            raise CannotTell(f"GitHub could not be searched (GET {path}): {e}") from e
        except (httpx.HTTPError, TooSlow, NotSent) as e:
            # Never str() of httpx's error: it can quote the request's headers (the token).
            raise CannotTell(
                f"GitHub could not be searched (GET {path}): {type(e).__name__}"
            ) from e
        if answer.cut:
            raise CannotTell(
                f"GitHub could not be searched (GET {path}): its answer is larger than "
                f"{MAX_ANSWER_BYTES:,} bytes"
            )
        if answer.status != 200:
            raise CannotTell(
                f"GitHub could not be searched (GET {path}): {answer.status} "
                f"{self._message(answer)}"
            )
        try:
            return strict_json.loads(answer.body)
        except (strict_json.JsonError, RecursionError) as e:
            raise CannotTell(f"GitHub's answer to GET {path} is not JSON") from e

    def _pages(self, path: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            items = self._get(f"{path}&page={page}")
            if not isinstance(items, list):
                raise CannotTell(f"GitHub's answer to GET {path} is not a list")
            found += [item for item in items if isinstance(item, dict)]
            if len(items) < 100:
                return found
            page += 1
            if page > MAX_LOOKUP_PAGES:
                raise CannotTell(f"more than {MAX_LOOKUP_PAGES} pages to search (GET {path})")

    def _message(self, answer: Answer) -> str:
        try:
            data = strict_json.loads(answer.body[:65536])
            text = str(data.get("message", "")) if isinstance(data, dict) else ""
        except (strict_json.JsonError, RecursionError):
            text = answer.reason
        token = self._environ.get(self.settings.token_env, "")
        if token:
            text = text.replace(token, "[token]")
        return cut(printable(text), _MESSAGE_CHARS)


def _html_url(answer: Any) -> str | None:
    url = answer.get("html_url") if isinstance(answer, dict) else None
    return url if isinstance(url, str) and _HTML_URL.fullmatch(url) else None


def _whole(value: Any) -> bool:
    """A positive whole number (an id, an issue's number), as GitHub gives them."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 63


def _ours(step: Step, body: str) -> bool:
    """Whether ``body`` is this step's write: its text, then its marker."""
    suffix = f"\n\n{marker_comment(step)}"
    if not body.endswith(suffix):
        return False
    if step.sha256 is None:  # no attempt on record: nothing of this step was sent
        return False
    sent = body[: -len(suffix)].encode("utf-8")
    return hashlib.sha256(sent).hexdigest() == step.sha256


def section_of(body: str, section: str) -> str | None:
    """What the section ``section`` of ``body`` holds (``with_section`` wrote it), or None."""
    start, end = f"<!-- hz:section {section} -->\n", f"\n<!-- hz:end {section} -->"
    found = re.search(re.escape(start) + r"(.*?)" + re.escape(end), body, re.DOTALL)
    return None if found is None else found[1]


def _number(args: dict[str, Any]) -> int:
    value = args.get("pull_request", args.get("issue"))
    return int(value) if isinstance(value, int) else 0


def with_section(body: str, section: str, text: str) -> str:
    """``body`` with the section ``section`` (between hz's two comments) holding ``text``; the
    section is appended when the body has none. The rest of the body is kept as it was."""
    start, end = f"<!-- hz:section {section} -->", f"<!-- hz:end {section} -->"
    block = f"{start}\n{text}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(body):
        return pattern.sub(lambda _: block, body, count=1)
    return f"{body.rstrip()}\n\n{block}" if body.strip() else block

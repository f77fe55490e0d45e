"""``GitHubProvider``: serves ``code-host`` and ``tracker`` from GitHub (or GitHub Enterprise
Server) with the token named by ``[providers.github] token_env``.

httpx comes with the ``github`` extra: without it the provider still loads (``hz providers``
lists it), ``ready`` says what to install and ``fetch`` raises ``HZ721`` naming the command.
The token is read from hz's environment at each fetch and never leaves this package except as
the ``Authorization`` header to ``api_url``'s origin; any string of the value equal to it
(someone pasted the token into an issue) is replaced by ``[token]``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from hz.runtime.artifacts.distribution import extra_command
from hz.runtime.artifacts.operations import CATALOG, REPOSITORY_FORM, Operation
from hz.runtime.artifacts.printable import printable
from hz.runtime.providers.github.settings import TOKEN_CHARS, GitHubSettings, key_name
from hz.runtime.providers.protocol import (
    HZ720,
    HZ721,
    HZ724,
    HZ727,
    FetchRequest,
    ProviderError,
    Readiness,
)

if TYPE_CHECKING:
    from hz.runtime.providers.github.client import ResponseCache

OPERATIONS = (
    "code-host.merged_pull_requests",
    "code-host.pull_request",
    "tracker.issues_updated",
    "tracker.issue",
)
REDACTED = "[token]"


class GitHubProvider:
    name: ClassVar[str] = "github"
    capabilities: ClassVar[tuple[str, ...]] = ("code-host", "tracker")
    settings_model: ClassVar[type[GitHubSettings]] = GitHubSettings

    def __init__(self, settings: GitHubSettings) -> None:
        self.settings = settings
        self._cache: ResponseCache | None = None

    def operations(self) -> Mapping[str, Operation]:
        return {name: CATALOG[name] for name in OPERATIONS}

    def ready(self, *, online: bool = False) -> Readiness:
        try:
            _require_httpx()
            token = self._token()
        except ProviderError as e:
            return Readiness(False, e.message if e.hint is None else f"{e.message}: {e.hint}")
        if not self.settings.repositories:
            return Readiness(
                False,
                f"no repository may be read: {key_name('repositories')} is empty",
            )
        allowed = ", ".join(self.settings.repositories)
        detail = (
            f"token in {self.settings.token_env}, API {self.settings.api_url}, "
            f"repositories {allowed}"
        )
        if not online:
            return Readiness(True, detail)
        try:
            left = self._rate_limit(token)
        except ProviderError as e:
            return Readiness(False, e.message)
        return Readiness(True, f"{detail}; reachable, {left}")

    def fetch(self, request: FetchRequest) -> Any:
        _require_httpx()
        from hz.runtime.providers.github.client import Session
        from hz.runtime.providers.github.reads import READS

        read = READS.get(request.operation.name)
        if read is None:
            raise ProviderError(
                HZ720,
                f"the github provider has no operation {request.operation.name!r}",
                hint=f"it serves {', '.join(OPERATIONS)}",
            )
        repository = request.args.get("repository")
        if isinstance(repository, str) and not REPOSITORY_FORM.match(repository):
            raise ProviderError(
                HZ727,
                f"repository {printable(repository)!r} is not a GitHub repository's owner/name",
                hint="write it as owner/name, e.g. acme/app (neither part . or ..)",
            )
        if not isinstance(repository, str) or not self.settings.allows(repository):
            shown = repr(repository) if isinstance(repository, str) else "(none)"
            raise ProviderError(
                HZ727,
                f"repository {shown} is not in {key_name('repositories')}",
                hint="the operator lists the repositories contracts may read, as owner/name "
                'globs: repositories = ["acme/app", "acme/*"]',
            )
        token = self._token()
        with Session(self.settings, token, request, self._response_cache()) as session:
            value = read(session, request.args, request.window)
        return _redact(value, token)

    def _token(self) -> str:
        name = self.settings.token_env
        token = os.environ.get(name, "")
        if not token.strip():
            raise ProviderError(
                HZ721,
                f"the environment variable {name} ({key_name('token_env')}) holds no GitHub token",
                hint=f"export a token that can read the repositories in {name}, or name "
                "another variable in token_env (docs/providers-github.md lists the permissions)",
            )
        if not TOKEN_CHARS.fullmatch(token):
            raise ProviderError(
                HZ721,
                f"the token in {name} ({key_name('token_env')}) has blanks, control "
                "characters or characters that are not ASCII around or in it (it is not shown)",
                hint="export it without a trailing newline",
            )
        return token

    def _response_cache(self) -> ResponseCache:
        from hz.runtime.providers.github.client import ResponseCache

        if self._cache is None:
            self._cache = ResponseCache()
        return self._cache

    def _rate_limit(self, token: str) -> str:
        """``GET /rate_limit`` (free of the rate limit): what is left of the core limit."""
        from hz.runtime.providers.github.client import Session

        operation = CATALOG["tracker.issue"]  # any: the session only needs the bounds
        request = FetchRequest(
            operation,
            {},
            None,
            Path.cwd(),
            deadline=time.monotonic() + self.settings.timeout_seconds,
        )
        with Session(self.settings, token, request, self._response_cache()) as session:
            data, _ = session.json(session.url("/rate_limit"), "the rate limit")
        resources = data.get("resources", {}) if isinstance(data, dict) else None
        core = resources.get("core", {}) if isinstance(resources, dict) else None
        if not isinstance(core, dict):
            raise ProviderError(
                HZ724,
                "GitHub's answer for the rate limit (GET /rate_limit) is not what its API "
                "documents: resources.core is not an object",
                hint=f"check {key_name('api_url')}: it must be GitHub's REST API",
            )
        remaining, limit = core.get("remaining"), core.get("limit")
        if isinstance(remaining, int) and isinstance(limit, int):
            return f"{remaining} of {limit} requests left"
        return "rate limit unknown"


def _require_httpx() -> None:
    try:
        import httpx  # noqa: F401
    except ImportError as e:
        raise ProviderError(
            HZ721,
            "the github provider needs httpx, which is not installed",
            hint=f"install the extra into hz's environment: {extra_command('github')}",
        ) from e


def _redact(value: Any, token: str) -> Any:
    if isinstance(value, str):
        return value.replace(token, REDACTED) if token in value else value
    if isinstance(value, list):
        return [_redact(item, token) for item in value]
    if isinstance(value, dict):
        return {key: _redact(item, token) for key, item in value.items()}
    return value

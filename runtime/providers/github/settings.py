"""The keys of ``[providers.github]``: where the API is, which variable holds the token, which
repositories a contract may read, and the bounds of every fetch.

``token_env`` is the *name* of an environment variable, never the token: a value that looks
like a token is refused without being shown. ``repositories`` is the operator's allow-list of
``owner/name`` globs: a contract names the repository, the operator says which it may read
(a token usually reads far more than one project should).
"""

from __future__ import annotations

import fnmatch
import math
import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.providers.protocol import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_WAIT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    ProviderSettings,
)
from hz.runtime.settings.model import Expect, PositiveInteger

TABLE = "providers.github"
DEFAULT_API_URL = "https://api.github.com"
#: The hosts an ``http://`` URL may name: a local test server, never a remote one.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

#: What a token may hold: printable ASCII without blanks, as every GitHub token is. Anything
#: else cannot go into a header (and httpx would quote it in its error). The provider's reads
#: and the publishers' writes both check it before anything is sent.
TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
#: GitHub's token formats (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``)
#: and the 40 hex digits of an old OAuth token.
_TOKEN_LIKE = re.compile(r"(?:gh[pousr]_|github_pat_)|[0-9a-fA-F]{40}$")
_REPOSITORY_GLOB = re.compile(r"[A-Za-z0-9_.*?\[\]!-]{1,100}/[A-Za-z0-9_.*?\[\]!-]{1,100}")


def key_name(key: str) -> str:
    return f"[{TABLE}] {key}"


def _token_env(value: object) -> str:
    """A variable's name. The value is never shown: whoever wrote a token here must not find
    it again in a message, a CI log or ``hz config show``'s error."""
    if not isinstance(value, str):
        raise ConfigError(f"{key_name('token_env')} must be the name of an environment variable")
    if _TOKEN_LIKE.match(value):
        raise ConfigError(
            f"{key_name('token_env')} looks like a token, not the name of a variable (the value "
            "is not shown)",
            hint="put the token in an environment variable and write that variable's name, "
            'e.g. token_env = "GITHUB_TOKEN"; then revoke the token written here',
        )
    if not _ENV_NAME.fullmatch(value):
        raise ConfigError(
            f"{key_name('token_env')} must be the name of an environment variable (letters, "
            "digits and _, not starting with a digit; the value is not shown)",
            hint='e.g. token_env = "GITHUB_TOKEN"',
        )
    return value


def _api_url(value: object) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key_name('api_url')} must be a URL such as {DEFAULT_API_URL!r}")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as e:
        raise ConfigError(f"{key_name('api_url')} is not a URL: {value!r}") from e
    loopback = parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS
    if parts.scheme != "https" and not loopback:
        raise ConfigError(
            f"{key_name('api_url')} must be an https:// URL, got {value!r}",
            hint="http:// is accepted only for 127.0.0.1 or localhost (a local test server): "
            "the token must not cross the network in clear",
        )
    if not parts.hostname or parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(
            f"{key_name('api_url')} must be a scheme, a host and a path only, got {value!r}",
            hint=f"e.g. {DEFAULT_API_URL!r}, or 'https://HOST/api/v3' for GitHub Enterprise "
            "Server; never a credential in the URL",
        )
    del port  # read only to refuse a bad one
    return value.rstrip("/")


def _repositories(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{key_name('repositories')} must be a list of owner/name globs",
            hint='e.g. repositories = ["acme/app", "acme/lib-*"]',
        )
    for glob in value:
        if not _REPOSITORY_GLOB.fullmatch(glob):
            raise ConfigError(
                f"{key_name('repositories')}: {glob!r} is not an owner/name glob",
                hint='e.g. "acme/app", "acme/*" (one slash; * ? [...] match within a part)',
            )
    return tuple(value)


def _positive_seconds(value: object, key: str, *, zero: bool = False) -> float:
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if (
        number is None
        or not math.isfinite(number)
        or number < 0
        or (number == 0 and not zero)
        or number > 86400
    ):
        low = "0" if zero else "a number greater than 0"
        raise ConfigError(
            f"{key_name(key)} must be a number of seconds from {low} to 86400, got {value!r}"
        )
    return float(number)


class GitHubSettings(ProviderSettings):
    table = TABLE

    token_env: Annotated[
        str,
        BeforeValidator(_token_env),
        Field(
            description="the name of the environment variable holding the token (never the "
            "token itself: a value that looks like one is refused); read when fetching"
        ),
    ] = "GITHUB_TOKEN"  # noqa: S105 (a variable's name)
    api_url: Annotated[
        str,
        BeforeValidator(_api_url),
        Field(
            description="the REST API's base URL: `https://HOST/api/v3` for GitHub Enterprise "
            "Server; https only (http only for 127.0.0.1 or localhost)"
        ),
    ] = DEFAULT_API_URL
    repositories: Annotated[
        tuple[str, ...],
        BeforeValidator(_repositories),
        Field(
            description="the repositories a contract may read, as `owner/name` globs matched "
            "without regard to case (`acme/*`); empty: none"
        ),
    ] = ()
    timeout_seconds: Annotated[
        float,
        BeforeValidator(lambda v: _positive_seconds(v, "timeout_seconds")),
        Field(
            description="the longest wait for a connection or for the next bytes of an answer "
            "(the fetch's deadline bounds the whole fetch)"
        ),
    ] = DEFAULT_TIMEOUT_SECONDS
    max_bytes: Annotated[
        PositiveInteger,
        Field(
            description="the most bytes read from GitHub for one fetch, every page together; "
            "the fetch's own cap applies too"
        ),
        Expect("must be a positive integer, got {value!r}"),
    ] = DEFAULT_MAX_BYTES
    max_pages: Annotated[
        PositiveInteger,
        Field(description="the most pages of one list followed through its `Link` header"),
        Expect("must be a positive integer, got {value!r}"),
    ] = DEFAULT_MAX_PAGES
    max_wait_seconds: Annotated[
        float,
        BeforeValidator(lambda v: _positive_seconds(v, "max_wait_seconds", zero=True)),
        Field(
            description="the most seconds one fetch waits for GitHub's rate limit, all waits "
            "together; 0: never wait"
        ),
    ] = DEFAULT_MAX_WAIT_SECONDS

    def allows(self, repository: str) -> bool:
        """Whether ``repository`` (``owner/name``) matches one of ``repositories``; GitHub's
        names do not depend on case, neither does the match."""
        name = repository.lower()
        return any(fnmatch.fnmatchcase(name, glob.lower()) for glob in self.repositories)

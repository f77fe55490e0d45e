"""``webhook.post``: the draft as JSON to a URL the operator names
(``[publish.webhooks.NAME] url_env``: the URL is a secret, read from hz's environment).

Each request carries ``Idempotency-Key: <the step's marker>``; a receiver that honours it
drops a repeat. A webhook cannot be searched: a write whose answer was lost is ``uncertain``.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import httpx

from hz import __version__
from hz.runtime.config.publish import Webhook
from hz.runtime.ledger.store import Step
from hz.runtime.publish.draft import Payload
from hz.runtime.publish.targets.base import CannotTell, Refused, Unobserved
from hz.runtime.publish.targets.http import NotSent, TooSlow, exchange

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def url_problem(url: str) -> str | None:
    """What is wrong with a webhook URL (never quoting it: it is a secret), or None: printable
    ASCII without blanks (a secret pasted with its newline is refused, not sent), ``https://``
    (``http://`` to this machine only), a host, and a URL httpx can make a request of."""
    if not url:
        return "is not set"
    if not url.isascii() or not url.isprintable() or any(c.isspace() for c in url):
        return "holds blanks, control characters or characters that are not ASCII"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        httpx.Request("POST", url)  # the parse httpx makes: an IPv6 or IDNA host it refuses
    except (ValueError, httpx.InvalidURL):  # IDNAError is a ValueError
        return "does not hold a valid URL"
    if not host:
        return "does not hold a valid URL (no host)"
    if not (parts.scheme == "https" or (parts.scheme == "http" and host in _LOOPBACK)):
        return "must hold an https:// URL"
    return None


class WebhookPublisher:
    def __init__(self, webhooks: dict[str, Webhook], environ: dict[str, str] | None = None) -> None:
        self.webhooks = webhooks
        self._environ = os.environ if environ is None else environ

    def _hook(self, step: Step) -> tuple[str, Webhook]:
        name = str(step.args.get("webhook", ""))
        hook = self.webhooks.get(name)
        if hook is None:
            raise Refused(f"webhook.post: no webhook {name!r} in [publish.webhooks]")
        return name, hook

    def credential(self, step: Step) -> str | None:
        return self._hook(step)[1].url_env

    def where(self, step: Step) -> str:
        name, hook = self._hook(step)
        return f"webhook {name} (the URL in {hook.url_env})"

    def longest_seconds(self, step: Step) -> float:
        return self._hook(step)[1].timeout_seconds

    def check(self, step: Step) -> None:
        """Before the attempt is recorded: ``Refused`` for a URL that cannot be sent to."""
        self._url(step)

    def _url(self, step: Step) -> str:
        _, hook = self._hook(step)
        url = self._environ.get(hook.url_env, "")
        problem = url_problem(url)
        if problem is not None:
            raise Refused(f"webhook.post: {hook.url_env} {problem} (the value is not shown)")
        return url

    def write(self, step: Step, payload: Payload) -> str:
        name, hook = self._hook(step)
        url = self._url(step)
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": step.marker,
            "User-Agent": f"hz/{__version__}",
        }
        body = payload.data if payload.data is not None else {"text": payload.text}
        try:
            answer = exchange(
                "POST",
                url,
                headers=headers,
                json=body,
                timeout=hook.timeout_seconds,
                max_bytes=65536,
            )
        except NotSent as e:
            raise Refused(f"webhook {name} was not sent to: {e}") from e
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            raise Refused(f"webhook {name} could not be reached: {type(e).__name__}") from e
        except (httpx.HTTPError, TooSlow) as e:
            raise Unobserved(f"no answer from webhook {name}: {type(e).__name__}") from e
        if answer.status >= 500 or answer.status in (408, 429):
            raise Unobserved(f"webhook {name} answered {answer.status}")
        if not 200 <= answer.status < 300:
            raise Refused(f"webhook {name} answered {answer.status}")
        return f"webhook {name}"

    def lookup(self, step: Step) -> str | None:
        raise CannotTell("a webhook cannot be asked whether it received a request")

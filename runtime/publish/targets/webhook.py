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
from hz.runtime.publish.targets.http import TooSlow, exchange

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


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

    def write(self, step: Step, payload: Payload) -> str:
        name, hook = self._hook(step)
        url = self._environ.get(hook.url_env, "")
        parts = urlsplit(url)
        if not (
            parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK)
        ):
            raise Refused(
                f"webhook.post: {hook.url_env} must hold an https:// URL (the value is not shown)"
            )
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

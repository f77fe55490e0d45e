"""Recording events into a transcript: truncated, redacted and capped as they arrive.

A flooding agent costs a bounded amount: each string is redacted and cut when it is added,
and once the stream holds ``Caps.events`` events or ``Caps.stream_bytes`` bytes, further
events are only counted. Redaction is a second line of defence: the agent's environment is
an allowlist, so a secret of hz's environment never reaches it; a value the agent was given
on purpose (an API key for its CLI) and echoed back is replaced by ``[redacted NAME]``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import JsonValue

from hz.runtime.artifacts.transcript import Caps, EventType, TranscriptEvent

#: Names of environment variables whose values never appear in a transcript.
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE", re.IGNORECASE
)
#: Shorter values are too likely to occur by chance ("true", a port number) to be replaced.
MIN_SECRET_CHARS = 8


#: Variables the operator's configuration says hold secrets whatever their names (a webhook's
#: ``url_env``, the publishing token's variable): ``declare_secret_names``.
_DECLARED: set[str] = set()


def declare_secret_names(names: Iterable[str]) -> None:
    """Treat the values of ``names`` as secrets in every redaction of this process, whatever
    the names look like (``TEAM_CHAT_WEBHOOK`` holds a URL that is a secret)."""
    _DECLARED.update(names)


def secret_values(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``(value, name)`` of every secret-looking variable, longest value first (so a secret
    that contains another is replaced whole). A value that JSON writes otherwise (a quote, a
    backslash, a control character in it) is found in that spelling too: agents and their CLIs
    print JSON — Python's, and Go's (``<``, ``>``, ``&`` as ``\\u003c``…: ``gh``, ``kubectl``,
    ``terraform -json``) and PHP's (``/`` as ``\\/``) spellings of it."""
    found: dict[str, str] = {}
    for name, value in sorted(environ.items()):
        if (SECRET_NAME.search(name) or name in _DECLARED) and len(value) >= MIN_SECRET_CHARS:
            found[value] = name
            for spelled in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
                for escaped in _ESCAPES:
                    found.setdefault(escaped(spelled[1:-1]), name)
    return tuple(sorted(found.items(), key=lambda item: (-len(item[0]), item[0])))


def _go(text: str) -> str:
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _slash(text: str) -> str:
    return text.replace("/", "\\/")


#: How JSON encoders other than Python's write a value, besides as Python does.
_ESCAPES = (str, _go, _slash, lambda text: _slash(_go(text)))


#: At an edge where text was cut, this much of a secret's start or end is a part of it.
MIN_SECRET_PART = 4


def redact(
    text: str,
    secrets: tuple[tuple[str, str], ...],
    *,
    cut_start: bool = False,
    cut_end: bool = False,
) -> tuple[str, int]:
    """``text`` with each of ``secrets`` (from ``secret_values``) written ``[redacted NAME]``,
    and how many values were replaced. ``cut_start`` / ``cut_end``: the text was cut there
    (a tail, the first bytes of a stream), so it may start with the end of a secret or end
    with its start: such a part, of ``MIN_SECRET_PART`` characters or more, is replaced too."""
    count = 0
    for secret, name in secrets:
        if secret in text:
            count += text.count(secret)
            text = text.replace(secret, f"[redacted {name}]")
    for secret, name in secrets:
        for size in range(len(secret) - 1, MIN_SECRET_PART - 1, -1):
            if cut_start and text.startswith(secret[-size:]):
                text, count = f"[redacted {name}]{text[size:]}", count + 1
                break
        for size in range(len(secret) - 1, MIN_SECRET_PART - 1, -1):
            if cut_end and text.endswith(secret[:size]):
                text, count = f"{text[:-size]}[redacted {name}]", count + 1
                break
    return text, count


class Recorder:
    """Collects one run's events. ``add`` for the stream (capped), ``close`` for the events
    every transcript ends with (cut per field only)."""

    def __init__(self, caps: Caps | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.caps = caps or Caps()
        self._secrets = secret_values(os.environ if environ is None else environ)
        self.events: list[TranscriptEvent] = []
        self.dropped = 0
        self.truncated = 0
        self.redacted = 0
        self._bytes = 0

    def add(self, type: EventType, **fields: Any) -> None:
        if len(self.events) >= self.caps.events or self._bytes >= self.caps.stream_bytes:
            self.dropped += 1
            return
        event = self._event(type, fields)
        size = len(event.model_dump_json(exclude_defaults=True).encode("utf-8"))
        if self._bytes + size > self.caps.stream_bytes:
            self.dropped += 1
            self._bytes = self.caps.stream_bytes  # the stream is full: keep order, drop the rest
            return
        self._bytes += size
        self.events.append(event)

    def extend(self, events: tuple[TranscriptEvent, ...], counts: Mapping[str, int]) -> None:
        """Events a runner recorded (already cut; ``counts`` from its ``counts()``), through
        the caps again."""
        for event in events:
            self.add(event.type, **event.model_dump(exclude_defaults=True, exclude={"type"}))
        self.dropped += counts.get("dropped", 0)
        self.truncated += counts.get("truncated", 0)
        self.redacted += counts.get("redacted", 0)

    def counts(self) -> dict[str, int]:
        """What ``AgentResult.transcript_counts`` carries."""
        return {"dropped": self.dropped, "truncated": self.truncated, "redacted": self.redacted}

    def close(self, type: EventType, **fields: Any) -> None:
        self.events.append(self._event(type, fields))

    def _event(self, type: EventType, fields: dict[str, Any]) -> TranscriptEvent:
        clean = {
            key: self._json(value) if key == "input" else self._text(value)
            for key, value in fields.items()
        }
        return TranscriptEvent(type=type, **clean)

    def _text(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        value, count = redact(value, self._secrets)
        self.redacted += count
        limit = self.caps.field_chars
        if len(value) <= limit:
            return value
        self.truncated += 1
        return f"{value[:limit]}… [{len(value) - limit} more characters]"

    def _json(self, value: Any) -> JsonValue:
        if isinstance(value, dict):
            result: JsonValue = {str(self._text(k)): self._json(v) for k, v in value.items()}
        elif isinstance(value, list | tuple):
            result = [self._json(v) for v in value]
        else:
            return self._text(value)  # type: ignore[no-any-return]
        text = json.dumps(result, ensure_ascii=False)
        if len(text) > 2 * self.caps.field_chars:  # many fields, each under the cap
            return self._text(text)  # type: ignore[no-any-return]
        return result

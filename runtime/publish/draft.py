"""The draft as a target takes it. The draft is the model's output: data, never instructions.

- every target has a size cap (``Target.max_chars``): a longer draft is refused, never cut;
- GitHub bodies: ``@user``/``@org/team`` mentions are broken with a word joiner and a line
  starting with ``/`` (a bot's slash command) is escaped, unless ``[publish] mentions``; every
  ``<`` that would open an HTML tag or comment is escaped, so nothing can hide text (or forge
  hz's marker) in a comment;
- a webhook's text is escaped as Slack asks (``&``, ``<``, ``>``: no ``<!channel>``);
- a JSON body must be a JSON document (the draft is parsed strictly, never repaired).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.publish_targets import Target

WORD_JOINER = "\u2060"
#: A mention as GitHub finds it: in the *rendered* text, after a character that is not an ASCII
#: letter or digit (``_@x_`` renders ``<em>@x</em>``; ``\`c\`@x`` leaves ``@x`` after the code
#: span; ``é@x`` is a boundary to GitHub's ASCII ``\W``). An e-mail address (``a@b.c``) stays.
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
#: A slash command at a line's start, also inside a block quote or a list item.
_SLASH = re.compile(r"^((?:[ \t]*(?:>|[-*+]|\d{1,9}[.)]))*[ \t]*)/(?=[A-Za-z])", re.MULTILINE)
_TAG = re.compile(r"<(?=[A-Za-z!/?])")
#: A link reference definition (``[x]: # (hidden)``): rendered as nothing at all.
_REFERENCE = re.compile(r"^([ \t]{0,3}(?:>[ \t]?)*)\[(?=[^\]\n]*\]:)", re.MULTILINE)
#: Characters that reorder or hide text: bidirectional controls, zero-width characters.
_INVISIBLE = re.compile("[\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
#: Targets whose cap counts bytes (UTF-8) of what is sent; the others count characters.
_BYTE_CAPPED = frozenset({"files.write", "webhook.post", "command.run"})


class DraftRefused(Exception):
    """The draft cannot go to this target; nothing is written."""


@dataclass(frozen=True, slots=True)
class Payload:
    """What is written: ``text`` for a text target, ``data`` (JSON) for a JSON body."""

    text: str
    data: Any = None


def prepare(target: Target, args: dict[str, Any], draft: str, *, mentions: bool) -> Payload:
    """The draft as ``target`` sends it, escaped for it; its cap is checked on that, never on
    the draft (escaping can make it several times longer): over it, ``DraftRefused``."""
    if target.needs_json(args):
        try:
            data = strict_json.loads(draft)
        except (strict_json.JsonError, RecursionError) as e:
            raise DraftRefused(f"the draft is not valid JSON ({e}); nothing was sent") from e
        if target.name == "webhook.post" and not mentions:
            data = _slack_data(data)
        payload = Payload(json.dumps(data, ensure_ascii=False), data)
    elif target.capability in ("code-host", "tracker"):
        text = github_text(draft, mentions=mentions)
        if target.name == "code-host.commit_status":  # its first line is the description
            text = (text.strip().splitlines() or [""])[0]
        payload = Payload(text)
    elif target.name == "webhook.post":
        text = draft if mentions else slack_text(draft)
        payload = Payload(text, {"text": text})
    else:
        payload = Payload(draft)
    _cap(target, payload, draft)
    return payload


def _cap(target: Target, payload: Payload, draft: str) -> None:
    escaped = " once escaped" if payload.text != draft else ""
    if target.name in _BYTE_CAPPED:
        sent = payload.text if payload.data is None else json.dumps(payload.data)
        size, unit = len(sent.encode("utf-8")), "bytes"
    else:
        size, unit = len(payload.text), "characters"
    if size > target.max_chars:
        raise DraftRefused(
            f"the draft is {size:,} {unit}{escaped}, over the {target.max_chars:,} "
            f"{target.name} takes"
        )


def github_text(draft: str, *, mentions: bool) -> str:
    text = _TAG.sub("&lt;", _INVISIBLE.sub("", draft))
    text = _REFERENCE.sub(r"\1\\[", text)
    if not mentions:
        text = _MENTION.sub("@" + WORD_JOINER, text)
        text = _SLASH.sub(r"\1\\/", text)
    return text


def slack_text(draft: str) -> str:
    text = _INVISIBLE.sub("", draft)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_data(data: Any) -> Any:
    """Every string of a JSON body escaped as Slack asks (a ``"<!channel>"`` pings no one)."""
    if isinstance(data, str):
        return slack_text(data)
    if isinstance(data, list):
        return [_slack_data(item) for item in data]
    if isinstance(data, dict):
        return {key: _slack_data(value) for key, value in data.items()}
    return data

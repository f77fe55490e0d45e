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
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9][A-Za-z0-9-]*)")
_SLASH = re.compile(r"^(\s*)/(?=[A-Za-z])", re.MULTILINE)
_TAG = re.compile(r"<(?=[A-Za-z!/?])")


class DraftRefused(Exception):
    """The draft cannot go to this target; nothing is written."""


@dataclass(frozen=True, slots=True)
class Payload:
    """What is written: ``text`` for a text target, ``data`` (JSON) for a JSON body."""

    text: str
    data: Any = None


def prepare(target: Target, args: dict[str, Any], draft: str, *, mentions: bool) -> Payload:
    if len(draft) > target.max_chars:
        raise DraftRefused(
            f"the draft is {len(draft):,} characters, over the {target.max_chars:,} "
            f"{target.name} takes"
        )
    if target.needs_json(args):
        try:
            data = strict_json.loads(draft)
        except (strict_json.JsonError, RecursionError) as e:
            raise DraftRefused(f"the draft is not valid JSON ({e}); nothing was sent") from e
        return Payload(json.dumps(data, ensure_ascii=False), data)
    if target.capability in ("code-host", "tracker"):
        return Payload(github_text(draft, mentions=mentions))
    if target.name == "webhook.post":
        text = draft if mentions else slack_text(draft)
        return Payload(text, {"text": text})
    return Payload(draft)


def github_text(draft: str, *, mentions: bool) -> str:
    text = _TAG.sub("&lt;", draft)
    if not mentions:
        text = _MENTION.sub("@" + WORD_JOINER, text)
        text = _SLASH.sub(r"\1\\/", text)
    return text


def slack_text(draft: str) -> str:
    return draft.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

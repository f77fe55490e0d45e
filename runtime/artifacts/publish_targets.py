"""The places a contract may ``publish`` its draft to: names, argument schemas, what draft each
accepts and how large.

A publish target is an operation of a capability, as a ``read`` is (``operations.py``): the
compiler checks a contract's ``publishes`` against this table (no publisher is imported to
validate), the operator's ``[publish]`` policy allows targets by these names, and the
publishers (``hz.runtime.publish``) implement them. ``draft`` says what the target takes:
``text`` (Markdown or plain text, any output format) or ``json`` (the job's output format must
be ``json``). ``max_chars`` caps the draft as the target receives it (GitHub keeps at most
65,536 characters of a body; hz keeps room for its marker). ``searchable``: after a write whose
answer hz did not see, hz can look for its marker at the target (``True``) or cannot tell
(``False``: such a step ends ``uncertain`` and is never re-sent by itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from hz.runtime.artifacts.operations import REPOSITORY, args_schema

#: GitHub keeps 65,536 characters of a comment or an issue body; hz's marker needs some.
GITHUB_BODY_CHARS: Final = 65_000
#: A commit status's description holds at most 140 characters.
STATUS_DESCRIPTION_CHARS: Final = 140
FILE_BYTES: Final = 8 * 1024 * 1024
WEBHOOK_BYTES: Final = 1024 * 1024
COMMAND_BYTES: Final = 8 * 1024 * 1024
TARGET_PATTERN: Final = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9_]*$(?!\n)"
#: A name the operator defines (a webhook, a command): never a URL or an argv.
OPERATOR_NAME: Final = {
    "type": "string",
    "pattern": r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$",
    "maxLength": 64,
}


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    summary: str
    args: Mapping[str, Any]
    draft: Literal["text", "json"]
    max_chars: int
    searchable: bool
    #: Where the operator's ``[publish] repositories`` applies: the argument naming it.
    repository_arg: str | None = None

    def needs_json(self, args: Mapping[str, Any]) -> bool:
        """Whether this publish sends the draft as JSON data (the job's output must be JSON):
        a ``json`` target, or ``body: json`` where the target takes that argument."""
        return self.draft == "json" or args.get("body") == "json"

    @property
    def capability(self) -> str:
        return self.name.partition(".")[0]


_REPOSITORY: Final = REPOSITORY
_NUMBER: Final = {"type": "integer", "minimum": 1}
_TITLE: Final = {"type": "string", "minLength": 1, "maxLength": 256}
_LABELS: Final = {
    "type": "array",
    "maxItems": 20,
    "items": {"type": "string", "minLength": 1, "maxLength": 50},
}
_SECTION: Final = {"type": "string", "pattern": r"^[a-z][a-z0-9-]{0,63}$"}
_SHA: Final = {"type": "string", "pattern": r"^[0-9a-f]{40}$"}
_CONTEXT: Final = {"type": "string", "minLength": 1, "maxLength": 100}
_STATE: Final = {"enum": ["success", "failure", "pending", "error"]}
#: ``text``: ``{"text": DRAFT}`` (a Slack incoming webhook's shape); ``json``: the JSON draft.
_BODY: Final = {"enum": ["text", "json"]}
_FILE_PATH: Final = {"type": "string", "minLength": 1, "maxLength": 1024}

#: The targets hz's publishers implement, by name.
TARGETS: Final[Mapping[str, Target]] = {
    t.name: t
    for t in (
        Target(
            "code-host.pull_request_comment",
            "a comment on a pull request",
            args_schema(
                {"repository": _REPOSITORY, "pull_request": _NUMBER}, ("repository", "pull_request")
            ),
            "text",
            GITHUB_BODY_CHARS,
            True,
            "repository",
        ),
        Target(
            "code-host.issue_comment",
            "a comment on an issue",
            args_schema({"repository": _REPOSITORY, "issue": _NUMBER}, ("repository", "issue")),
            "text",
            GITHUB_BODY_CHARS,
            True,
            "repository",
        ),
        Target(
            "code-host.commit_status",
            "a commit status whose description is the draft's first line",
            args_schema(
                {"repository": _REPOSITORY, "sha": _SHA, "context": _CONTEXT, "state": _STATE},
                ("repository", "sha", "context"),
            ),
            "text",
            STATUS_DESCRIPTION_CHARS,
            True,
            "repository",
        ),
        Target(
            "tracker.create_issue",
            "a new issue whose body is the draft",
            args_schema(
                {"repository": _REPOSITORY, "title": _TITLE, "labels": _LABELS},
                ("repository", "title"),
            ),
            "text",
            GITHUB_BODY_CHARS,
            True,
            "repository",
        ),
        Target(
            "tracker.update_issue_body",
            "the draft as a marked section of an issue's body (the rest is kept)",
            args_schema(
                {"repository": _REPOSITORY, "issue": _NUMBER, "section": _SECTION},
                ("repository", "issue", "section"),
            ),
            "text",
            GITHUB_BODY_CHARS,
            True,
            "repository",
        ),
        Target(
            "files.write",
            "a file in a folder the operator allows, written atomically",
            args_schema({"path": _FILE_PATH, "overwrite": {"type": "boolean"}}, ("path",)),
            "text",
            FILE_BYTES,
            True,
        ),
        Target(
            "webhook.post",
            'the draft as JSON (`{"text": …}`, or with body: json the JSON draft itself) to a '
            "webhook the operator names",
            args_schema({"webhook": OPERATOR_NAME, "body": _BODY}, ("webhook",)),
            "text",
            WEBHOOK_BYTES,
            False,
        ),
        Target(
            "command.run",
            "the draft on the standard input of a command the operator names",
            args_schema({"command": OPERATOR_NAME, "body": _BODY}, ("command",)),
            "text",
            COMMAND_BYTES,
            False,
        ),
    )
}

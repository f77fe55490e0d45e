"""The capability operations an input may ``read``: names, argument and result schemas, windows.

A capability is abstract (``code-host``, ``tracker``, ``files``, ``git``); an operation is one
thing it can fetch (``code-host.merged_pull_requests``). The operator binds each capability to
a provider (``[capabilities] code-host = "github"``); a contract names only the operation.
This table is the contract between the two: the compiler checks a contract's ``args`` and
``window`` against it (no provider is imported to validate), each provider implements the
operations of the capabilities it serves, and the fetch checks every answer against the result
schema. An operation outside this table is declared by the operator's ``command`` provider
(``[providers.command.operations."NAME"]``) with its own schemas, in the same shape.

Windows: ``24h``, ``7d``, ``2w`` (a count of minutes ``m``, hours ``h``, days ``d`` or weeks
``w``, at most 366 days) or ``since-last-success`` (from the end of the window of the job's
last completed run, as the run ledger holds it). A window resolves to two absolute UTC times
when the inputs are fetched (``Window``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

SINCE_LAST_SUCCESS: Final = "since-last-success"
#: Python's ``$`` also matches before a final line break; the contract schema's patterns end
#: with this to refuse one.
AT_END: Final = r"(?!\n)"

#: A relative window: a count and a unit (minutes, hours, days, weeks).
WINDOW_PATTERN: Final = r"^(?:[1-9][0-9]{0,5}[mhdw]|since-last-success)$(?!\n)"
_RELATIVE = re.compile(r"([1-9][0-9]{0,5})([mhdw])")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_WINDOW: Final = timedelta(days=366)
#: The most inputs one job may read through an operation (HZ417): each is a fetch with its
#: own deadline, and up to ``max_pages`` requests against the operator's API quota.
MAX_READ_INPUTS: Final = 16

#: What the capability part of an operation name may be, and the operation part.
OPERATION_PATTERN: Final = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9_]*$(?!\n)"


class WindowError(ValueError):
    """A window that is not one hz can resolve; the message says what it should be."""


def window_length(text: str) -> timedelta | None:
    """The length of a relative window (``None`` for ``since-last-success``); ``WindowError``
    for anything else or a window longer than 366 days."""
    if text == SINCE_LAST_SUCCESS:
        return None
    match = _RELATIVE.fullmatch(text)
    if match is None:
        raise WindowError(
            f"{text!r} is not a window: write a count and a unit (m, h, d or w) such as "
            f"'24h', '7d' or '2w', or '{SINCE_LAST_SUCCESS}'"
        )
    length = timedelta(seconds=int(match[1]) * _UNIT_SECONDS[match[2]])
    if length > MAX_WINDOW:
        raise WindowError(f"{text!r} is longer than 366 days")
    return length


@dataclass(frozen=True, slots=True)
class Window:
    """A resolved window: from ``since`` (inclusive) to ``until`` (exclusive), both UTC."""

    since: datetime
    until: datetime

    def to_json(self) -> dict[str, str]:
        return {"since": _utc(self.since), "until": _utc(self.until)}


def _utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("a window's times are aware (UTC)")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: its argument schema (a JSON Schema of an object), its result schema,
    whether it takes a ``window``, and one line saying what it fetches."""

    name: str
    summary: str
    args: Mapping[str, Any]
    result: Mapping[str, Any]
    window: bool = False
    examples: Mapping[str, Any] = field(default_factory=dict)

    @property
    def capability(self) -> str:
        return self.name.partition(".")[0]


def args_schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON Schema of an operation's (or a publish target's) arguments: an object of
    ``properties``, ``required`` among them, and nothing else."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required),
        "properties": properties,
    }


def _records(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "array", "items": _record(properties, required)}


def _record(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": properties}


_STRING: Final = {"type": "string"}
_TIME: Final = {"type": "string", "description": "an ISO 8601 UTC time"}
#: GitHub's owner and repository names; neither is ``.`` or ``..`` (``acme/..`` would leave
#: ``/repos/{owner}/{name}``: an HTTP client folds the path to ``/repos``). The one form for
#: reads, publishes and the code host's own check before it sends (``REPOSITORY_FORM``).
REPOSITORY: Final = {
    "type": "string",
    "pattern": r"^(?!\.\.?/)[A-Za-z0-9_.-]{1,100}/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}$(?!\n)",
    "description": "owner/name",
}
REPOSITORY_FORM: Final = re.compile(REPOSITORY["pattern"])
_REPOSITORY: Final = REPOSITORY
_NUMBER: Final = {"type": "integer", "minimum": 1}
_LABELS: Final = {"type": "array", "items": _STRING}
_PATH: Final = {"type": "string", "minLength": 1, "maxLength": 4096}
#: A revision, or two joined by ``..`` or ``...`` (a side may be empty: ``main..``), as git
#: names them: no whitespace (ECMA-262's ``\s``, spelt out: Python's differs) or control
#: character, no side that starts with ``-`` (an option) or ``/``, and no ``.`` or ``..``
#: component, so that no side reads as a path (``/etc/../etc/passwd``, ``x/..``).
_RANGE: Final = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "pattern": r"^(?![-/])(?!\.\.\.?$)(?!.*(?://|/\.|\./|/$|\.\.-|\.{4}|\.\..*\.\.))"
    r"[^\x00-\x20\x7f-\x9f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+"
    r"$(?!\n)",
    "description": "a revision range such as main..HEAD (never an option or a path)",
}

_FILE: Final = _record({"path": _STRING, "text": _STRING}, ("path", "text"))
_PULL: Final = {
    "number": _NUMBER,
    "title": _STRING,
    "url": _STRING,
    "author": {"type": ["string", "null"]},
    "merged_at": {"type": ["string", "null"]},
    "body": {"type": ["string", "null"]},
    "labels": _LABELS,
}
_ISSUE: Final = {
    "number": _NUMBER,
    "title": _STRING,
    "url": _STRING,
    "author": {"type": ["string", "null"]},
    "state": _STRING,
    "updated_at": _TIME,
    "body": {"type": ["string", "null"]},
    "labels": _LABELS,
}

#: The operations hz's providers implement, by name.
CATALOG: Final[Mapping[str, Operation]] = {
    op.name: op
    for op in (
        Operation(
            "files.read",
            "one file under the working directory, as text",
            args_schema({"path": _PATH}, ("path",)),
            _FILE,
            examples={"path": "docs/notes.md"},
        ),
        Operation(
            "files.glob",
            "the files under the working directory a glob pattern matches, as text, by path",
            args_schema(
                {"pattern": _PATH, "max_files": {"type": "integer", "minimum": 1, "maximum": 1000}},
                ("pattern",),
            ),
            {"type": "array", "items": _FILE},
            examples={"pattern": "docs/notes/*.md"},
        ),
        Operation(
            "git.log",
            "the commits of a range, or of HEAD within the window, newest first",
            args_schema(
                {
                    "range": _RANGE,
                    "path": _PATH,
                    "max_commits": {"type": "integer", "minimum": 1, "maximum": 10000},
                }
            ),
            _records(
                {
                    "commit": _STRING,
                    "author": _STRING,
                    "email": _STRING,
                    "date": _TIME,
                    "subject": _STRING,
                    "body": _STRING,
                },
                ("commit", "author", "date", "subject"),
            ),
            window=True,
            examples={"range": "main..HEAD"},
        ),
        Operation(
            "git.diff",
            "the diff of a range, cut at the size cap",
            args_schema({"range": _RANGE, "path": _PATH}, ("range",)),
            _record(
                {"range": _STRING, "diff": _STRING, "truncated": {"type": "boolean"}},
                ("range", "diff", "truncated"),
            ),
            examples={"range": "main..HEAD"},
        ),
        Operation(
            "git.changed_files",
            "the files a range changed, or the commits of HEAD within the window changed",
            args_schema({"range": _RANGE, "path": _PATH}),
            _records({"path": _STRING, "status": _STRING}, ("path", "status")),
            window=True,
            examples={"range": "main..HEAD"},
        ),
        Operation(
            "code-host.merged_pull_requests",
            "the pull requests of a repository merged within the window",
            args_schema({"repository": _REPOSITORY, "base": _STRING}, ("repository",)),
            _records(_PULL, ("number", "title", "url", "merged_at")),
            window=True,
            examples={"repository": "acme/app"},
        ),
        Operation(
            "code-host.pull_request",
            "one pull request with its changed files and its diff (capped)",
            args_schema({"repository": _REPOSITORY, "number": _NUMBER}, ("repository", "number")),
            _record(
                {
                    **_PULL,
                    "state": _STRING,
                    "files": _records(
                        {
                            "path": _STRING,
                            "status": _STRING,
                            "additions": {"type": "integer"},
                            "deletions": {"type": "integer"},
                        },
                        ("path", "status"),
                    ),
                    "diff": _STRING,
                    "truncated": {"type": "boolean"},
                },
                ("number", "title", "url", "state", "files", "diff"),
            ),
            examples={"repository": "acme/app", "number": 42},
        ),
        Operation(
            "tracker.issues_updated",
            "the issues of a repository updated within the window (pull requests left out)",
            args_schema(
                {
                    "repository": _REPOSITORY,
                    "state": {"enum": ["open", "closed", "all"]},
                    "labels": _LABELS,
                },
                ("repository",),
            ),
            _records(_ISSUE, ("number", "title", "url", "state", "updated_at")),
            window=True,
            examples={"repository": "acme/app", "state": "all"},
        ),
        Operation(
            "tracker.issue",
            "one issue with its comments",
            args_schema({"repository": _REPOSITORY, "number": _NUMBER}, ("repository", "number")),
            _record(
                {
                    **_ISSUE,
                    "comments": _records(
                        {
                            "author": {"type": ["string", "null"]},
                            "created_at": _TIME,
                            "body": _STRING,
                        },
                        ("created_at", "body"),
                    ),
                },
                ("number", "title", "url", "state", "comments"),
            ),
            examples={"repository": "acme/app", "number": 7},
        ),
    )
}

#: The capabilities of the catalog, and the one that is bound to its provider by default
#: (``files`` and ``git`` are built in; the others have no default: the operator binds them).
CAPABILITIES: Final = ("files", "git", "code-host", "tracker")
BUILT_IN_BINDINGS: Final[Mapping[str, str]] = {"files": "files", "git": "git"}

"""``[publish]``: where the operator lets contracts publish their drafts.

``mode`` (``auto``: hz publishes once the run completes; ``approve``: a person runs
``hz publish RUN``), ``allow`` (the targets, by name: none when unset), ``folders`` (where
``files.write`` may write: relative to the working directory, or absolute), ``repositories``
(``owner/name`` globs a code-host or tracker write may go to), ``jobs`` (globs of the jobs that
may publish; all when unset), ``mentions`` (``@`` mentions and slash commands kept as written:
off), ``overwrite`` (``files.write`` may replace a file its contract asks to: off), and named
operator endpoints: ``[publish.webhooks.NAME] url_env`` (the variable holding the URL, a secret)
and ``[publish.commands.NAME] argv``. A project's ``hz.toml`` can never set any of it (HZ801).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from hz.runtime.settings.keys import PUBLISH
from hz.runtime.settings.model import Expect, Flag, TableSettings

_ENV = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


class Webhook(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    url_env: Annotated[str, Field(strict=True, pattern=_ENV)]
    timeout_seconds: Annotated[float, Field(gt=0, le=600)] = 30.0


class Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    argv: Annotated[
        tuple[Annotated[str, Field(strict=True, min_length=1)], ...], Field(min_length=1)
    ]
    timeout_seconds: Annotated[float, Field(gt=0, le=3600)] = 60.0


_Globs = Annotated[
    tuple[Annotated[str, Field(strict=True, min_length=1, max_length=200)], ...],
    Expect("must be a list of strings, got {value!r}"),
]


class PublishSettings(TableSettings):
    table = PUBLISH

    mode: Annotated[
        Literal["auto", "approve"],
        Field(
            description="`auto`: publish when the run completes; `approve`: only when a person "
            "runs `hz publish RUN`"
        ),
        Expect("must be 'auto' or 'approve', got {value!r}"),
    ] = "auto"
    allow: Annotated[
        _Globs,
        Field(
            description="the publish targets contracts may use, by name or glob (`code-host.*`); "
            "unset: none"
        ),
    ] = ()
    folders: Annotated[
        _Globs,
        Field(
            description="the folders `files.write` may write into (relative to the working "
            "directory, or absolute)"
        ),
    ] = ()
    repositories: Annotated[
        _Globs,
        Field(description="the `owner/name` globs code-host and tracker publishes may go to"),
    ] = ()
    jobs: Annotated[
        _Globs,
        Field(description="globs of the jobs that may publish; unset: every job"),
    ] = ("*",)
    mentions: Annotated[
        Flag,
        Field(
            description="keep `@` mentions and slash commands of a draft as written (off: "
            "they are neutralised, nobody is notified)"
        ),
    ] = False
    overwrite: Annotated[
        Flag,
        Field(description="`files.write` may replace an existing file when its args say so"),
    ] = False
    webhooks: Annotated[
        dict[str, Webhook],
        Field(description="`[publish.webhooks.NAME] url_env`: the variable holding the URL"),
        Expect('must be tables of the form [publish.webhooks.NAME] with url_env = "VAR"'),
    ] = Field(default_factory=dict)
    commands: Annotated[
        dict[str, Command],
        Field(description="`[publish.commands.NAME] argv`: a command given the draft on stdin"),
        Expect("must be tables of the form [publish.commands.NAME] with argv = [...]"),
    ] = Field(default_factory=dict)

    def allows_job(self, job: str) -> bool:
        return any(fnmatch.fnmatchcase(job, glob) for glob in self.jobs)

    def allows_target(self, target: str) -> bool:
        return any(fnmatch.fnmatchcase(target, glob) for glob in self.allow)

    def allows_repository(self, repository: str) -> bool:
        name = repository.lower()
        return any(fnmatch.fnmatchcase(name, glob.lower()) for glob in self.repositories)

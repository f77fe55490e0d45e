"""``[providers.git]``: the git provider's settings."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hz.runtime.providers import child
from hz.runtime.providers.protocol import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    ProviderSettings,
)
from hz.runtime.settings.model import Flag, PathString


class GitSettings(ProviderSettings):
    table = "providers.git"

    executable: Annotated[
        PathString,
        Field(description="the git program: a name found on `PATH`, or an absolute path"),
    ] = "git"
    timeout_seconds: Annotated[
        child.TimeoutSeconds,
        Field(description="how long one git command may run; then its process group is stopped"),
    ] = DEFAULT_TIMEOUT_SECONDS
    max_bytes: Annotated[
        child.MaxBytes,
        Field(
            description="the most git output one fetch reads (the fetch's own cap applies too): "
            "`git.diff` is cut so that its value fits as JSON, `git.log` and "
            "`git.changed_files` fail (HZ725)"
        ),
    ] = DEFAULT_MAX_BYTES
    allow_other_git_dir: Annotated[
        Flag,
        Field(
            description="let a `.git` file send git to a git directory outside the work tree "
            "that does not record this work tree as its own (a linked worktree or a submodule "
            "needs no such leave)"
        ),
    ] = False

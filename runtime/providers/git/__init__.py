"""The ``git`` provider: ``git.log``, ``git.diff`` and ``git.changed_files`` of the working
directory's repository, read with the real git CLI.

git runs through the process chokepoint (``hz.runtime.providers.child``) in the run's working
directory, which must be in a git repository. What it may do is narrowed on every call:

- Environment: only hz's allowlist (PATH, HOME, TMPDIR, the locale); no ``GIT_*`` variable of
  hz's environment (``GIT_DIR``, ``GIT_CONFIG_*``, ``GIT_EXEC_PATH`` would point git
  elsewhere). hz sets ``GIT_CONFIG_NOSYSTEM=1``, ``GIT_TERMINAL_PROMPT=0``,
  ``GIT_OPTIONAL_LOCKS=0`` (a read never takes the index lock), ``GIT_NO_LAZY_FETCH=1`` and
  ``LC_ALL=C`` (git's messages in English, as hz quotes them).
- Nothing runs but git: ``--no-pager``, ``-c core.pager=cat``, ``-c core.fsmonitor=false``,
  ``-c log.showSignature=false`` (no gpg), ``-c protocol.allow=never`` (a partial clone's
  missing object is an error, never a download), ``--no-ext-diff --no-textconv``, and no
  command that runs hooks. A diff always compares two commits, never the working tree, so no
  clean filter runs either: each side of a range is resolved to a commit first
  (``rev-parse --verify``), and git diff gets the two hashes and ``--`` (three arguments, a
  shape git never reads as ``--no-index``, which would compare files of the disk).
- Only the working directory's own repository: every fetch first asks git for the work tree
  and the git directory (``rev-parse``); outside a repository nothing else runs, and a git
  directory outside the work tree (a planted ``.git`` file, ``gitdir: /elsewhere``) is refused
  unless git records this work tree there (a linked worktree, a submodule) or the operator
  allows it (``allow_other_git_dir``).
- Output is parsed, never guessed: ``git.log`` reads a ``--format`` of fields separated by NUL
  (``-z``); git ends a commit's message at a NUL byte, so no commit text can shift a field.
  ``changed_files`` reads ``--name-status -z``.
- Arguments are never options: a ``range`` or ``path`` that starts with ``-`` is refused
  (``HZ727``), revisions follow ``--end-of-options`` and paths follow ``--`` as literal
  pathspecs (``--literal-pathspecs``: no glob, no ``:(magic)``), and a path must stay inside
  the working directory.

Text git prints that is not UTF-8 (an author name, a file name) is decoded with U+FFFD for
each byte that is not. docs/providers-git-command.md documents the operations and what hz
relies on (git's own ``safe.directory`` ownership check).

The modules: ``provider`` (the operations), ``settings``, ``running`` (the hardened command
line, the environment, git's errors), ``repository`` (the working directory's own
repository, paths inside it), ``revisions`` (a range's two commits) and ``parsing`` (git's
output as values).
"""

from __future__ import annotations

from hz.runtime.providers.git.provider import GitProvider
from hz.runtime.providers.git.settings import GitSettings

__all__ = ["GitProvider", "GitSettings"]

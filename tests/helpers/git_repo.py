"""Real git repositories for the provider tests, built with the git CLI.

Every commit's identity and times are set through the environment (``GIT_AUTHOR_*``,
``GIT_COMMITTER_*``), so names may be any bytes and a window can select commits by date. The
developer's git configuration is never read (``GIT_CONFIG_GLOBAL=/dev/null``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

#: 2023-11-14T22:13:20Z: the commits' default time.
EPOCH = 1_700_000_000
DAY = 86_400


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, stdin: bytes | None = None, env: Mapping[str, bytes] = {}) -> bytes:
        environ = {
            k.encode(): v.encode() for k, v in os.environ.items() if not k.startswith("GIT_")
        }
        environ.update(
            {
                b"GIT_CONFIG_GLOBAL": b"/dev/null",
                b"GIT_CONFIG_NOSYSTEM": b"1",
                b"GIT_AUTHOR_NAME": b"Ann Author",
                b"GIT_AUTHOR_EMAIL": b"ann@example.com",
                b"GIT_COMMITTER_NAME": b"Carl Committer",
                b"GIT_COMMITTER_EMAIL": b"carl@example.com",
            }
        )
        environ.update({k.encode(): v for k, v in env.items()})
        done = subprocess.run(
            ["git", *args], cwd=self.path, input=stdin, env=environ, capture_output=True, check=True
        )
        return done.stdout

    def commit(
        self,
        message: bytes | str,
        *,
        files: Mapping[str, bytes | str] = {},
        remove: tuple[str, ...] = (),
        when: int = EPOCH,
        author: bytes | None = None,
    ) -> str:
        """A commit of ``files`` (written) and ``remove`` (deleted) with ``message`` as is,
        committed at ``when`` (Unix seconds, UTC); its hash."""
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
            self.git("add", "--", name)
        for name in remove:
            self.git("rm", "-q", "--", name)
        stamp = f"@{when} +0000".encode()
        env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        if author is not None:
            env["GIT_AUTHOR_NAME"] = author
        raw = message.encode() if isinstance(message, str) else message
        self.git(
            "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-", stdin=raw, env=env
        )
        return self.head()

    def raw_commit(self, body: bytes) -> str:
        """A commit object written byte for byte (``body``: its headers after ``tree`` and
        ``parent``, a blank line, the message), made HEAD: what ``git commit`` would refuse."""
        tree = self.git("write-tree").decode().strip()
        parent = self.head()
        data = f"tree {tree}\nparent {parent}\n".encode() + body
        sha = self.git("hash-object", "-t", "commit", "-w", "--literally", "--stdin", stdin=data)
        self.git("update-ref", "HEAD", sha.decode().strip())
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").decode().strip()

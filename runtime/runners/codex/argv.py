"""The ``codex exec`` command line, and the private ``CODEX_HOME`` of one run.

Flags verified against the pinned CLI (0.171.0); every one of them is also exercised by the
real-CLI tests, which fail on an unknown flag or config key.

- ``--json``: JSONL events on stdout. The prompt comes on stdin (``-``), closed after writing.
- ``--sandbox read-only`` and ``-c approval_policy="never"``: commands the model asks for run
  in Codex's read-only sandbox, and nothing can ask a human for more.
- ``--skip-git-repo-check``, ``-C <workdir>``, ``--ephemeral`` (no session files kept).
- ``--ignore-user-config`` (no ``$CODEX_HOME/config.toml``), ``--ignore-rules`` (no execpolicy
  files), ``-c project_doc_max_bytes=0`` (no ``AGENTS.md`` from the working directory): only
  hz's configuration shapes the session. Untrusted project ``.codex/`` config is ignored by
  the CLI itself.
- ``--disable unbounded_connection_retries``: an unreachable model API ends the run instead
  of retrying forever.
- The closed tool surface and the key-free environment of the model's commands
  (``codex.surface``): ``-c web_search="disabled"``, ``--disable`` of every feature that adds
  a tool, and a ``shell_environment_policy`` that excludes every variable hz passed the CLI.
- ``-c model_instructions_file="<private>/contract.md"``: the contract, from a private file,
  as the session's base instructions (replacing Codex's built-in ones). The pinned CLI has no
  file flag that appends; ``developer_instructions`` takes its text only on argv, which every
  user of the machine can read.
- ``-m <model>``; ``--output-schema <private>/output-schema.json`` when the output has a schema;
  then the operator's ``codex_config`` overrides.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hz.runtime.process.privatefiles import remove_tree
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.codex.surface import closed_surface, shell_environment, toml_string

CONTRACT_FILE = "contract.md"
SCHEMA_FILE = "output-schema.json"


def build_argv(
    executable: str,
    settings: CodexSettings,
    *,
    working_dir: str,
    contract_file: str | None,
    schema_file: str | None,
) -> tuple[str, ...]:
    argv = [
        executable,
        "exec",
        "--json",
        "--sandbox",
        "read-only",
        "-c",
        'approval_policy="never"',
        "--skip-git-repo-check",
        "--ephemeral",
        "--ignore-user-config",
        "--ignore-rules",
        "--disable",
        "unbounded_connection_retries",
        *closed_surface(),
        *shell_environment(settings.env),
        "-c",
        "project_doc_max_bytes=0",
        "-C",
        working_dir,
    ]
    if contract_file is not None:
        argv += ["-c", f"model_instructions_file={toml_string(contract_file)}"]
    if settings.model is not None:
        argv += ["-m", settings.model]
    if schema_file is not None:
        argv += ["--output-schema", schema_file]
    for override in settings.config:
        argv += ["-c", override]
    argv.append("-")  # the prompt: read from stdin
    return tuple(argv)


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hz" / "codex-home"


@contextmanager
def private_codex_home() -> Iterator[Path]:
    """A fresh 0700 ``CODEX_HOME`` for one run, removed afterwards.

    Made under the user's cache directory rather than the temporary one: the CLI refuses to
    install its helper commands in a ``CODEX_HOME`` under ``/tmp`` and warns on every run.
    """
    try:
        root = _cache_root()
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    except OSError:  # no writable cache directory: the temporary one still works
        path = Path(tempfile.mkdtemp(prefix="hz-codex-home-"))
    try:
        yield path
    finally:
        remove_tree(path)

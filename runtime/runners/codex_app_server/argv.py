"""The ``codex app-server`` command line and the thread and turn it is asked for.

The command line carries only switches (the prompt and the contract go over stdin, in
``thread/start`` and ``turn/start``, so they never show in the process list):
``app-server --listen stdio://``, ``approval_policy="never"``, ``sandbox_mode="read-only"``,
bounded connection retries, the closed tool surface and key-free shell environment shared with
the ``codex`` runner (``codex.surface``), no ``AGENTS.md`` from the working directory, then the
operator's ``codex_config``. ``app-server`` has no ``--ignore-user-config``: the ``CODEX_HOME``
is always a fresh private one, so there is no user configuration to ignore.
"""

from __future__ import annotations

from typing import Any

from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.codex.surface import closed_surface, shell_environment


def build_argv(executable: str, settings: CodexSettings) -> tuple[str, ...]:
    argv = [
        executable,
        "app-server",
        "--listen",
        "stdio://",
        "-c",
        'approval_policy="never"',
        "-c",
        'sandbox_mode="read-only"',
        "--disable",
        "unbounded_connection_retries",
        *closed_surface(),
        *shell_environment(settings.env),
        "-c",
        "project_doc_max_bytes=0",
    ]
    for override in settings.config:
        argv += ["-c", override]
    return tuple(argv)


def thread_params(settings: CodexSettings, *, working_dir: str, contract: str) -> dict[str, Any]:
    """``thread/start``: ephemeral, read-only, never asking; the contract replaces Codex's
    built-in instructions (an empty contract leaves them)."""
    params: dict[str, Any] = {
        "cwd": working_dir,
        "ephemeral": True,
        "sandbox": "read-only",
        "approvalPolicy": "never",
    }
    if contract.strip():
        params["baseInstructions"] = contract
    if settings.model is not None:
        params["model"] = settings.model
    return params


def turn_params(prompt: str, output: OutputSpec) -> dict[str, Any]:
    params: dict[str, Any] = {"input": [{"type": "text", "text": prompt, "text_elements": []}]}
    if output.schema_ is not None:
        params["outputSchema"] = output.schema_
    return params

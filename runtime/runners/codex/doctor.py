"""``hz doctor`` for the codex runner: found, runnable, at least the pinned version.

The version check runs the CLI with the environment a session gets. What the runner cannot
enforce (a budget) is shown by ``hz doctor`` from its capabilities, and a required budget
enforcement fails there, generically.
"""

from __future__ import annotations

from hz.runtime.process.environment import child_environment
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.executables import (
    PROBE_SECONDS,
    judge_version,
    probe,
    resolve_executable,
)
from hz.runtime.runners.protocol import Check

#: The oldest CLI whose flags and event shapes hz was tested against.
MIN_VERSION = (0, 171, 0)


def version_check(executable: str, env: dict[str, str]) -> Check:
    outcome = probe(executable, ["--version"], env)
    text = outcome.stdout.decode("utf-8", errors="replace")
    if not outcome.ok:
        timed_out = f"did not answer within {PROBE_SECONDS:g} s"
        why = timed_out if outcome.timed_out else outcome.describe_exit()
        detail = f"`{executable} --version` {why}: {outcome.stderr_tail(300).strip()}"
        return Check("codex version", "failed", detail.rstrip(": "))
    return judge_version("codex version", text, MIN_VERSION)


def checks(settings: CodexSettings) -> list[Check]:
    env = child_environment(passthrough=settings.env)
    executable = resolve_executable(settings.executable, env)
    if executable is None:
        where = "" if "/" in settings.executable else " on PATH"
        found = Check(
            "codex executable",
            "failed",
            f"{settings.executable} not found{where}; install @openai/codex or set "
            "[system.runner] codex_executable",
        )
        return [found]
    return [
        Check("codex executable", "ok", executable),
        version_check(executable, env),
    ]

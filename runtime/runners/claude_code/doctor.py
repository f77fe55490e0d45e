"""``hz doctor`` for the claude-code runner: found, new enough, logged in.

The checks run the CLI with the same environment a session gets, so "logged in" means logged
in for hz's runs (an ``ANTHROPIC_API_KEY`` hz does not pass does not count).
"""

from __future__ import annotations

from hz.runtime.artifacts import strict_json
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.executables import (
    PROBE_SECONDS,
    judge_version,
    probe,
    resolve_executable,
    unusable,
)
from hz.runtime.runners.protocol import Check

#: The oldest CLI whose flags and stream-json shapes hz was tested against.
MIN_VERSION = (2, 1, 332)


def checks(settings: ClaudeSettings) -> list[Check]:
    env = settings.environment()
    executable = resolve_executable(settings.executable, env)
    if executable is None:
        return [
            Check(
                "claude executable",
                "failed",
                f"{unusable(settings.executable)}; install "
                "@anthropic-ai/claude-code or set [system.runner] claude_executable",
            )
        ]
    found = Check("claude executable", "ok", executable)
    return [found, version_check(executable, env), login_check(executable, env, settings)]


def _run(executable: str, args: list[str], env: dict[str, str]) -> tuple[int | None, str]:
    outcome = probe(executable, args, env)
    if outcome.launch_error is not None:
        return None, outcome.launch_error
    if outcome.timed_out:
        return None, f"`claude {' '.join(args)}` did not answer within {PROBE_SECONDS:g} s"
    return outcome.exit_code, outcome.stdout.decode("utf-8", errors="replace")


def version_check(executable: str, env: dict[str, str]) -> Check:
    code, text = _run(executable, ["--version"], env)
    if code != 0:
        return Check("claude version", "failed", f"cannot read the version: {text.strip()[:200]}")
    return judge_version("claude version", text, MIN_VERSION)


def judge_login(code: int | None, text: str, settings: ClaudeSettings) -> Check:
    """Reads ``claude auth status`` (JSON; exit 1 when logged out)."""
    try:
        status = strict_json.loads(text, lone_surrogates="replace")
    except strict_json.JsonError:
        status = None
    if not isinstance(status, dict):
        return Check("claude login", "failed", f"cannot read `claude auth status`: {text[:200]}")
    method = status.get("authMethod")
    if status.get("loggedIn") is not True or code != 0:
        hint = (
            ""
            if settings.allow_api_key_billing
            else ", or set [system.runner] allow_api_key_billing = true to use ANTHROPIC_API_KEY"
        )
        return Check("claude login", "failed", f"not logged in; run `claude auth login`{hint}")
    if method == "api_key":
        source = status.get("apiKeySource", "an API key")
        if not settings.allow_api_key_billing:
            return Check(
                "claude login",
                "failed",
                f"the CLI would use an API key from {source}, which hz refuses while "
                "[system.runner] allow_api_key_billing is off",
            )
        return Check("claude login", "ok", f"API key from {source} (billed to the API account)")
    return Check("claude login", "ok", f"logged in ({method})")


def login_check(executable: str, env: dict[str, str], settings: ClaudeSettings) -> Check:
    code, text = _run(executable, ["auth", "status"], env)
    return judge_login(code, text, settings)

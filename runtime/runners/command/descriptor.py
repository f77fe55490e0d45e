"""What the ``command`` runner enforces: what hz does itself, and what the operator declares.

hz cannot see inside an arbitrary agent program. ``command_enforces_read_only = true`` is the
operator's declaration that the command keeps its agent read-only — no file writes, no
network, no sub-agents — and is the reason those are marked ``supported``; without it the
runner refuses to run at all.
"""

from __future__ import annotations

from hz.runtime.runners.capabilities import Descriptor, Mark, supported, unsupported, unverified
from hz.runtime.runners.command.settings import CommandSettings

_RUNNER = "tests/integration/test_command_runner.py::"
_DECLARED = (
    "declared by the operator: [system.runner] command_enforces_read_only = true "
    "(hz cannot check the command)"
)
_UNDECLARED = "the command is not declared read-only; the runner refuses to run"


def descriptor(settings: CommandSettings | None) -> Descriptor:
    declared = settings is not None and settings.enforces_read_only
    read_only: Mark = supported(reason=_DECLARED) if declared else unverified(_UNDECLARED)
    budget = (
        unverified(
            "passed as {max_usd}; whether the command stops at it is its own business (a "
            "reported cost above it turns the result into budget)"
        )
        if settings is not None and settings.uses("max_usd")
        else unsupported("the command takes no {max_usd}")
    )
    tools = (
        unverified(
            "passed as {tools}; hz only checks that the job's tools are in command_read_only_tools"
        )
        if settings is not None and settings.uses("tools")
        else unsupported("the command takes no {tools}")
    )
    return Descriptor.of(
        "command",
        None,
        {
            "timeout": supported(
                _RUNNER + "test_sleep_past_the_timeout",
                _RUNNER + "test_ignoring_sigterm_gets_sigkill_two_seconds_later",
            ),
            "budget": budget,
            "tools": tools,
            "turns": unsupported("hz has no turn limit to pass to a command"),
            "structured_output": supported(
                "tests/integration/test_hostile_answers.py::"
                "test_hostile_json_from_the_command_runner_is_a_failure_with_a_receipt",
                reason="hz checks a json answer against the output schema",
            ),
            "cancellation": supported(
                "tests/integration/test_cli_run_command.py::"
                "test_interrupted_run_is_cancelled_with_a_receipt_and_nothing_left",
                "tests/integration/test_cli_run_command.py::"
                "test_a_second_signal_does_not_stop_the_cleanup",
            ),
            "network": read_only,
            "sub_agents": read_only,
            "file_writes": read_only,
            "credential_isolation": unverified(
                "an environment allowlist keeps unlisted credentials out of the command's "
                "environment (tests/integration/test_cli_run_command.py::"
                "test_no_secret_reaches_the_agent); which files its agent can read is the "
                "command's business"
            ),
        },
    )

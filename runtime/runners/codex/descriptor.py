"""What the ``codex`` runners enforce with the pinned CLI, and the tests that prove it.

``codex`` (``codex exec``) and ``codex-app-server`` share the read-only sandbox, the closed
tool surface and the key-free shell environment (``surface``); they differ in how a run ends.
"""

from __future__ import annotations

from collections.abc import Mapping

from hz.runtime.runners.capabilities import Descriptor, Mark, supported, unsupported

CLI_VERSION = "0.171.0"
_EXEC = "tests/integration/test_codex_cli.py::"
_APP = "tests/integration/test_codex_app_server_cli.py::"
_NETWORK = "tests/integration/test_sandbox_network.py::test_the_models_commands_reach_no_network"
_CHECKED = (
    "tests/unit/test_execute.py::test_schema_mismatch_is_failed_schema_invalid_with_draft_kept"
)


def _shared(surface: str, write: str, env: str) -> dict[str, Mark]:
    return {
        "budget": unsupported("codex has no spending cap; a reported cost is only recorded"),
        "tools": unsupported(
            "the model gets a shell (exec_command) inside the read-only sandbox; the job's "
            "tool names are not applied",
            surface,
        ),
        "turns": unsupported("codex has no turn limit; only the timeout ends a long session"),
        "network": supported(
            surface,
            _NETWORK,
            reason="web_search is disabled, and the read-only sandbox gives commands no network",
        ),
        "sub_agents": supported(surface, reason="multi_agent is disabled"),
        "file_writes": supported(write, reason="sandbox_mode read-only"),
        "credential_isolation": unsupported(
            "commands in the read-only sandbox read any file the user running hz can read, "
            "credential files included; the variables passed for the CLI are hidden from them",
            env,
        ),
    }


def _build(runner: str, marks: Mapping[str, Mark]) -> Descriptor:
    return Descriptor.of(runner, CLI_VERSION, marks)


def exec_descriptor() -> Descriptor:
    surface = _EXEC + "test_the_model_is_offered_only_the_command_tools"
    return _build(
        "codex",
        {
            "timeout": supported(_EXEC + "test_a_hanging_model_is_ended_by_the_timeout"),
            "structured_output": supported(
                _EXEC + "test_structured_output_valid", _EXEC + "test_structured_output_invalid"
            ),
            "cancellation": supported(
                "tests/integration/test_cli_run_command.py::"
                "test_interrupted_run_is_cancelled_with_a_receipt_and_nothing_left",
                reason="the process chokepoint every CLI runner starts through kills the group",
            ),
            **_shared(
                surface,
                _EXEC + "test_a_command_the_sandbox_refuses_is_fed_back_to_the_model",
                _EXEC + "test_the_models_commands_see_no_variable_passed_for_the_cli",
            ),
        },
    )


def app_server_descriptor() -> Descriptor:
    surface = _APP + "test_an_answer_with_usage"
    return _build(
        "codex-app-server",
        {
            "timeout": supported(
                _APP + "test_the_timeout_interrupts_the_turn_then_stops_the_server",
                _APP + "test_the_timeout_against_a_wedged_server_kills_it",
            ),
            "structured_output": supported(
                _CHECKED, reason="outputSchema on turn/start; hz checks the answer again"
            ),
            "cancellation": supported(
                _APP + "test_cancel_mid_turn_interrupts_it_and_keeps_the_usage",
                _APP + "test_hz_run_sigterm_mid_turn_interrupts_and_exits_cancelled",
            ),
            **_shared(
                surface,
                _APP + "test_a_write_is_refused_by_the_sandbox",
                _APP + "test_the_models_commands_see_no_variable_passed_for_the_cli",
            ),
        },
    )

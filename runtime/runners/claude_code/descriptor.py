"""What the ``claude-code`` runner enforces with the pinned CLI, and the tests that prove it."""

from __future__ import annotations

from hz.runtime.runners.capabilities import Descriptor, supported, unsupported
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.claude_code.tools import TOOLS_VERSION

_CLI = "tests/integration/test_claude_code_cli.py::"
_CANCEL = (
    "tests/integration/test_cli_run_command.py::"
    "test_interrupted_run_is_cancelled_with_a_receipt_and_nothing_left",
    "tests/integration/test_cli_run_command.py::test_a_second_signal_does_not_stop_the_cleanup",
)
_SURFACE = _CLI + "test_default_session_offers_only_the_read_only_tools"


def descriptor(settings: ClaudeSettings | None) -> Descriptor:
    settings = settings or ClaudeSettings()
    turns = (
        supported(_CLI + "test_every_optional_flag_parses")
        if settings.max_turns is not None
        else unsupported(
            "the CLI never stops a model that keeps calling tools; set [system.runner] max_turns"
        )
    )
    network = (
        unsupported(
            f"[system.runner] network_tools gives the model {', '.join(settings.network_tools)}",
            _CLI + "test_network_tools_only_through_network_tools_and_named_widened",
        )
        if settings.network_tools
        else supported(
            _SURFACE,
            "tests/unit/test_claude_settings.py::test_invalid_settings",
            reason="no WebFetch, WebSearch or Bash is offered (the CLI's own API traffic is "
            "not the model's)",
        )
    )
    return Descriptor.of(
        "claude-code",
        TOOLS_VERSION,
        {
            "timeout": supported(
                _CLI + "test_endless_tool_calls_end_at_hz_timeout_with_the_group_killed"
            ),
            "budget": supported(
                _CLI + "test_budget_exhaustion_keeps_the_cost",
                reason="--max-budget-usd: the CLI stops before the next request once the cost "
                "exceeds it, so the last turn can overshoot",
            ),
            "tools": supported(_SURFACE, _CLI + "test_bash_under_read_grep_profile_is_not_run"),
            "turns": turns,
            "structured_output": supported(
                _CLI + "test_structured_output_valid",
                _CLI + "test_structured_output_invalid",
                _CLI + "test_an_output_schema_over_the_argv_limit_goes_on_stdin",
            ),
            "cancellation": supported(
                *_CANCEL, reason="the process chokepoint every CLI runner starts through"
            ),
            "network": network,
            "sub_agents": supported(
                _SURFACE,
                "tests/unit/test_claude_settings.py::test_invalid_settings",
                reason="Agent and Task are refused in read_only_tools and network_tools",
            ),
            "file_writes": supported(
                _SURFACE, _CLI + "test_bash_under_read_grep_profile_is_not_run"
            ),
            "credential_isolation": unsupported(
                "Read, Grep and Glob read any file the user running hz can read, credential "
                "files included (~/.claude/.credentials.json, ~/.aws/credentials); run hz as a "
                "user that can read only what the agent may see. The environment holds no API "
                "key unless allow_api_key_billing = true",
                _CLI + "test_api_key_not_passed_without_allow_api_key_billing",
            ),
        },
    )

"""What the configuration may contain: its tables, their keys, defaults and value checks.

Six tables exist: ``[capabilities]`` (which runner is bound), ``[system.runner]`` (how the
bound runner runs: the shared keys below plus every key some registered runner declares in
its ``settings_model``), ``[system.policy]`` (the pre-run gate), ``[system]`` and
``[system.budget]`` (the run ledger: where it lives, how many attempts and parallel runs, spend
ceilings across runs) and ``[authoring]`` (options of the authoring commands). Only
``[authoring]`` may appear in a project's ``hz.toml``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

CAPABILITIES = "capabilities"
RUNNER = "system.runner"
AUTHORING = "authoring"
SYSTEM = "system"
BUDGET = "system.budget"
POLICY = "system.policy"
TABLES: tuple[str, ...] = (CAPABILITIES, RUNNER, AUTHORING, SYSTEM, BUDGET, POLICY)

#: [system.runner] keys hz itself reads, whatever runner is bound.
SHARED_RUNNER_KEYS = frozenset({"model", "max_turns", "require_enforced_budget", "receipt_dir"})
CAPABILITY_KEYS = frozenset({"agent_runner"})
AUTHORING_KEYS = frozenset({"max_usd_ceiling"})
SYSTEM_KEYS = frozenset({"state_dir", "max_attempts", "max_parallel"})
BUDGET_KEYS = frozenset({"max_usd_per_day", "per_runner"})
#: [system.policy]: the pre-run gate (``hz.runtime.policy``).
POLICY_KEYS = frozenset({"require", "allow_unenforced"})

DEFAULTS: dict[tuple[str, str], Any] = {
    (CAPABILITIES, "agent_runner"): "claude-code",
    (AUTHORING, "max_usd_ceiling"): 100,
}


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "a non-empty string"


def _path(value: Any) -> str | None:
    # A NUL cannot be in a file name: the first use of the path would be a ValueError.
    ok = isinstance(value, str) and value != "" and "\x00" not in value
    return None if ok else "a path (a non-empty string without a NUL character)"


def _positive_int(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return None if ok else "a positive integer"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _positive_number(value: Any) -> str | None:
    # TOML has inf and nan: an unbounded ceiling is no ceiling, and nan compares false.
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
    return None if ok else "a finite number greater than 0"


def _ceilings(value: Any) -> str | None:
    ok = isinstance(value, dict) and all(
        isinstance(k, str) and _positive_number(v) is None for k, v in value.items()
    )
    return None if ok else "a table of runner names to finite numbers greater than 0"


def _capability_names(value: Any) -> str | None:
    from hz.runtime.capabilities import NAMES

    ok = isinstance(value, list) and all(isinstance(v, str) and v in NAMES for v in value)
    return None if ok else f"a list of capability names ({', '.join(NAMES)})"


#: Value checks for the keys hz reads itself; runner-specific keys are checked by the runner.
_CHECKS: dict[tuple[str, str], Callable[[Any], str | None]] = {
    (CAPABILITIES, "agent_runner"): _string,
    (RUNNER, "model"): _string,
    (RUNNER, "max_turns"): _positive_int,
    (RUNNER, "require_enforced_budget"): _boolean,
    (RUNNER, "receipt_dir"): _path,
    (AUTHORING, "max_usd_ceiling"): _positive_number,
    (SYSTEM, "state_dir"): _path,
    (SYSTEM, "max_attempts"): _positive_int,
    (SYSTEM, "max_parallel"): _positive_int,
    (BUDGET, "max_usd_per_day"): _positive_number,
    (BUDGET, "per_runner"): _ceilings,
    (POLICY, "require"): _capability_names,
    (POLICY, "allow_unenforced"): _capability_names,
}


def value_problem(table: str, key: str, value: Any) -> str | None:
    """What the value should have been, or None when it is acceptable."""
    check = _CHECKS.get((table, key))
    if check is None:
        return None
    expected = check(value)
    return None if expected is None else f"[{table}] {key} must be {expected}, got {value!r}"


_EXECUTION_WORDS = ("runner", "model", "executable", "command", "env", "argv", "shell")


def is_execution_key(table: str, key: str) -> bool:
    """Whether a project file setting this key would choose what runs (refused: HZ801)."""
    if table == CAPABILITIES or table == "system" or table.startswith("system."):
        return True
    return any(word in part for part in key.lower().split("_") for word in _EXECUTION_WORDS)

"""How a command's finished process becomes an ``AgentResult``."""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.models import Budget
from hz.runtime.artifacts.result import AgentResult, Usage
from hz.runtime.process.bounded import ProcessOutcome
from hz.runtime.process.limits import MAX_OUTPUT
from hz.runtime.runners.command.settings import CommandSettings

MAX_OUTPUT_FILE = MAX_OUTPUT
STDERR_TAIL = 4096


@dataclass(frozen=True, slots=True)
class Output:
    data: bytes
    truncated: bool
    origin: str  # "stdout" or "the output file"


class OutputProblem(Exception):
    """The output could not be read; the message is the result's ``reason``."""


def read_output_file(path: Path, cap: int = MAX_OUTPUT_FILE) -> Output:
    """Read at most ``cap`` bytes of the file the command wrote, never through a symlink.

    The directory is opened first and the file relative to it, so neither the file nor a
    swapped directory path is followed; a FIFO can't block us (``O_NONBLOCK``, regular only).
    """
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OutputProblem(
                "the private directory was replaced by a symbolic link; hz does not follow it"
            ) from e
        raise OutputProblem(f"cannot open the private directory: {e.strerror}") from e
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(path.name, flags, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise OutputProblem("the output file is a symbolic link; hz does not follow it") from e
        if e.errno == errno.ENOENT:
            raise OutputProblem("the command removed the output file") from e
        raise OutputProblem(f"cannot read the output file: {e.strerror}") from e
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OutputProblem("the output file is not a regular file")
        data = f.read(cap + 1)
    return Output(data[:cap], len(data) > cap, "the output file")


def result_from(
    outcome: ProcessOutcome,
    *,
    output: Output | OutputProblem | None,
    settings: CommandSettings,
    budget: Budget,
    timeout: float,
    base: dict[str, Any],
) -> AgentResult:
    """Map the process outcome (and the output read afterwards) to a result; see docs."""
    common = {
        **base,
        "duration_seconds": outcome.duration_seconds,
        "exit_code": outcome.exit_code,
        "stderr_tail": outcome.stderr_tail(STDERR_TAIL),
    }

    def failed(kind: str, reason: str, **more: Any) -> AgentResult:
        return AgentResult(**common, status="failed", failure_kind=kind, reason=reason, **more)

    if outcome.launch_error is not None:
        return failed("launch_failed", f"the command did not start: {outcome.launch_error}")
    if outcome.timed_out:
        reason = f"no result within {timeout:g} s; the command's process group was stopped"
        return AgentResult(**common, status="timeout", reason=reason)
    if outcome.inactivity_timed_out:
        quiet = settings.inactivity_timeout or 0.0
        return failed("inactivity_timeout", f"no output for {quiet:g} s; the command was stopped")
    if outcome.exit_code != 0:
        return failed("runtime_error", f"the command {outcome.describe_exit()}")
    if isinstance(output, OutputProblem):
        return failed("runtime_error", str(output))
    if output is None:
        output = Output(outcome.stdout, outcome.stdout_truncated, "stdout")
    if output.truncated:
        cap = len(output.data)
        draft = None
        if settings.output == "text":  # kept for inspection; the status says not to use it
            draft = output.data.decode("utf-8", errors="replace")
        return failed(
            "output_limit",
            f"the command wrote more than {cap} bytes to {output.origin}",
            output_truncated=True,
            draft=draft,
        )
    if not output.data.strip():
        return failed("runtime_error", f"the command wrote nothing to {output.origin}")
    if settings.output == "text":
        return _checked(
            AgentResult(
                **common, status="completed", draft=output.data.decode("utf-8", errors="replace")
            ),
            budget,
        )
    try:
        fields = parse_json_output(output.data, settings.json_draft_key, output.origin)
    except OutputProblem as e:
        return failed("runtime_error", str(e))
    return _checked(AgentResult(**common, status="completed", **fields), budget)


def _checked(result: AgentResult, budget: Budget) -> AgentResult:
    """A command that reports spending more than the budget did not complete within it."""
    if result.cost_usd is not None and result.cost_usd > budget.max_usd:
        reason = (
            f"the command reported ${result.cost_usd:g}, over the budget of ${budget.max_usd:g}"
        )
        return result.model_copy(
            update={"status": "budget", "failure_kind": "budget_exceeded", "reason": reason}
        )
    return result


def parse_json_output(data: bytes, key: str, origin: str) -> dict[str, Any]:
    """``{key: draft, "usage": {...}?, "total_cost_usd": n?}`` → AgentResult fields."""
    try:
        doc = strict_json.loads(data, lone_surrogates="replace")
    except strict_json.JsonError as e:
        raise OutputProblem(f"the JSON on {origin} is malformed: {e}") from e
    if not isinstance(doc, dict):
        raise OutputProblem(f"the JSON on {origin} is not an object")
    if key not in doc:
        raise OutputProblem(f"the JSON on {origin} has no {key!r} key")
    fields: dict[str, Any] = {}
    value: JsonValue = doc[key]
    if isinstance(value, str):
        fields["draft"] = value
    elif isinstance(value, dict | list):
        fields["draft"] = json.dumps(value, ensure_ascii=False)
        fields["structured_output"] = value
    else:
        raise OutputProblem(f"{key!r} in the JSON on {origin} is not a string, object or array")
    if not fields["draft"].strip():
        raise OutputProblem(f"{key!r} in the JSON on {origin} is empty")
    if "usage" in doc:
        fields["usage"] = _usage(doc["usage"], origin)
    cost = doc.get("total_cost_usd")
    if cost is not None:
        if isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0:
            raise OutputProblem(f"total_cost_usd in the JSON on {origin} is not a number >= 0")
        fields["cost_usd"] = float(cost)
    return fields


def _usage(value: object, origin: str) -> Usage:
    if not isinstance(value, dict):
        raise OutputProblem(f"usage in the JSON on {origin} is not an object")
    counts: dict[str, int] = {}
    for name in Usage.model_fields:
        n = value.get(name, 0)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise OutputProblem(f"usage.{name} in the JSON on {origin} is not an integer >= 0")
        counts[name] = n
    return Usage(**counts)

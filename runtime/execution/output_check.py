"""Checking a completed run's draft against the job's output spec.

With ``format: json`` the draft (or the runner's ``structured_output``) must parse and, when
the job has a schema, validate against it. A mismatch is ``failed``/``schema_invalid`` with
the draft kept and the first error (its JSON path and message) as the reason.
"""

from __future__ import annotations

from typing import Any

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.artifacts.result import AgentResult


def json_path(path: Any) -> str:
    """``$.items[0].title`` for a jsonschema error path."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def check_output(result: AgentResult, output: OutputSpec) -> AgentResult:
    if result.status != "completed" or output.format != "json":
        return result
    value = result.structured_output
    if value is None:
        try:
            value = strict_json.loads(result.draft or "")
        except strict_json.JsonError as e:
            where = f" at line {e.lineno} column {e.colno}" if e.located else ""
            return _invalid(result, f"the draft is not valid JSON: {e.msg}{where}")
    if output.schema_ is not None:
        # Imported here: jsonschema is a large import that only json outputs need.
        from jsonschema.exceptions import best_match

        from hz.runtime.jsonschema import SchemaProblem, errors

        try:
            error = best_match(errors(output.schema_, value))
        except SchemaProblem as problem:
            return _invalid(
                result, f"the draft could not be checked against the output schema: {problem}"
            )
        if error is not None:
            where = json_path(error.absolute_path)
            return _invalid(
                result, f"the draft does not match the output schema at {where}: {error.message}"
            )
    return result.model_copy(update={"structured_output": value})


def _invalid(result: AgentResult, reason: str) -> AgentResult:
    return result.model_copy(
        update={"status": "failed", "failure_kind": "schema_invalid", "reason": reason}
    )

"""The ``echo`` runner: a runner in the product for demos and tests, as httpx ships a
``MockTransport``. It starts no process and answers with the prompt as its draft.

``[system.runner] echo_status`` (default ``completed``), ``echo_failure_kind`` and
``echo_retry_after`` make it end as any other runner could, so scripts can try their handling
of every status (and of an automatic retry) without an agent installed.
``echo_draft = "example"`` makes it answer a ``json`` job with a document made from the output
schema (:func:`example_of`) instead of the prompt, to try a JSON contract.
"""

from __future__ import annotations

import json
import math
import time
from typing import Annotated, Any, ClassVar, Literal, cast, get_args

from pydantic import Field, JsonValue

from hz.runtime.artifacts.result import AgentResult, FailureKind, Status
from hz.runtime.runners.base import SettingsRunner
from hz.runtime.runners.capabilities import NAMES, Descriptor, supported
from hz.runtime.runners.protocol import Capabilities, Check, ProgressReporter, RunPlan, RunRequest
from hz.runtime.runners.settings import Expect, ModelName, RunnerSettings, model_key

_STATUSES: tuple[str, ...] = get_args(Status)
_KINDS: tuple[str, ...] = get_args(FailureKind)


class EchoSettings(RunnerSettings):
    status: Annotated[
        Status,
        Field(
            alias="echo_status",
            description="how every run ends: " + ", ".join(f"`{s}`" for s in _STATUSES),
        ),
        Expect(f"must be one of {', '.join(_STATUSES)}, got {{value!r}}"),
    ] = "completed"
    failure_kind: Annotated[
        FailureKind | None,
        Field(alias="echo_failure_kind", description="the failure kind of every run"),
        Expect(f"must be one of {', '.join(_KINDS)}, got {{value!r}}"),
    ] = None
    model: ModelName = model_key("the model the result names", default="echo")
    draft: Annotated[
        Literal["prompt", "example"],
        Field(
            alias="echo_draft",
            description="`prompt`: the draft is the prompt; `example`: a `json` job gets a "
            "document made from its output schema",
        ),
        Expect("must be one of prompt, example, got {value!r}"),
    ] = "prompt"
    retry_after: Annotated[
        float | None,
        Field(
            alias="echo_retry_after",
            strict=True,
            ge=0,
            le=3600,
            allow_inf_nan=False,
            description="seconds to wait before trying again, as a rate-limited runner reports "
            "them (`retry_after_seconds`); with `failed` / `rate_limited` it sets the wait "
            "before hz's automatic retry",
        ),
        Expect("must be a number of seconds from 0 to 3600, got {value!r}"),
    ] = None


class EchoRunner(SettingsRunner[EchoSettings]):
    name: ClassVar[str] = "echo"
    settings_model: ClassVar[type[EchoSettings]] = EchoSettings

    @classmethod
    def descriptor(cls, settings: EchoSettings | None) -> Descriptor:
        """Nothing runs, so nothing can break a limit: everything holds by construction."""
        reason = "starts no process and calls no model: no agent acts"
        marks = dict.fromkeys(NAMES, supported(reason=reason))
        marks["structured_output"] = supported(
            "tests/unit/test_execute.py::"
            "test_schema_mismatch_is_failed_schema_invalid_with_draft_kept",
            reason="hz checks a json answer against the output schema",
        )
        return Descriptor.of(cls.name, None, marks)

    @classmethod
    def capabilities(cls, settings: EchoSettings | None) -> Capabilities:
        # Nothing runs, so nothing can exceed a limit: every limit holds by construction.
        return Capabilities(
            timeout="hard", budget="hard", tools="hard", turns="hard", structured_output="advisory"
        )

    @classmethod
    def doctor(cls, settings: EchoSettings) -> list[Check]:
        return [Check("echo", "ok", "built in; starts no process, answers with the prompt")]

    def plan(self, request: RunRequest) -> RunPlan:
        return RunPlan(argv=(), cwd=request.tools.working_dir or "", env_names=(), stdin="none")

    def run(self, request: RunRequest) -> AgentResult:
        started = time.monotonic()
        ProgressReporter(request.progress)(turns=1, tool_calls=0)
        status = self.settings.status
        draft = request.prompt
        if self.settings.draft == "example" and request.output.format == "json":
            draft = json.dumps(example_of(request.output.schema_), ensure_ascii=False)
        return AgentResult(
            runner=self.name,
            model=self.settings.model,
            status=status,
            failure_kind=self.settings.failure_kind,
            draft=draft,
            turns=1,
            cost_usd=0.0,
            duration_seconds=time.monotonic() - started,
            reason=None if status == "completed" else f"echo_status is {status}",
            retry_after_seconds=self.settings.retry_after,
        )


def example_of(schema: Any) -> JsonValue:
    """A document for a JSON Schema, best effort: the schema's first ``examples`` entry, else its
    ``const``, ``default`` or first ``enum`` value, else one built from ``type`` (an object
    with its required properties, an array of ``minItems`` items, the least number allowed,
    a string of ``minLength`` "x"s, false, null), following the first ``oneOf``/``anyOf``
    alternative and every ``allOf`` part. Patterns and formats are not imitated: give such a
    schema ``examples`` for an answer that fits."""
    if not isinstance(schema, dict):
        return {} if schema is True or schema is None else None
    for key in ("examples", "enum"):
        if isinstance(schema.get(key), list) and schema[key]:
            return cast(JsonValue, schema[key][0])
    for key in ("const", "default"):
        if key in schema:
            return cast(JsonValue, schema[key])
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_of(schema[key][0])
    if isinstance(schema.get("allOf"), list):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged = {
                    **merged,
                    **part,
                    "required": [*merged.get("required", []), *part.get("required", [])],
                }
        return example_of(merged)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema or "required" in schema else None
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            str(name): example_of(properties.get(name, {})) for name in schema.get("required") or ()
        }
    if kind == "array":
        items = schema.get("items", {})
        return [example_of(items) for _ in range(int(schema.get("minItems") or 0))]
    if kind == "string":
        return "x" * int(schema.get("minLength") or 0)
    if kind in ("integer", "number"):
        return _least_number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    return None


def _least_number(schema: dict[str, Any], *, integer: bool) -> int | float:
    """The least number the bounds allow (0 when they allow it)."""
    low, above, high = (schema.get(k) for k in ("minimum", "exclusiveMinimum", "maximum"))
    if isinstance(low, int | float):
        return math.ceil(low) if integer else float(low)
    if isinstance(above, int | float):
        return math.floor(above) + 1 if integer else float(above) + 1
    if isinstance(high, int | float) and high < 0:
        return math.floor(high) if integer else float(high)
    return 0

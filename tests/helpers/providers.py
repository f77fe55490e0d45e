"""A provider for the fetch tests, registered in process (``register``): it serves
``code-host.merged_pull_requests`` and answers as its settings' ``mode`` says (well, hanging,
huge, off its result schema, with an error), reading a token from the environment variable its
``token_env`` names, as a real provider would. Other modes misbehave as a broken plugin could:
``cjk`` answers non-ASCII text, ``surrogate`` a lone surrogate, ``ops-raise``/``ops-junk``
break ``operations()``, ``ready-none``/``ready-int``/``ready-hang``/``ready-raise`` break
``ready()``."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import pytest

from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.providers import registry
from hz.runtime.providers.protocol import (
    HZ721,
    HZ722,
    FetchRequest,
    ProviderError,
    ProviderSettings,
    Readiness,
)

NAME = "fakehost"
#: Set to release every fetch that hangs (a test's teardown sets it).
RELEASE = threading.Event()


class FakeHostSettings(ProviderSettings):
    table = f"providers.{NAME}"

    token_env: str = "FAKEHOST_TOKEN"
    mode: Literal[
        "ok",
        "hang",
        "huge",
        "off-schema",
        "error",
        "crash",
        "cjk",
        "surrogate",
        "ops-raise",
        "ops-junk",
        "ready-none",
        "ready-int",
        "ready-hang",
        "ready-raise",
    ] = "ok"
    timeout_seconds: float = 5.0
    max_bytes: int | None = None


class FakeHostProvider:
    name: ClassVar[str] = NAME
    capabilities: ClassVar[tuple[str, ...]] = ("code-host",)
    settings_model: ClassVar[type[ProviderSettings]] = FakeHostSettings

    def __init__(self, settings: FakeHostSettings) -> None:
        self.settings = settings

    def operations(self) -> Mapping[str, Operation]:
        name = "code-host.merged_pull_requests"
        if self.settings.mode == "ops-raise":
            raise TypeError("boom in operations")
        if self.settings.mode == "ops-junk":
            return {name: {"not": "an operation"}}  # type: ignore[dict-item]
        return {name: CATALOG[name]}

    def ready(self, *, online: bool = False) -> Readiness:
        mode = self.settings.mode
        if mode == "ready-none":
            return None  # type: ignore[return-value]
        if mode == "ready-int":
            return Readiness(True, 12345)  # type: ignore[arg-type]
        if mode == "ready-hang":
            RELEASE.wait(30)
        if mode == "ready-raise":
            raise RuntimeError("boom")
        if not os.environ.get(self.settings.token_env):
            return Readiness(
                False, f"the environment variable {self.settings.token_env} is not set"
            )
        return Readiness(True, f"token from {self.settings.token_env}")

    def fetch(self, request: FetchRequest) -> Any:
        token = os.environ.get(self.settings.token_env)
        if not token:
            raise ProviderError(
                HZ721,
                f"the environment variable {self.settings.token_env} is not set",
                hint=f"export {self.settings.token_env}=…",
            )
        # What a real provider does with its token: an Authorization header, never the value.
        authorization = hashlib.sha256(token.encode()).hexdigest()[:8]
        mode = self.settings.mode
        if mode == "hang":
            RELEASE.wait(30)
            return []
        if mode == "error":
            raise ProviderError(HZ722, "HTTP 404: Not Found (repository acme/app)")
        if mode == "crash":
            raise RuntimeError("boom")
        window = request.window
        assert window is not None
        since, until = window.to_json()["since"], window.to_json()["until"]
        title = "x" * 2_000_000 if mode == "huge" else f"merged {since} to {until}"
        if mode == "cjk":
            title = "日本語" * 1000  # 9,000 bytes of UTF-8; 18,000 as \uXXXX escapes
        if mode == "surrogate":
            title = "bad\udcff"
        number: Any = "one" if mode == "off-schema" else 1
        repository = request.args["repository"]
        return [
            {
                "number": number,
                "title": title,
                "url": f"https://example.test/{repository}/pull/1",
                "merged_at": until,
                "author": f"ada-{authorization[:0]}",
                "labels": [],
            }
        ]


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the fake provider as a core one for this test."""
    monkeypatch.setitem(registry.CORE, NAME, f"{__name__}:FakeHostProvider")


def job_reading(
    inputs: Mapping[str, Any], template: str = "{{ inputs | tojson }}", name: str = "digest"
) -> Any:
    """A sealed job with these inputs (``InputSpec`` values, or their JSON data), as the
    compiler makes one from a contract with ``read``."""
    from hz.runtime.artifacts.models import (
        Budget,
        InputSpec,
        Job,
        OutputSpec,
        SourceRef,
        ToolProfile,
    )

    return Job(
        name=name,
        source=SourceRef(path=f"{name}.yaml", sha256="0" * 64),
        timeout_seconds=30,
        tools=ToolProfile(tools=("Read",)),
        budget=Budget(max_usd=0.5),
        output=OutputSpec(),
        contract="Summarise the data.",
        template=template,
        inputs={
            k: v if isinstance(v, InputSpec) else InputSpec.model_validate(v)
            for k, v in inputs.items()
        },
        hz_version="0.1.0",
    ).sealed()


def merged(window: str = "7d", **spec: Any) -> dict[str, Any]:
    """An input reading the fake host's merged pull requests of acme/app."""
    return {
        "read": {
            "operation": "code-host.merged_pull_requests",
            "args": {"repository": "acme/app"},
            "window": window,
        },
        "schema": {"type": "array"},
        **spec,
    }

"""The provider conformance kit's own checks fail when they should."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.providers.protocol import (
    FetchRequest,
    ProviderError,
    ProviderSettings,
    Readiness,
)
from hz.runtime.testing.providers import PLANTED, Failure, ProviderConformance, Sample

GOOD = Operation("acme.thing", "a thing", {"type": "object"}, {"type": "object"})


class FaultySettings(ProviderSettings):
    table = "providers.faulty"


class Faulty:
    """A provider with one fault, chosen by the class attribute ``fault``."""

    name: ClassVar[str] = "faulty"
    capabilities: ClassVar[tuple[str, ...]] = ("acme", "tracker")
    settings_model: ClassVar[type[ProviderSettings]] = FaultySettings
    fault: ClassVar[str] = ""

    def __init__(self, settings: FaultySettings) -> None:
        self.settings = settings

    def operations(self) -> Mapping[str, Operation]:
        if self.fault == "array-args":
            return {"acme.thing": Operation("acme.thing", "", {"type": "array"}, {})}
        if self.fault == "other-capability":
            return {"other.thing": Operation("other.thing", "", {"type": "object"}, {})}
        if self.fault == "catalog-changed":
            op = CATALOG["tracker.issue"]
            return {op.name: Operation(op.name, op.summary, op.args, {}, op.window)}
        return {GOOD.name: GOOD}

    def ready(self, *, online: bool = False) -> Readiness:
        if self.fault == "ready-raises":
            raise RuntimeError("boom")
        return Readiness(True, "ok")

    def fetch(self, request: FetchRequest) -> Any:
        if self.fault == "leak":
            return {"token": os.environ["GITHUB_TOKEN"]}
        if self.fault == "nan":
            return {"x": float("nan")}
        if self.fault == "schema":
            return ["not", "an", "object"]
        if self.fault == "untyped-error":
            raise KeyError("token")
        if self.fault == "leaking-error":
            raise ProviderError("HZ721", f"bad token {os.environ['GH_TOKEN']}")
        if self.fault == "unregistered-code":
            raise ProviderError("HZ799", "no such code")
        if request.args.get("fail"):
            raise ProviderError("HZ722", "the service said no")
        return {}


def _kit(fault: str) -> ProviderConformance:
    provider = type("Provider", (Faulty,), {"fault": fault})

    class Kit(ProviderConformance):
        provider_class = provider
        samples: ClassVar[dict[str, Sample]] = {"acme.thing": Sample()}

        def failure(self, workdir: Path) -> Failure:
            return Failure({}, "acme.thing", {"fail": True}, code="HZ722")

    return Kit()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    return tmp_path


def test_a_sound_provider_passes(workdir: Path) -> None:
    kit = _kit("")
    kit.test_class_variables()
    kit.test_operations_are_well_formed(workdir)
    kit.test_sample("acme.thing", workdir)
    kit.test_failure_is_a_provider_error(workdir)
    kit.test_ready_never_raises(workdir)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("leak", "the planted GITHUB_TOKEN came out of the provider"),
        ("nan", "the value is not JSON data: Out of range float values are not JSON compliant"),
        ("schema", "the value does not match the result schema"),
    ],
)
def test_a_bad_value_fails(workdir: Path, fault: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        _kit(fault).test_sample("acme.thing", workdir)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("array-args", "acme.thing: its arguments are no object"),
        ("catalog-changed", "tracker.issue differs from the catalog's"),
    ],
)
def test_a_malformed_operation_fails(workdir: Path, fault: str, message: str) -> None:
    kit = _kit(fault)
    kit.samples = {name: Sample() for name in kit.provider_class(None).operations()}
    with pytest.raises(AssertionError, match=message):
        kit.test_operations_are_well_formed(workdir)


def test_an_operation_of_another_capability_fails(workdir: Path) -> None:
    kit = _kit("other-capability")
    kit.samples = {"other.thing": Sample()}
    with pytest.raises(AssertionError, match=r"other.thing: not of \('acme', 'tracker'\)"):
        kit.test_operations_are_well_formed(workdir)


def test_a_missing_sample_fails(workdir: Path) -> None:
    kit = _kit("")
    kit.samples = {}
    with pytest.raises(AssertionError, match="one sample per operation"):
        kit.test_operations_are_well_formed(workdir)


def test_a_failure_that_is_no_provider_error_fails(workdir: Path) -> None:
    with pytest.raises(KeyError):
        _kit("untyped-error").test_failure_is_a_provider_error(workdir)
    with pytest.raises(AssertionError, match="HZ799"):
        _kit("unregistered-code").test_failure_is_a_provider_error(workdir)
    with pytest.raises(AssertionError, match="the planted GH_TOKEN came out of the provider"):
        _kit("leaking-error").test_failure_is_a_provider_error(workdir)


def test_ready_that_raises_fails(workdir: Path) -> None:
    with pytest.raises(RuntimeError):
        _kit("ready-raises").test_ready_never_raises(workdir)


def test_a_settings_model_of_another_table_fails() -> None:
    kit = _kit("")

    class Elsewhere(ProviderSettings):
        table = "providers.other"

    kit.provider_class = type("Provider", (Faulty,), {"settings_model": Elsewhere})
    with pytest.raises(AssertionError):
        kit.test_class_variables()

"""The provider conformance kit: tests any capability provider — built in or a plugin — must
pass.

Subclass ``ProviderConformance`` in your own test suite with your ``provider_class``, the
settings table it is tested with (``settings_table``), whatever the working directory needs
(``prepare``: a repository, files, a fake service), one ``Sample`` per operation (arguments and
window of a fetch that must succeed) and one ``Failure`` (a table and a fetch that must fail:
a missing credential, a service that answers with an error). pytest collects the tests:

- **protocol**: ``name``, ``capabilities`` and ``settings_model`` are class variables, the
  settings model reads the table ``providers.NAME``, and the class makes a provider from its
  validated settings;
- **operations**: each is keyed by its name, a capability's operation (one of
  ``capabilities``, unless the provider serves what its settings declare: ``()``), takes an
  object of arguments, has a valid JSON Schema for its arguments and its result, and is the
  catalog's own when its name is in ``hz.runtime.artifacts.operations.CATALOG``;
- **fetch**: each sample's value is JSON data (what strict JSON reads back unchanged) that
  matches the operation's result schema;
- **failure**: the failing fetch raises ``ProviderError`` with one of ``CODES``;
- **ready**: ``ready()`` and ``ready(online=True)`` return a ``Readiness`` and never raise,
  also for the failing settings;
- **secrets**: values planted in hz's environment (``PLANTED``) appear in no value, message,
  hint or readiness detail.

docs/providers-git-command.md shows a plugin author how;
tests/integration/test_provider_conformance.py runs it for hz's own providers.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.operations import (
    CATALOG,
    OPERATION_PATTERN,
    Operation,
    Window,
    window_length,
)
from hz.runtime.artifacts.strict_json import loads
from hz.runtime.jsonschema import errors, metaschema_errors
from hz.runtime.providers.protocol import (
    CODES,
    FetchRequest,
    ProviderError,
    ProviderSettings,
    Readiness,
)

#: Planted in hz's environment for every test; none of the values may come out of a provider.
PLANTED: dict[str, str] = {
    "HZ_CREDENTIAL_CONFORMANCE": "hz-credential-planted-1",
    "GITHUB_TOKEN": "ghp_planted2",
    "GH_TOKEN": "gh-planted-3",
    "AWS_SECRET_ACCESS_KEY": "aws-planted-4",
    "ACME_API_KEY": "acme-planted-5",
}
#: How long one fetch of the kit may take.
TIMEOUT = 30.0
_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


@dataclass(frozen=True)
class Sample:
    """A fetch that must succeed: its arguments and its window (``"7d"``: the last seven days
    up to now; ``None``: none)."""

    args: Mapping[str, Any] = field(default_factory=dict)
    window: str | None = None


@dataclass(frozen=True)
class Failure:
    """A fetch that must fail: the settings table it runs with, the operation, its arguments,
    and, when it is known, the code it must fail with."""

    table: Mapping[str, Any]
    operation: str
    args: Mapping[str, Any] = field(default_factory=dict)
    window: str | None = None
    code: str | None = None


class ProviderConformance:
    """Subclass it with ``provider_class``, ``samples`` and ``failure``; pytest collects the
    tests."""

    #: The provider class under test (``hz.runtime.providers.protocol.ProviderClass``).
    provider_class: ClassVar[Any]
    #: One sample per operation the provider serves with ``settings_table``, by name.
    samples: ClassVar[Mapping[str, Sample]]

    def settings_table(self, workdir: Path) -> dict[str, Any]:
        """The ``[providers.NAME]`` table the samples run with."""
        return {}

    def prepare(self, workdir: Path) -> None:
        """Make ``workdir`` what the samples read (a repository, files); start what they
        talk to."""

    def failure(self, workdir: Path) -> Failure:
        """A fetch that must fail (a missing credential, a service answering an error)."""
        raise NotImplementedError

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One ``test_sample`` case for each operation."""
        if "operation" in metafunc.fixturenames:
            metafunc.parametrize("operation", sorted(self.samples))

    @pytest.fixture
    def workdir(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        for name, value in PLANTED.items():
            monkeypatch.setenv(name, value)
        work = tmp_path / "work"
        work.mkdir()
        self.prepare(work)
        return work

    def _provider(self, table: Mapping[str, Any]) -> Any:
        return self.provider_class(self.provider_class.settings_model.from_table(table))

    # -- the protocol --------------------------------------------------------------------

    def test_class_variables(self) -> None:
        cls = self.provider_class
        assert isinstance(cls.name, str)
        assert _NAME.fullmatch(cls.name), cls.name
        assert isinstance(cls.capabilities, tuple)
        assert all(isinstance(c, str) and _NAME.fullmatch(c) for c in cls.capabilities)
        assert isinstance(cls.settings_model, type)
        assert issubclass(cls.settings_model, ProviderSettings)
        assert cls.settings_model.table == f"providers.{cls.name}"

    def test_operations_are_well_formed(self, workdir: Path) -> None:
        operations = self._provider(self.settings_table(workdir)).operations()
        assert isinstance(operations, Mapping)
        assert sorted(operations) == sorted(self.samples), "one sample per operation"
        for name, op in operations.items():
            _check_operation(name, op, self.provider_class.capabilities)

    # -- fetching ------------------------------------------------------------------------

    def test_sample(self, operation: str, workdir: Path) -> None:
        provider = self._provider(self.settings_table(workdir))
        op = provider.operations()[operation]
        sample = self.samples[operation]
        assert errors(op.args, dict(sample.args)) == [], "the sample's arguments are invalid"
        assert sample.window is None or op.window, f"{operation} takes no window"
        value = provider.fetch(_request(op, sample.args, sample.window, workdir))
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise AssertionError(f"the value is not JSON data: {e}") from e
        assert loads(text) == value, "the value is not JSON data"
        problems = [e.message for e in errors(op.result, value)]
        assert problems == [], f"the value does not match the result schema: {problems}"
        _check_no_secret(text)

    def test_failure_is_a_provider_error(self, workdir: Path) -> None:
        failure = self.failure(workdir)
        provider = self._provider(failure.table)
        op = provider.operations()[failure.operation]
        with pytest.raises(ProviderError) as caught:
            provider.fetch(_request(op, failure.args, failure.window, workdir))
        _check_no_secret(f"{caught.value} {caught.value.hint}")
        assert caught.value.code in CODES, caught.value.code
        if failure.code is not None:
            assert caught.value.code == failure.code, str(caught.value)

    def test_ready_never_raises(self, workdir: Path) -> None:
        for table in (self.settings_table(workdir), self.failure(workdir).table):
            provider = self._provider(table)
            for online in (False, True):
                readiness = provider.ready(online=online)
                assert isinstance(readiness, Readiness)
                assert isinstance(readiness.ok, bool)
                assert isinstance(readiness.detail, str)
                _check_no_secret(readiness.detail)


def _check_operation(name: str, op: Operation, capabilities: tuple[str, ...]) -> None:
    assert isinstance(op, Operation), name
    assert op.name == name
    assert re.match(OPERATION_PATTERN, name), f"{name!r} is no operation name"
    if capabilities:
        assert op.capability in capabilities, f"{name}: not of {capabilities}"
    assert op.args.get("type") == "object", f"{name}: its arguments are no object"
    assert metaschema_errors(op.args) == [], f"{name}: the argument schema is invalid"
    assert metaschema_errors(op.result) == [], f"{name}: the result schema is invalid"
    if name in CATALOG:
        assert op == CATALOG[name], f"{name} differs from the catalog's"


def _request(
    op: Operation, args: Mapping[str, Any], window: str | None, workdir: Path
) -> FetchRequest:
    resolved = None
    if window is not None:
        length = window_length(window)
        assert length is not None, "a sample's window is relative ('7d')"
        now = datetime.now(UTC)
        resolved = Window(now - length, now)
    return FetchRequest(op, dict(args), resolved, workdir, time.monotonic() + TIMEOUT)


def _check_no_secret(text: str) -> None:
    for name, value in PLANTED.items():
        assert value not in text, f"the planted {name} came out of the provider"

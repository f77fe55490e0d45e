"""The provider registry: core providers by name, plugins through the ``hz.providers`` entry
points, and what validate may assume of the core ones without making them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.providers import registry
from hz.runtime.providers.binding import Bindings


def test_catalog_only_providers_serve_catalog_operations_alone(tmp_path: Path) -> None:
    # hz validate relies on it: a configuration binding only these declares no operation of
    # its own, so they are not made to find out (hz.cli.fetching.read_operations).
    settings = {"github": {"token_env": "GITHUB_TOKEN"}}
    bindings = Bindings({}, settings)
    for name in sorted(registry.CATALOG_ONLY):
        offered = bindings.bound(name).provider.operations()
        assert offered, name
        assert {op: CATALOG.get(op) for op in offered} == dict(offered), name
    assert set(registry.CORE) > registry.CATALOG_ONLY


def test_broken_core_module_is_a_config_error_with_a_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(registry.CORE, "gone", "hz.runtime.providers.no_such_provider:Gone")
    with pytest.raises(ConfigError) as caught:
        registry.resolve("gone")
    assert caught.value.message == (
        "core provider 'gone' cannot be loaded: ModuleNotFoundError: "
        "No module named 'hz.runtime.providers.no_such_provider'"
    )
    assert caught.value.hint == (
        "bind the capability to another provider, or install the extra it needs"
    )

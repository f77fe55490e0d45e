"""The runner registry: core runners by name, plugins through the hz.runners entry points."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.runners import registry
from hz.runtime.runners.echo import EchoRunner


def _install_plugin(root: Path, monkeypatch: pytest.MonkeyPatch, entry: str, module: str) -> None:
    """A fake installed distribution: a module and a dist-info with an entry point on sys.path."""
    (root / "hz_fake_plugin.py").write_text(module)
    info = root / "hz_fake_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hz-fake-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[hz.runners]\n{entry}\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "hz_fake_plugin", raising=False)
    registry._plugins.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_plugin_scan() -> Iterator[None]:
    registry._plugins.cache_clear()
    yield
    registry._plugins.cache_clear()


PLUGIN = """
from hz.runtime.runners.echo import EchoRunner

class Shout(EchoRunner):
    name = "shout"
"""


def test_core_runner_resolves() -> None:
    assert registry.resolve("echo") is EchoRunner


def test_available_lists_core_runners() -> None:
    assert [r for r in registry.available() if r[1] == "core"] == [
        ("claude-code", "core"),
        ("command", "core"),
        ("echo", "core"),
    ]


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        registry.resolve("ecoh")
    known = ", ".join(name for name, _ in registry.available())
    assert (caught.value.message, caught.value.hint) == (
        "unknown runner 'ecoh' (did you mean 'echo'?)",
        f"known runners: {known}",
    )


def test_plugin_through_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, monkeypatch, "shout = hz_fake_plugin:Shout", PLUGIN)
    assert ("shout", "hz-fake-plugin") in registry.available()
    assert registry.resolve("shout").name == "shout"


def test_plugin_that_fails_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, monkeypatch, "shout = hz_fake_plugin:Shout", "import no_such_mod\n")
    with pytest.raises(ConfigError) as caught:
        registry.resolve("shout")
    assert caught.value.message == (
        "runner plugin 'shout' from hz-fake-plugin failed to load (hz_fake_plugin:Shout): "
        "ModuleNotFoundError: No module named 'no_such_mod'"
    )


def test_plugin_that_is_not_a_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(
        tmp_path, monkeypatch, "shout = hz_fake_plugin:Shout", "class Shout:\n    name = 'x'\n"
    )
    with pytest.raises(ConfigError) as caught:
        registry.resolve("shout")
    assert caught.value.message == (
        "runner plugin 'shout' from hz-fake-plugin is not a runner class: it has no "
        "settings_model, capabilities, doctor"
    )


def test_a_plugin_cannot_replace_a_core_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_plugin(tmp_path, monkeypatch, "echo = hz_fake_plugin:Shout", PLUGIN)
    assert registry.resolve("echo") is EchoRunner
    assert [r for r in registry.available() if r[0] == "echo"] == [("echo", "core")]


def test_broken_core_module_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.CORE, "gone", "hz.runtime.runners.no_such_runner:Gone")
    with pytest.raises(ConfigError) as caught:
        registry.resolve("gone")
    assert caught.value.message == (
        "core runner 'gone' cannot be loaded: ModuleNotFoundError: "
        "No module named 'hz.runtime.runners.no_such_runner'"
    )
    assert caught.value.hint is None


def test_plugin_settings_keys_are_known_to_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = (
        "from hz.runtime.runners.echo import EchoRunner, EchoSettings\n"
        "class ShoutSettings(EchoSettings):\n"
        "    shout_volume: int = 1\n"
        "class Shout(EchoRunner):\n"
        "    name = 'shout'\n"
        "    settings_model = ShoutSettings\n"
    )
    _install_plugin(tmp_path, monkeypatch, "shout = hz_fake_plugin:Shout", module)
    keys, _ = registry.all_settings_keys()
    assert {"shout_volume", "echo_status"} <= keys


MALFORMED = """
from hz.runtime.runners.echo import EchoRunner

class Shout(EchoRunner):
    name = "shout"
    {attribute} = {value}
"""


NOT_SETTINGS = "settings_model is not a hz.runtime.runners.settings.RunnerSettings subclass"


@pytest.mark.parametrize(
    ("attribute", "value", "problem"),
    [
        ("settings_model", "None", NOT_SETTINGS),
        ("settings_model", "dict", NOT_SETTINGS),
        ("capabilities", "None", "capabilities and doctor must be callable"),
        ("doctor", "1", "capabilities and doctor must be callable"),
    ],
)
def test_plugin_with_malformed_declarations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attribute: str, value: str, problem: str
) -> None:
    module = MALFORMED.format(attribute=attribute, value=value)
    _install_plugin(tmp_path, monkeypatch, "shout = hz_fake_plugin:Shout", module)
    with pytest.raises(ConfigError) as caught:
        registry.resolve("shout")
    assert caught.value.message == (
        f"runner plugin 'shout' from hz-fake-plugin is not a runner class: {problem}"
    )
    # ... and it breaks only the runs that bind it: the other runners' keys are still known.
    keys, broken = registry.all_settings_keys()
    assert broken == ("shout",)
    assert "command" in keys


def test_declared_keys_are_the_shipped_runners_settings_keys() -> None:
    """A configuration file's runner keys are checked against ``DECLARED_KEYS`` without
    importing the runners hz ships: each must be its class's ``settings_model.keys()``."""
    import importlib
    from importlib.metadata import entry_points

    from hz.runtime.artifacts.distribution import DISTRIBUTION

    points = entry_points(group=registry.GROUP)
    own = {p.value for p in points if p.dist and p.dist.name == DISTRIBUTION}
    assert set(registry.DECLARED_KEYS) == set(registry.CORE.values()) | own
    for target, declared in registry.DECLARED_KEYS.items():
        module, _, attr = target.partition(":")
        runner = getattr(importlib.import_module(module), attr)
        assert declared == runner.settings_model.keys(), target


def test_default_tools_are_what_the_shipped_runners_accept_unconfigured() -> None:
    """``hz validate`` reads ``DEFAULT_TOOLS`` instead of importing the runners hz ships: it
    must give what each class's ``accepted_tools`` gives with an empty ``[system.runner]``
    table (settings from the table, else the model's defaults, as ``tool_policy`` judges)."""
    import importlib
    from importlib.metadata import entry_points

    from hz.runtime.artifacts.distribution import DISTRIBUTION
    from hz.runtime.artifacts.errors import HzError

    points = entry_points(group=registry.GROUP)
    own = {p.value for p in points if p.dist and p.dist.name == DISTRIBUTION}
    assert set(registry.DEFAULT_TOOLS) == set(registry.CORE.values()) | own
    for target, declared in registry.DEFAULT_TOOLS.items():
        module, _, attr = target.partition(":")
        runner = getattr(importlib.import_module(module), attr)
        accepted = getattr(runner, "accepted_tools", None)
        if accepted is None:
            assert declared is None, target
            continue
        model = runner.settings_model
        try:
            settings = model.from_table({})
        except (HzError, ValueError):
            settings = model.model_construct()
        assert declared == tuple(accepted(settings)), target

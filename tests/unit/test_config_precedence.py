"""Precedence is data, tested pair by pair: each layer beats each lower layer for one key."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hz.runtime.config.layers import load_config, sources
from hz.runtime.config.show import toml_value

FILE_LAYERS = ("site", "user", "project", "HZ_CONFIG")
ORDER = ("default", "site", "user", "project", "HZ_CONFIG", "environment")


def _set(layer: str, table: str, key: str, value: object, root: Path, env: dict[str, str]) -> None:
    text = f"[{table}]\n{key} = {toml_value(value)}\n"
    if layer == "site":
        (root / "site.toml").write_text(text)
        env["HZ_SITE_CONFIG"] = str(root / "site.toml")
    elif layer == "user":
        (root / "xdg" / "hz").mkdir(parents=True)
        (root / "xdg" / "hz" / "config.toml").write_text(text)
        env["XDG_CONFIG_HOME"] = str(root / "xdg")
    elif layer == "project":
        (root / "project" / "hz.toml").write_text(text)
    elif layer == "HZ_CONFIG":
        (root / "explicit.toml").write_text(text)
        env["HZ_CONFIG"] = str(root / "explicit.toml")
    elif layer == "environment":
        env[f"HZ_{table.upper().replace('.', '_')}__{key.upper()}"] = str(value)


def _load(tmp_path: Path, setters: list[tuple[str, object]], table: str, key: str):
    (tmp_path / "project").mkdir()
    env = {"HZ_SITE_CONFIG": str(tmp_path / "no-site.toml")}
    for layer, value in setters:
        if layer != "default":
            _set(layer, table, key, value, tmp_path, env)
    return load_config(environ=env, cwd=tmp_path / "project")


def test_the_order_is_data() -> None:
    assert tuple(s.layer for s in sources({}, None)) == ORDER


@pytest.mark.parametrize(("low", "high"), list(itertools.combinations(ORDER, 2)))
def test_authoring_key_each_layer_beats_each_lower(tmp_path: Path, low: str, high: str) -> None:
    # The project file may only lower the ceiling, so it wins with the smaller value.
    low_value, high_value = (9, 7) if high == "project" else (7, 9)
    config = _load(tmp_path, [(low, low_value), (high, high_value)], "authoring", "max_usd_ceiling")
    setting = next(s for s in config.settings if s.key == "max_usd_ceiling")
    assert (setting.value, setting.origin.layer) == (high_value, high)


@pytest.mark.parametrize(("low", "low_value"), [("default", 100), ("site", 7), ("user", 7)])
def test_a_project_file_cannot_raise_the_ceiling(tmp_path: Path, low: str, low_value: int) -> None:
    config = _load(tmp_path, [(low, low_value), ("project", 5000)], "authoring", "max_usd_ceiling")
    setting = next(s for s in config.settings if s.key == "max_usd_ceiling")
    assert (setting.value, setting.origin.layer) == (low_value, low)


EXECUTION_ORDER = tuple(layer for layer in ORDER if layer != "project")


@pytest.mark.parametrize(("low", "high"), list(itertools.combinations(EXECUTION_ORDER, 2)))
def test_runner_binding_each_layer_beats_each_lower(tmp_path: Path, low: str, high: str) -> None:
    value = {"default": "claude-code"}.get(low, "command")
    config = _load(tmp_path, [(low, value), (high, "echo")], "capabilities", "agent_runner")
    setting = next(s for s in config.settings if s.key == "agent_runner")
    assert (setting.value, setting.origin.layer) == ("echo", high)


@pytest.mark.parametrize("layer", ["site", "user", "HZ_CONFIG", "environment"])
def test_a_lower_layer_shows_through_when_higher_ones_are_silent(
    tmp_path: Path, layer: str
) -> None:
    config = _load(tmp_path, [(layer, "m-1")], "system.runner", "model")
    setting = next(s for s in config.settings if s.key == "model")
    assert (setting.value, setting.origin.layer) == ("m-1", layer)

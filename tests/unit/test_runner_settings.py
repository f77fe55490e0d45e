"""Settings models (each runner's, each configuration table's): the keys each accepts, the
docs tables generated from them, and pydantic's errors in hz's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.config.file import known_keys
from hz.runtime.config.publish import PublishSettings
from hz.runtime.config.tables import (
    MODELS,
    AuthoringSettings,
    BudgetSettings,
    CapabilitiesSettings,
    PolicySettings,
    QueueSettings,
    SchedulesSettings,
    SystemSettings,
    value_problem,
)
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.codex_app_server.settings import CodexAppServerSettings
from hz.runtime.runners.command.settings import CommandSettings
from hz.runtime.runners.echo import EchoSettings
from hz.runtime.runners.settings import SharedSettings
from hz.runtime.settings.keys import DEFAULTS, RUNNER, TABLES
from hz.runtime.settings.model import TableSettings

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize(
    ("doc", "model"),
    [
        ("runners/claude-code.md", ClaudeSettings),
        ("runners/codex.md", CodexSettings),
        ("runners/codex-app-server.md", CodexAppServerSettings),
        ("runners/command.md", CommandSettings),
        ("runners.md", EchoSettings),
        ("configuration.md", SharedSettings),
        ("configuration.md", CapabilitiesSettings),
        ("configuration.md", AuthoringSettings),
        ("configuration.md", PolicySettings),
        ("configuration.md", SystemSettings),
        ("configuration.md", BudgetSettings),
        ("configuration.md", QueueSettings),
        ("configuration.md", SchedulesSettings),
        ("configuration.md", PublishSettings),
    ],
)
def test_docs_table_is_generated_from_the_model(doc: str, model: type[TableSettings]) -> None:
    assert model.docs_table() in (DOCS / doc).read_text()


def test_every_table_has_a_model_and_accepts_its_keys() -> None:
    assert sorted([*MODELS, RUNNER]) == sorted(TABLES)
    for table, model in MODELS.items():
        assert known_keys(table) == (model.keys(), ())
    runner_keys, broken = known_keys(RUNNER)
    assert (SharedSettings.keys() <= runner_keys, broken) == (True, ())


def test_the_built_in_layer_is_the_models_defaults() -> None:
    for (table, key), value in DEFAULTS.items():
        assert MODELS[table].defaults()[key] == value


def test_max_turns_has_one_wording_wherever_it_is_declared() -> None:
    problems = set()
    for model in (SharedSettings, ClaudeSettings, CodexSettings):
        with pytest.raises(ConfigError) as caught:
            model.from_table({"max_turns": 0})
        problems.add(caught.value.message)
    assert problems == {"[system.runner] max_turns must be a positive integer, got 0"}


@pytest.mark.parametrize("value", ["", 3])
def test_model_has_one_wording_wherever_it_is_declared(value: object) -> None:
    problems = set()
    models = (SharedSettings, ClaudeSettings, CodexSettings, CodexAppServerSettings, EchoSettings)
    for model in models:
        with pytest.raises(ConfigError) as caught:
            model.from_table({"model": value})
        problems.add(caught.value.message)
    with pytest.raises(ConfigError) as caught:
        CommandSettings.from_table({"command": ["agent", "{contract_file}"], "model": value})
    problems.add(caught.value.message)
    assert problems == {f"[system.runner] model must be a non-empty string, got {value!r}"}


def test_only_claude_code_refuses_a_model_of_white_space() -> None:
    with pytest.raises(ConfigError) as caught:
        ClaudeSettings.from_table({"model": "  "})
    assert caught.value.message == "[system.runner] model must be a non-empty string, got '  '"
    assert CodexSettings.from_table({"model": "  "}).model == "  "
    assert SharedSettings.from_table({"model": "  "}).model == "  "


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("model", ""),
        ("max_turns", 0),
        ("require_enforced_budget", 1),
        ("receipt_dir", 3),
        ("receipt_dir", "a\x00b"),
    ],
)
def test_shared_keys_are_worded_as_the_configuration_words_them(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        SharedSettings.from_table({key: value})
    assert caught.value.message == value_problem(RUNNER, key, value)


def test_other_keys_in_the_table_are_left_to_their_runners() -> None:
    assert EchoSettings.from_table({"command": 1, "echo_status": "failed"}).status == "failed"


def test_settings_are_frozen() -> None:
    settings = EchoSettings()
    with pytest.raises(ValueError, match="frozen"):
        settings.status = "failed"  # type: ignore[misc]

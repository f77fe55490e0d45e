"""docs/providers-git-command.md shows the settings tables the models generate."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from hz.runtime.providers.command import (
    CommandProvider,
    CommandProviderSettings,
    OperationSettings,
)
from hz.runtime.providers.git import GitSettings
from hz.runtime.settings.model import TableSettings

DOC = Path(__file__).resolve().parents[2] / "docs" / "providers-git-command.md"


@pytest.mark.parametrize("model", [GitSettings, OperationSettings])
def test_the_settings_tables_are_the_models(model: type[TableSettings]) -> None:
    assert model.docs_table() in DOC.read_text(encoding="utf-8")


def test_the_command_example_is_accepted() -> None:
    [block] = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    config = tomllib.loads(block)
    assert config["capabilities"] == {"tracker": "command"}
    table = config["providers"]["command"]
    provider = CommandProvider(CommandProviderSettings.from_table(table))
    assert sorted(provider.operations()) == ["acme.oncall", "tracker.issues_updated"]
    assert provider.operations()["acme.oncall"].window is True

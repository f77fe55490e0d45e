"""docs/providers.md holds the operations section generated from the catalog, and the files
provider's settings table generated from its model."""

from __future__ import annotations

from pathlib import Path

from hz.runtime.providers.docs import operations_markdown
from hz.runtime.providers.files import FilesSettings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "providers.md"


def test_the_operations_section_is_up_to_date() -> None:
    assert operations_markdown() in PAGE.read_text(), (
        "docs/providers.md is stale: replace its operations section with the output of "
        "`.venv/bin/python -m hz.runtime.providers.docs`"
    )


def test_the_files_settings_table_is_generated_from_the_model() -> None:
    assert FilesSettings.docs_table() in PAGE.read_text()

"""Fixtures of the in-process CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.contracts import GREET, LISTING


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "greet.yaml").write_text(GREET)
    (tmp_path / "listing.yaml").write_text(LISTING)
    return tmp_path

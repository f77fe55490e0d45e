"""Fixtures of the in-process CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.helpers.contracts import GREET, LISTING
from tests.helpers.ledger_cli import echo_space


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "greet.yaml").write_text(GREET)
    (tmp_path / "listing.yaml").write_text(LISTING)
    return tmp_path


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    """``hz`` in ``tmp_path`` with ``greet.yaml``, the echo runner bound in an operator file and
    the state directory ``tmp_path/s`` (a module's own ``hz`` fixture overrides it)."""
    return echo_space(cli, tmp_path)

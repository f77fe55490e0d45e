"""The operations table of docs/contract-reference.md says what the catalog holds."""

from __future__ import annotations

import re
from pathlib import Path

from hz.runtime.artifacts.operations import CATALOG

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `([a-z-]+\.[a-z_]+)` \| (yes|no) \| (.*?) \| (.*?) \|$", re.M)


def test_the_table_lists_every_operation_as_the_catalog_declares_it() -> None:
    text = (REPO / "docs" / "contract-reference.md").read_text()
    rows = {name: (window, args, summary) for name, window, args, summary in ROW.findall(text)}
    assert sorted(rows) == sorted(CATALOG)
    for name, op in CATALOG.items():
        window, args, summary = rows[name]
        required = set(op.args.get("required", ()))
        written = ", ".join(
            f"**`{arg}`**" if arg in required else f"`{arg}`" for arg in op.args["properties"]
        )
        assert (window, args, summary) == ("yes" if op.window else "no", written, op.summary)

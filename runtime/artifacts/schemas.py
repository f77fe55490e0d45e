"""JSON Schemas of the artifact formats (job, packet, receipt, result), from the runtime models,
and of the run ledger's JSON documents (runs: ``hz runs``, ``hz submit``, ``hz worker`` with
``--format json``), written by hand as package data beside this module.

The copies in ``schemas/`` are for editors and other tools; they are regenerated with
``python -m hz.runtime.artifacts.schemas --write`` and a test fails when they differ from what
this module produces (``--check`` does the same comparison from the command line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from hz.runtime.artifacts.canonical import canonical_json
from hz.runtime.artifacts.models import Job, Packet
from hz.runtime.artifacts.receipt import Receipt
from hz.runtime.artifacts.result import AgentResult

Kind = Literal["job", "packet", "receipt", "result", "runs"]
KINDS: tuple[Kind, ...] = ("job", "packet", "receipt", "result", "runs")
#: Schemas written by hand, as package data: kind -> (package, resource).
_WRITTEN = {"runs": ("hz.runtime.artifacts", "runs.schema.json")}

_MODELS: dict[str, type[BaseModel]] = {
    "job": Job,
    "packet": Packet,
    "receipt": Receipt,
    "result": AgentResult,
}
_TITLES = {
    "job": "hz job: one compiled workflow contract",
    "packet": "hz packet: a job rendered with its input values",
    "receipt": "hz receipt: the record of one run, chained to the receipt before it",
    "result": "hz result: how one agent session ended",
}
#: Where the checked-in copies live in a source checkout.
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


def schema_data(kind: str) -> dict[str, Any]:
    if kind in _WRITTEN:
        import json
        from importlib import resources

        package, name = _WRITTEN[kind]
        data: dict[str, Any] = json.loads(resources.files(package).joinpath(name).read_text())
        return data
    model = _MODELS.get(kind)
    if model is None:
        raise ValueError(f"unknown schema kind {kind!r} (expected one of {', '.join(KINDS)})")
    # Jobs, packets and receipts are read back by hz, so their schema is what hz accepts; a
    # result is only written, so its schema is what hz writes (including computed fields).
    mode: Literal["validation", "serialization"] = (
        "serialization" if kind == "result" else "validation"
    )
    body = model.model_json_schema(by_alias=True, mode=mode)
    body["title"] = _TITLES[kind]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **body,
    }


def schema_text(kind: str) -> str:
    """The canonical JSON text of the schema of ``kind`` (job, packet, receipt, result, runs)."""
    return canonical_json(schema_data(kind))


def schema_path(kind: str, directory: Path = SCHEMA_DIR) -> Path:
    return directory / f"{kind}.schema.json"


def stale_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    """The checked-in schema files that are missing or differ from the models."""
    stale = []
    for kind in KINDS:
        path = schema_path(kind, directory)
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != schema_text(kind):
            stale.append(path)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hz.runtime.artifacts.schemas", description=__doc__
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate the schema files")
    group.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    parser.add_argument("--dir", type=Path, default=SCHEMA_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stale = stale_schemas(args.dir)
    if args.check:
        for path in stale:
            print(
                f"{path}: stale; run python -m hz.runtime.artifacts.schemas --write",
                file=sys.stderr,
            )
        return 1 if stale else 0
    args.dir.mkdir(parents=True, exist_ok=True)
    for path in stale:
        kind = path.name.removesuffix(".schema.json")
        path.write_text(schema_text(kind), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The app-server protocol of the pinned CLI (0.171.0), as the binary itself describes it.

``codex_app_server_protocol.schemas.json`` is the bundle ``codex app-server
generate-json-schema --out DIR`` writes; ``MANIFEST.sha256`` lists the SHA-256 of every file it
writes (``sha256sum`` format, sorted by path). A real-CLI test regenerates both from the
installed binary and fails on any difference, and ``hz doctor`` does the same check: a CLI
whose protocol drifted is named before a run relies on it.

Regenerate after moving the pin::

    codex app-server generate-json-schema --out /tmp/p
    cp /tmp/p/codex_app_server_protocol.schemas.json runtime/runners/codex_app_server/protocol/
    (cd /tmp/p && find . -type f | sed 's|^\\./||' | LC_ALL=C sort | xargs sha256sum) \\
        > runtime/runners/codex_app_server/protocol/MANIFEST.sha256
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib.resources import files
from pathlib import Path

BUNDLE = "codex_app_server_protocol.schemas.json"
MANIFEST = "MANIFEST.sha256"
#: The CLI version this protocol was generated from.
VERSION = "0.171.0"


def pinned_text(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def manifest_of(directory: Path) -> str:
    """``MANIFEST.sha256`` for a directory ``generate-json-schema`` wrote."""
    paths = sorted(
        (p for p in directory.rglob("*") if p.is_file()),
        key=lambda p: p.relative_to(directory).as_posix().encode(),
    )
    return "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(directory).as_posix()}\n"
        for p in paths
    )


def _methods(definition: str) -> frozenset[str]:
    bundle = json.loads(pinned_text(BUNDLE))
    found: set[str] = set()
    for variant in bundle["definitions"][definition]["oneOf"]:
        found.update(variant["properties"]["method"]["enum"])
    return frozenset(found)


@functools.cache
def notification_methods() -> frozenset[str]:
    """Every notification the pinned server may send."""
    return _methods("ServerNotification")


@functools.cache
def server_request_methods() -> frozenset[str]:
    """Every request the pinned server may send to its client."""
    return _methods("ServerRequest")

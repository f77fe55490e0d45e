"""hz's distribution name, and the command that adds one of its extras to the environment hz
runs in.

The command is ``hz`` and the import package is ``hz``, but the distribution is
``hz-contracts``: the name ``hz`` on PyPI belongs to an unrelated project, and installing that
name (with the extra or without) puts that project's package ``hz`` over hz's own files
(docs/decisions/0011-distribution-name.md).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

#: The name pip, pipx and uv know hz by (``pyproject.toml``'s ``[project] name``).
DISTRIBUTION = "hz-contracts"


def extra_command(extra: str, *, prefix: str | None = None, python: str | None = None) -> str:
    """The command that installs ``extra`` into the environment at ``prefix`` whose interpreter
    is ``python`` (default: the one running): ``pipx inject`` for a pipx application, ``uv pip``
    for a uv tool (neither environment need have pip), else that interpreter's own pip. Each
    keeps the installed hz and adds only the extra's packages."""
    spec = shlex.quote(f"{DISTRIBUTION}[{extra}]")
    root = Path(prefix if prefix is not None else sys.prefix)
    interpreter = shlex.quote(python or sys.executable)
    if (root / "pipx_metadata.json").is_file():
        # pipx names the environment after the distribution (plus any --suffix): the folder.
        return f"pipx inject {shlex.quote(root.name)} {spec}"
    if (root / "uv-receipt.toml").is_file():
        return f"uv pip install --python {interpreter} {spec}"
    return f"{interpreter} -m pip install {spec}"

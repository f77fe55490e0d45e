"""What the loader found wrong with a YAML file, as data: a kind, a position and the facts.

The loader reads contracts and inputs files alike and words nothing: a contract's problem is
worded by ``hz.compiler.load.wording`` (``validate``), an inputs file's by
``hz.compiler.inputs.sources``, each for its own reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal[
    "unreadable",  # reason
    "too_large",  # limit (bytes)
    "not_utf8",  # byte, utf16
    "binary",  # a NUL byte
    "control_character",  # char
    "syntax",  # problem, context, context_line, context_column, tab
    "anchor",  # anchor
    "alias",  # anchor
    "tag",  # tag
    "duplicate_key",  # key, first_line, first_column
    "key_not_string",  # raw (None for a mapping or sequence as key), found
    "not_a_mapping",  # found
    "empty",
    "documents",
    "too_deep",  # limit
    "too_many_nodes",  # limit
]


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """One problem at ``line``:``column`` (1-based; 0 for the whole file) of ``file``."""

    kind: Kind
    file: str
    line: int = 0
    column: int = 0
    data: Mapping[str, Any] = field(default_factory=dict)

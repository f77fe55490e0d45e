"""hz: a declarative workflow-contract compiler and bounded agent runner.

``hz.compiler`` (the folder ``compiler/``) loads, validates, compiles and renders contracts;
``hz.runtime`` (the folder ``runtime/``) runs packets; ``hz.cli`` is the command line, the only
code that imports both. The version below is the one place it is written (``pyproject.toml``
reads it).
"""

from __future__ import annotations

__version__ = "0.1.0"

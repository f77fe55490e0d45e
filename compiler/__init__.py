"""hz compiler: load, validate, compile and render workflow contracts."""

from __future__ import annotations

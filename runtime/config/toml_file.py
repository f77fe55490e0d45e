"""Reading one TOML configuration file into located ``(table, key) -> value`` entries.

``tomllib`` keeps no positions, so a key's line is found by scanning the text: the line that
assigns the key inside its table's section (or as a dotted key), else the file alone.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.regular_file import read_regular_text
from hz.runtime.settings.keys import TABLES, is_table

#: A configuration file is a few lines; ``HZ_CONFIG=/dev/zero`` must not fill the memory.
MAX_CONFIG_BYTES = 1024 * 1024
_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")
#: What a TOML integer may be (64 bits), and what is said of one far past it.
TOO_MANY_DIGITS = "an integer of thousands of digits (TOML integers have 64 bits)"
NUMBER_HINT = "no setting takes a number that large"
_LONG_NUMBER = re.compile(r"[0-9_]{1000,}")


def _long_number(text: str) -> tuple[int, int]:
    match = _LONG_NUMBER.search(text)
    if match is None:
        return 0, 0
    before = text[: match.start()]
    return before.count("\n") + 1, match.start() - (before.rfind("\n") + 1) + 1


@dataclass(frozen=True, slots=True)
class TomlEntry:
    """One leaf setting: ``table`` is the dotted table path (``""`` at top level)."""

    table: str
    key: str
    value: Any
    line: int = 0
    column: int = 0


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """The parsed document and its text; ``FileNotFoundError`` passes through."""
    try:
        text = read_regular_text(path, limit=MAX_CONFIG_BYTES)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else e
        raise ConfigError(f"{path}: cannot read: {why}") from e
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        match = _POSITION.search(message)
        where = f"{path}:{match[1]}:{match[2]}" if match else str(path)
        detail = _POSITION.sub("", message).strip()
        raise ConfigError(f"{where}: invalid TOML: {detail}") from e
    except ValueError as e:  # an integer past Python's int-to-str limit (``int()`` refuses)
        line, column = _long_number(text)
        where = f"{path}:{line}:{column}" if line else str(path)
        raise ConfigError(f"{where}: invalid TOML: {TOO_MANY_DIGITS}", hint=NUMBER_HINT) from e


def flatten(data: dict[str, Any], text: str) -> list[TomlEntry]:
    """Every leaf under the known tables (``TABLES`` and ``[providers.NAME]``) as one entry;
    anything else keeps the path it had.

    A known table's values are kept whole (lists, inline tables); outside the known tables,
    nested tables are descended so an unknown one is reported by its full path.
    """
    entries: list[TomlEntry] = []

    def walk(prefix: str, value: dict[str, Any]) -> None:
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            if is_table(path) and isinstance(item, dict):
                for leaf, leaf_value in item.items():
                    if isinstance(leaf_value, dict) and _has_subtables(path):
                        walk(path, {leaf: leaf_value})  # [system.runner] inside [system]
                    else:
                        entries.append(_located(path, leaf, leaf_value, text))
            elif isinstance(item, dict) and item:
                walk(path, item)
            else:
                entries.append(_located(prefix, key, item, text))

    walk("", data)
    return entries


def _has_subtables(table: str) -> bool:
    return any(t.startswith(f"{table}.") for t in TABLES)


def _located(table: str, key: str, value: Any, text: str) -> TomlEntry:
    line, column = locate(text, table, key)
    return TomlEntry(table, key, value, line, column)


def locate(text: str, table: str, key: str) -> tuple[int, int]:
    """1-based line and column of ``key`` in ``table``, or (0, 0) when not found by scanning."""
    lines = text.splitlines()
    key_pattern = rf"""["']?{re.escape(key)}["']?\s*="""
    dotted = rf"""^\s*{re.escape(table)}\s*\.\s*{key_pattern}""" if table else None
    section = ""
    for number, line in enumerate(lines, start=1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            section = header[1].replace(" ", "")
            named = f"{table}.{key}".lstrip(".")
            if section == named or section.startswith(f"{named}."):  # [publish.webhooks.NAME]
                return number, line.index(key) + 1
            continue
        if section == table and re.match(rf"^\s*{key_pattern}", line):
            return number, line.index(key) + 1
        if dotted and section == "" and re.match(dotted, line):
            return number, line.index(table.split(".")[0]) + 1
    return 0, 0

"""``hz config show``: the effective configuration, each value with the layer it came from."""

from __future__ import annotations

import json
from typing import Any

from hz.runtime.config.keys import TABLES
from hz.runtime.config.layers import UNSET, Config
from hz.runtime.printable import printable

#: Assignments up to this long align their comments; longer ones do not set the column.
_ALIGN_UP_TO = 48


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


def show_text(config: Config) -> str:
    """TOML an operator could copy, with the origin of every value as a comment."""
    lines = ["# sources, lowest precedence first:"]
    for state in config.layers:
        detail = {"loaded": state.where or "built in", "missing": f"{state.where} (not present)"}
        unset = UNSET.get(state.layer, "not set")
        lines.append(f"#   {state.layer:<12} {detail.get(state.state, unset)}")
    for table in TABLES:
        settings = [s for s in config.settings if s.table == table]
        if not settings:
            continue
        lines += ["", f"[{table}]"]
        lengths = [len(f"{s.key} = {toml_value(s.value)}") for s in settings]
        # Comments line up after the short assignments; a long one (a command line) keeps
        # its comment two spaces after it instead of pushing every other comment out.
        width = max([n for n in lengths if n <= _ALIGN_UP_TO] or [0])
        for s in settings:
            assignment = f"{s.key} = {toml_value(s.value)}"
            lines.append(f"{assignment:<{width}}  # {s.origin}")
    # Paths (HZ_CONFIG, the project's hz.toml), keys and characters JSON leaves as they are
    # (U+2028, bidirectional overrides) come from outside: one line each, escaped.
    return "\n".join(printable(line) for line in lines) + "\n"


def show_json(config: Config) -> dict[str, Any]:
    return {
        "settings": [
            {
                "table": s.table,
                "key": s.key,
                "value": s.value,
                "layer": s.origin.layer,
                "where": s.origin.where or None,
            }
            for s in config.settings
        ],
        "sources": [
            {"layer": st.layer, "where": st.where or None, "state": st.state}
            for st in config.layers
        ],
    }

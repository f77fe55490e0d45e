"""A scripted stand-in for ``codex app-server``: what a misbehaving or future server may say.

    python fake_appserver.py SCRIPT.json RECORD.jsonl [ignored codex flags...]

``SCRIPT.json`` maps a request method (``initialize``, ``thread/start``, ``turn/start``,
``turn/interrupt``, or ``reply`` for hz's answers to the server's requests) to the lines the
fake writes when it receives it. A line is a JSON value (``"$id"`` anywhere in it becomes the
request's id) or one of the strings ``"@raw TEXT"`` (TEXT as is: a malformed line),
``"@exit N"`` and ``"@sleep S"``, or ``{"@repeat": N, "line": VALUE, "pad": BYTES}``: VALUE
written N times, ``$n`` in its strings the line's number (from 0, two digits or more) and
``$pad`` BYTES of ``x`` (written in pieces: a flood of any size costs the fake no memory). A
method missing from the script gets ``{"id": $id, "result": {}}``. Every line hz sends is
appended to ``RECORD.jsonl``. At the end of its input the fake exits 0.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def _substitute(value: Any, ident: Any) -> Any:
    if value == "$id":
        return ident
    if isinstance(value, dict):
        return {k: _substitute(v, ident) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, ident) for v in value]
    return value


def _repeat(step: dict[str, Any], ident: Any) -> None:
    pad = int(step.get("pad", 0))
    for n in range(int(step["@repeat"])):
        text = json.dumps(_substitute(step["line"], ident)).replace("$n", f"{n:02d}")
        first, *rest = text.split("$pad")
        sys.stdout.write(first)
        for piece in rest:
            left = pad
            while left > 0:
                sys.stdout.write("x" * min(left, 1 << 20))
                left -= 1 << 20
            sys.stdout.write(piece)
        sys.stdout.write("\n")


def main() -> None:
    with open(sys.argv[1]) as f:
        script: dict[str, list[Any]] = json.load(f)
    record = open(sys.argv[2], "a")  # noqa: SIM115 - kept open for the whole run
    for raw in sys.stdin:
        record.write(raw)
        record.flush()
        message = json.loads(raw)
        method = message.get("method") or ("reply" if "id" in message else None)
        if method is None or method == "initialized":
            continue
        ident = message.get("id")
        steps = script.get(method, [{"id": "$id", "result": {}}])
        for step in steps:
            if isinstance(step, str) and step.startswith("@raw "):
                sys.stdout.write(step[5:] + "\n")
            elif isinstance(step, str) and step.startswith("@exit "):
                sys.stdout.flush()
                sys.exit(int(step[6:]))
            elif isinstance(step, str) and step.startswith("@sleep "):
                sys.stdout.flush()
                time.sleep(float(step[7:]))
            elif isinstance(step, dict) and "@repeat" in step:
                _repeat(step, ident)
            else:
                sys.stdout.write(json.dumps(_substitute(step, ident)) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()

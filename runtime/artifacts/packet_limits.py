"""What one packet may hold: the caps rendering keeps to and reading a packet checks.

One definition for both sides of the file boundary: the compiler renders within them (HZ003,
HZ705, HZ709, and the contract schema's lengths) and ``hz.runtime.artifacts.models`` refuses a
packet — a hand-made one, a ledger row — that is past them before anything is recorded or run:
each free-text field of the job and the packet, and the job and the packet as a whole (the
JSON the ledger stores), so that no field without a cap of its own (a schema, a default, the
list of tools) can fill the state directory either. No imports: the render child reads these
too and starts in a few milliseconds.
"""

from __future__ import annotations

import json
from typing import Any

MIB = 1024 * 1024

#: A contract file (HZ003); a job's contract text and template come from one.
MAX_CONTRACT_BYTES = 256 * 1024
#: The rendered prompt, as UTF-8 (HZ709).
MAX_PROMPT_BYTES = 1 * MIB
#: The input values: all sources together as read (HZ705), and a packet's values as the
#: compact canonical JSON ``inputs_sha256`` is the digest of.
MAX_INPUT_BYTES = 8 * MIB
#: A name: the job's, an input's, a tool's (the contract schema's ``maxLength``); a version.
MAX_NAME = 64
#: A job's title (the contract schema's ``maxLength``).
MAX_TITLE = 200
#: The tools one job may name.
MAX_TOOLS = 256
#: A digest (sha256, in hexadecimal).
MAX_DIGEST = 64
#: A path written in a job (its source, relative to the compile root; a working directory).
MAX_PATH_BYTES = 4096
#: A job as a whole, as JSON: its contract text and template (one contract file's worth) and
#: what else the file declares (descriptions, schemas, defaults), escaped as JSON; rendering
#: makes far less.
MAX_JOB_BYTES = 4 * MIB
#: A packet as a whole, as the JSON the ledger stores: the job (4 MiB), a prompt and a contract
#: text escaped (a control character takes six bytes: 6 MiB and 1.5 MiB), the input values
#: (measured as JSON already: 8 MiB), rounded up.
MAX_PACKET_BYTES = 20 * MIB


def utf8_size(text: str) -> int:
    """Bytes of ``text`` as UTF-8 (a lone surrogate counted as three, as rendering counts it)."""
    return len(text.encode("utf-8", "surrogatepass"))


def inputs_size(values: Any) -> int:
    """Bytes of ``values`` as the compact canonical JSON ``inputs_sha256`` is the digest of."""
    compact = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return utf8_size(compact)


def shown(size: int) -> str:
    """``1 MiB (1,048,576 bytes)`` / ``256 KiB (262,144 bytes)``."""
    unit = f"{size // MIB} MiB" if size % MIB == 0 else f"{size // 1024} KiB"
    return f"{unit} ({size:,} bytes)"

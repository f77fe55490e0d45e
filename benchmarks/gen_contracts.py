"""Generate varied, valid contracts for the validate benchmark (deterministic for a seed)."""

from __future__ import annotations

import json
import random
from pathlib import Path

TOOLS = ["Read", "Grep", "Glob", "LS"]
TIMEOUTS = ["90s", "10m", "1h", "1h30m", "45m", 600, 3600, "2h15m"]
WORDS = [
    "weekly",
    "status",
    "triage",
    "release",
    "notes",
    "digest",
    "audit",
    "review",
    "summary",
    "changes",
    "report",
]

INPUT_KINDS = [
    ({"type": "string", "minLength": 1}, "main"),
    ({"type": "string", "pattern": "^[0-9]{4}-W[0-9]{2}$"}, "2026-W48"),
    ({"type": "integer", "minimum": 1, "maximum": 1000}, 50),
    ({"enum": ["team", "stakeholders", "public"]}, "team"),
    ({"type": "array", "items": {"type": "string"}}, ["bug", "docs"]),
    (
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["number", "title"],
                "properties": {"number": {"type": "integer"}, "title": {"type": "string"}},
            },
        },
        None,
    ),
    ({"type": "boolean"}, False),
]

OUTPUT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "items"],
    "properties": {
        "summary": {"type": "string", "maxLength": 500},
        "items": {"type": "array", "items": {"type": "string"}},
        "confidence": {"enum": ["low", "medium", "high"]},
    },
}


def _flow(value: object) -> str:
    # JSON is YAML flow syntax: compact, and exercises the flow parser too.
    return json.dumps(value)


def contract(i: int, rng: random.Random) -> str:
    name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i:03d}"
    lines = [
        "# yaml-language-server: $schema=../schemas/workflow-contract.schema.json",
        "hz:",
        "  contract: 1",
        f"  name: {name}",
    ]
    if rng.random() < 0.7:
        lines.append(f"  title: {rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} number {i}")
    timeout = rng.choice(TIMEOUTS)
    lines.append(f"  timeout: {timeout}")
    lines.append("  agent:")
    tools = rng.sample(TOOLS, rng.randint(0, len(TOOLS)))
    if tools or rng.random() < 0.5:
        lines.append(f"    tools: [{', '.join(tools)}]")
    lines.append(f"    max_usd: {rng.choice(['0.10', '0.50', '1', '2.5', '10'])}")
    names = [f"in_{k}" for k in range(rng.randint(0, 4))]
    if names:
        lines.append("  inputs:")
    for n in names:
        schema, default = rng.choice(INPUT_KINDS)
        lines.append(f"    {n}:")
        if rng.random() < 0.8:
            lines.append(f"      description: The {n.replace('_', ' ')} value of the job")
        if rng.random() < 0.5:
            lines.append(f"      schema: {_flow(schema)}")
        else:
            lines.append("      schema:")
            lines += [f"        {k}: {_flow(v)}" for k, v in schema.items()]
        if default is not None and rng.random() < 0.6:
            lines.append(f"      default: {_flow(default)}")
    fmt = rng.choice(["markdown", "text", "json", None])
    if fmt is not None:
        lines += ["  output:", f"    format: {fmt}"]
        if fmt == "json" and rng.random() < 0.7:
            lines.append(f"    schema: {_flow(OUTPUT_SCHEMA)}")
    lines.append("contract: |")
    lines += [
        f"  - Rule {k}: report only what the inputs show; never change a file."
        for k in range(rng.randint(2, 8))
    ]
    lines.append("prompt: |")
    lines.append(f"  Write the {name.replace('-', ' ')}.")
    for n in names:
        if rng.random() < 0.5:
            lines += [f"  {{% for x in inputs.{n} %}}", "  - {{ x }}", "  {% endfor %}"]
        else:
            lines.append(f"  The {n}: {{{{ inputs.{n} }}}}")
    return "\n".join(lines) + "\n"


def generate(directory: Path, count: int, seed: int = 2) -> list[Path]:
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = directory / f"contract-{i:03d}.yaml"
        path.write_text(contract(i, rng), encoding="utf-8")
        paths.append(path)
    return paths

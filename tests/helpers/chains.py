"""Contracts that run by themselves (``hz.schedule``) and build on each other (``hz.after``,
``read: contract:NAME``), written into a project the tests compile."""

from __future__ import annotations

from pathlib import Path


def chained(
    name: str,
    *,
    schedule: str = "",
    after: tuple[str, ...] = (),
    reads: str = "",
    max_usd: float = 0.5,
    output: str = "",
    schema: str = "{type: string}",
) -> str:
    """A contract named ``name``; with ``reads``, an input ``upstream`` taking that job's draft
    (its prompt quotes it)."""
    lines = [
        "hz:",
        "  contract: 1",
        f"  name: {name}",
        "  timeout: 30s",
        "  agent:",
        f"    max_usd: {max_usd}",
    ]
    if schedule:
        lines.append(f"  schedule: {schedule}")
    if after:
        lines.append(f"  after: [{', '.join(after)}]")
    if reads:
        lines += [
            "  inputs:",
            "    upstream:",
            f"      read: contract:{reads}",
            f"      schema: {schema}",
        ]
    if output:
        lines.append(f"  output: {output}")
    prompt = "Answer {{ inputs.upstream }}" if reads else f"Say {name}."
    lines += ["contract: |", "  Be brief.", f"prompt: '{prompt}'", ""]
    return "\n".join(lines)


#: A -> B (B reads A's draft and runs after it) -> C (after B).
CHAIN = {
    "a": chained("a"),
    "b": chained("b", after=("a",), reads="a"),
    "c": chained("c", after=("b",)),
}


def write_project(root: Path, contracts: dict[str, str]) -> Path:
    """``root/contracts/NAME.yaml`` for each contract; the contracts directory."""
    folder = root / "contracts"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in contracts.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder

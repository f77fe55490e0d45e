"""SARIF 2.1.0 for code scanning (GitHub uploads it with ``github/codeql-action/upload-sarif``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def rule_title(code: str) -> str | None:
    """The rule's title from the registry (None for a code it does not have)."""
    rule = RULES.get(code)
    return None if rule is None else rule.label


def sarif_log(diagnostics: Sequence[Diagnostic], tool_version: str) -> dict[str, Any]:
    codes = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    rules: list[dict[str, Any]] = []
    for code in codes:
        rule: dict[str, Any] = {"id": code}
        title = rule_title(code)
        if title is not None:
            rule["shortDescription"] = {"text": title}
        rules.append(rule)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "hz", "version": tool_version, "rules": rules}},
                # Our columns count characters, not UTF-16 code units.
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index[d.code]) for d in diagnostics],
            }
        ],
    }


def _result(d: Diagnostic, rule_index: int) -> dict[str, Any]:
    message = f"{d.file}: {d.message}" if d.argument else d.message
    text = f"{message}\nhint: {d.hint}" if d.hint else message
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": "warning" if d.severity == "warning" else "error",
        "message": {"text": text},
    }
    if d.argument:  # a command-line argument: no artifact to locate it in
        return result
    physical: dict[str, Any] = {
        # The file name's own bytes, percent-encoded (one that is not UTF-8 comes as
        # surrogate escapes from the file system).
        "artifactLocation": {
            "uri": quote(d.file.encode("utf-8", "surrogateescape"), safe="/:@!$&'()*+,;=-._~")
        }
    }
    if d.line:
        region = {"startLine": d.line}
        if d.column:
            region["startColumn"] = d.column
        physical["region"] = region
    return {**result, "locations": [{"physicalLocation": physical}]}

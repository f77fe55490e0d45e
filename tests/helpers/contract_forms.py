"""Convert a contract between its two forms, YAML and Markdown, and compile either in memory.

YAML -> Markdown moves ``contract`` into the body and keeps every other key in the
frontmatter. Markdown -> YAML takes the document hz's own loader made of the file (the body
without its comments as ``contract``, the built request as ``prompt``), which is what the
Markdown form means.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from hz.compiler.compile import compile_contract
from hz.compiler.load.markdown import load_markdown
from hz.compiler.validate import validate_paths
from hz.runtime.artifacts.canonical import canonical_json

FENCED = re.compile(r"^```(yaml|markdown)\n(.*?)^```$", re.S | re.M)


def _dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)


def yaml_to_markdown(text: str) -> str:
    data = yaml.safe_load(text)
    body = data.pop("contract")
    return f"---\n{_dump(data)}---\n\n{body}"


def markdown_to_yaml(text: str) -> str:
    doc, problems = load_markdown(text.encode("utf-8"), "contract.md")
    assert doc is not None, problems
    return _dump(doc.data)


def job_json(path: Path) -> dict[str, Any]:
    """The job of the contract at ``path`` as JSON data, compiled with ``path``'s folder as the
    root; the contract must be valid (warnings allowed)."""
    run = validate_paths([str(path)])
    errors = [d for d in run.diagnostics if d.severity == "error"]
    assert errors == [], errors
    (contract,) = run.contracts
    data: dict[str, Any] = compile_contract(contract, root=path.parent).to_json_data()
    return data


def comparable(job: dict[str, Any]) -> str:
    """The job as canonical JSON without what describes its file: the source (path, digest,
    the comments taken out of a Markdown body, which a YAML file does not have) and the job's
    digest, which covers it."""
    job = dict(job)
    del job["source"], job["digest"]
    return canonical_json(job)


def is_valid(suffix: str, text: str) -> bool:
    """Whether ``text``, a contract in the form ``suffix`` names, validates without an error."""
    from hz.compiler.load.loader import load_bytes
    from hz.compiler.validate import validate_source

    load = load_markdown if suffix == "md" else load_bytes
    doc, _ = load(text.encode("utf-8"), f"c.{suffix}")
    return doc is not None and validate_source(doc)[0] is not None


def fenced_contracts(markdown: str) -> list[tuple[str, str]]:
    """The ```yaml blocks of a page that hold a whole contract (a top-level hz: key with a
    contract: 1) and its ```markdown blocks that open a frontmatter: (language, text)."""
    return [(lang, text) for lang, text in FENCED.findall(markdown) if _whole(lang, text)]


def _whole(lang: str, text: str) -> bool:
    if lang == "markdown":
        return text.startswith("---\nhz:")
    return bool(re.search(r"^hz:", text, re.M)) and "contract: 1" in text

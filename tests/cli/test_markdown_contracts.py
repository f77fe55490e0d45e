"""Markdown contracts through `hz validate`, `hz compile` and `hz render` in process: located
diagnostics in the frontmatter and the body, the built request, hostile files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli

FRONT = """\
---
hz:
  contract: 1
  name: weekly-status
  timeout: 10m
  agent:
    max_usd: 0.5
"""
BODY = """
## Goal

Draft the status.

## Done when

It is drafted.
"""


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_frontmatter_and_body_diagnostics_point_into_the_file(cli: Cli, tmp_path: Path) -> None:
    write(
        tmp_path / "weekly.md",
        FRONT
        + "kind: responsibility\n"
        + "kinds: daily\n"  # the last frontmatter line
        + "---\n\n<!-- the team's notes -->\n## Goal\n\nDraft the status.\n\n## Done when\n\n"
        + "It is drafted, from `inputs.week`.\n\n## Goal\n\nAgain.\n",
    )
    result = cli("validate", "weekly.md", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        "weekly.md:9:1: error: unknown key 'kinds' at the top level [HZ101]\n"
        "  hint: did you mean 'kind'? (allowed keys: hz, name, kind, version, description, "
        "prompt, x-…)\n"
        "weekly.md:11:1: error: a contract of kind 'responsibility' needs a '## Maintains' "
        "section [HZ111]\n"
        "  hint: add a heading '## Maintains' and what belongs under it\n"
        "weekly.md:19:22: warning: the body names inputs.week, which the frontmatter does not "
        "declare [HZ114]\n"
        "  hint: declare it under hz.inputs.week, or correct the name\n"
        "weekly.md:21:1: error: the section 'Goal' is given twice (first at line 13) [HZ113]\n"
        "  hint: merge the two into one section\n"
    )
    assert result.stderr == "Found 3 errors and 1 warning in 1 file (checked 1 file)\n"


def test_a_body_rule_in_github_and_sarif_form(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path / "w.md", FRONT + "---\n\n## Goal\n\n<!-- later -->\n\n## Done when\n\nx\n")
    github = cli("validate", "w.md", "--format", "github", cwd=tmp_path)
    assert github.stdout == (
        "::error file=w.md,line=10,col=1,title=HZ112::the section 'Goal' is empty%0A"
        "hint: write what belongs under it; a comment does not count\n"
    )
    sarif = json.loads(cli("validate", "w.md", "--format", "sarif", cwd=tmp_path).stdout)
    (found,) = sarif["runs"][0]["results"]
    assert found["ruleId"] == "HZ112"
    assert found["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 10,
        "startColumn": 1,
    }


def test_an_input_the_contracts_own_prompt_uses_is_used(cli: Cli, tmp_path: Path) -> None:
    """With a prompt of its own, the prompt says what an input is for: HZ115 (the body never
    names it) is for the request hz builds. The input no one uses gets one warning, the
    prompt's (HZ506), not a second one from the body."""
    inputs = "  inputs:\n    week:\n      schema: {type: string}\n"
    inputs += "    team:\n      schema: {type: string}\n"
    prompt = "prompt: |\n  Summarise the week {{ inputs.week }}.\n"
    write(tmp_path / "w.md", FRONT + inputs + prompt + "---\n" + BODY)
    result = cli("validate", "w.md", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (
        0,
        "w.md:11:5: warning: hz.inputs.team is declared but the prompt never uses it [HZ506]\n"
        "  hint: use it in the prompt as {{ inputs.team }}, or remove it\n",
    )


def test_a_yaml_error_on_the_last_frontmatter_line(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path / "w.md", FRONT + "title: [unclosed\n---\n" + BODY)
    result = cli("validate", "w.md", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (
        1,
        "w.md:9:1: error: YAML syntax error: did not find expected ',' or ']' (while parsing "
        "a flow sequence at line 8, column 8) [HZ004]\n",
    )


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(BODY, id="no-dashes-after"),
        pytest.param(BODY.replace("\n## Done when", "\n---\n\n## Done when"), id="rule-after"),
    ],
)
def test_a_frontmatter_closed_with_dots_is_told_to_close_with_dashes(
    cli: Cli, tmp_path: Path, body: str
) -> None:
    """pandoc closes a frontmatter with '...' (YAML's document end): hz does not, and says so
    at that line, whether a '---' later in the body (a thematic break) would have closed it
    (the YAML parser then read the body: a bare syntax error) or nothing does."""
    write(tmp_path / "w.md", FRONT + "...\n" + body)
    result = cli("validate", "w.md", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (
        1,
        "w.md:8:1: error: the frontmatter is closed with '...' on line 8: hz reads it up to a "
        "'---' [HZ015]\n"
        "  hint: close the frontmatter with a line holding only '---' instead; the body follows "
        "it\n",
    )


def test_render_shows_the_request_built_from_the_sections(cli: Cli, tmp_path: Path) -> None:
    front = FRONT + "  inputs:\n    week:\n      schema: {type: string}\n---\n"
    write(tmp_path / "w.md", front + BODY.replace("status.", "status for `inputs.week`."))
    result = cli("render", "w.md", "--input", "week=2026-W49", "--format", "text", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        'Carry out the contract above. Reach the goal under "Goal". You are done when '
        'everything under "Done when" holds.\n\n## Input: week\n\n2026-W49\n'
    )
    packet = json.loads(cli("render", "w.md", "--input", "week=x", cwd=tmp_path).stdout)
    assert packet["contract"] == (
        "## Goal\n\nDraft the status for `inputs.week`.\n\n## Done when\n\nIt is drafted.\n"
    )


def test_comments_are_removed_and_the_job_says_so(cli: Cli, tmp_path: Path) -> None:
    text = (
        FRONT + "---\n\n<!-- private: ask Bob -->\n## Goal\n\nDraft <!-- not this --> it.\n\n"
        "```\n<!-- kept: code -->\n## Done when\n---\n```\n\n## Done when\n\nIt is drafted.\n"
    )
    write(tmp_path / "w.md", text)
    result = cli("compile", "w.md", "--out", "jobs", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    job = json.loads((tmp_path / "jobs" / "weekly-status.job.json").read_text())
    assert job["contract"] == (
        "## Goal\n\nDraft  it.\n\n```\n<!-- kept: code -->\n## Done when\n---\n```\n\n"
        "## Done when\n\nIt is drafted.\n"
    )
    from hz.runtime.artifacts.canonical import sha256_hex

    assert job["source"]["comments_removed"] == {
        "count": 2,
        "sha256": sha256_hex("<!-- private: ask Bob -->\n<!-- not this -->"),
    }


def test_identity_keys_reach_the_job_and_x_keys_do_not(cli: Cli, tmp_path: Path) -> None:
    extra = "name: Weekly status\nkind: report\nversion: 3\ndescription: The week.\nx-owner: ada\n"
    write(tmp_path / "w.md", FRONT + extra + "---\n" + BODY)
    assert cli("compile", "w.md", "--out", "jobs", cwd=tmp_path).returncode == 0
    job = json.loads((tmp_path / "jobs" / "weekly-status.job.json").read_text())
    assert job["identity"] == {
        "name": "Weekly status",
        "kind": "report",
        "version": 3,
        "description": "The week.",
    }


def test_a_heinzelmaennchen_contract_gets_one_diagnostic(cli: Cli, tmp_path: Path) -> None:
    write(
        tmp_path / "status.prose.md",
        "---\nhz:\n  schema: 1\n  name: status\ninputs:\n  issues:\n    read: tracker.list\n"
        "outputs:\n  status: {format: markdown}\npublishes:\n  - comment\n---\n\n## Goal\n\nx\n",
    )
    result = cli("validate", "status.prose.md", cwd=tmp_path)
    assert result.stdout == (
        "status.prose.md:3:3: error: this is a Heinzelmännchen contract (hz.schema, outputs:, "
        "publishes:, inputs that read:), not an hz contract [HZ105]\n"
        "  hint: `hz migrate FILE` converts it, key by key, and says what is left to decide "
        "(docs/migrating-from-heinzel.md)\n"
    )


# Hostile Markdown: each a located diagnostic or a refusal, exit 1, never 3.

TOO_LARGE = (
    "{file}:0:0: error: file is larger than 256 KiB (262,144 bytes), the limit for a contract "
    "[HZ003]\n"
    "  hint: keep bulk data out of the contract: declare an input and pass it at render time\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            FRONT + BODY,
            "h.md:1:1: error: the frontmatter opened on line 1 is never closed [HZ015]\n"
            "  hint: end the frontmatter with a line holding only '---'; the body follows it\n",
            id="unterminated",
        ),
        pytest.param(
            FRONT + "x-pad: " + "a" * (10 * 1024 * 1024) + "\n---\n" + BODY,
            TOO_LARGE.format(file="h.md"),
            id="10MB-frontmatter",
        ),
        pytest.param(
            FRONT + "---\n" + BODY + "word " * (10 * 1024 * 1024),
            TOO_LARGE.format(file="h.md"),
            id="50MB-body",
        ),
        pytest.param(
            FRONT + "---\n\n## Goal\n\nab\x00c\n",
            "h.md:12:3: error: file is binary, not UTF-8 text: it contains a NUL byte [HZ002]\n"
            "  hint: hz reads contracts as UTF-8; save the file with that encoding\n",
            id="NUL-in-body",
        ),
        pytest.param(
            FRONT + "title: a\x00b\n---\n" + BODY,
            "h.md:8:9: error: file is binary, not UTF-8 text: it contains a NUL byte [HZ002]\n"
            "  hint: hz reads contracts as UTF-8; save the file with that encoding\n",
            id="NUL-in-frontmatter",
        ),
        pytest.param(
            "# Notes\n\nno frontmatter\n",
            "h.md:1:1: error: not a contract: a Markdown contract starts with a '---' "
            "frontmatter [HZ016]\n"
            "  hint: a Markdown contract starts with a line '---', its hz: block and the other "
            "keys, and another line '---'; the body follows\n",
            id="no-frontmatter",
        ),
        pytest.param(
            "---\ntitle: notes\n---\n" + BODY,
            "h.md:2:1: error: not a contract: the frontmatter has no hz: block [HZ016]\n"
            "  hint: a Markdown contract starts with a line '---', its hz: block and the other "
            "keys, and another line '---'; the body follows\n",
            id="no-hz-block",
        ),
        pytest.param(
            FRONT + "---\n\n## Goal\n\nx <!-- never closed\n\n## Done when\n\ny\n",
            # CommonMark ends an inline "<!--" with its paragraph: the section below is one.
            "h.md:12:3: error: '<!--' opens an HTML comment that is not closed before its "
            "paragraph or block ends [HZ116]\n"
            "  hint: close it with '-->' in the same paragraph or block; to show '<!--' as "
            "text, write '&lt;!--'\n",
            id="unclosed-comment",
        ),
    ],
)
def test_hostile_markdown(cli: Cli, tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path / "h.md", text)
    result = cli("validate", "h.md", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, expected)


def test_a_fence_line_inside_fenced_code_is_text(cli: Cli, tmp_path: Path) -> None:
    """`---` and `## Done when` inside a fenced block neither end anything nor count as the
    section: the section is missing, said at the body's first line."""
    write(tmp_path / "f.md", FRONT + "---\n\n## Goal\n\nx\n\n~~~\n---\n## Done when\n~~~\n")
    result = cli("validate", "f.md", cwd=tmp_path)
    assert result.stdout == (
        "f.md:9:1: error: a Markdown contract without a prompt needs a '## Done when' section "
        "[HZ111]\n"
        "  hint: add a heading '## Done when' and what belongs under it\n"
    )


def test_a_bom_and_crlf_compile_to_the_job_of_the_plain_file(cli: Cli, tmp_path: Path) -> None:
    text = FRONT + "---\n" + BODY
    (tmp_path / "plain").mkdir()
    (tmp_path / "dos").mkdir()
    write(tmp_path / "plain" / "w.md", text)
    (tmp_path / "dos" / "w.md").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    for name in ("plain", "dos"):
        result = cli(
            "compile", f"{name}/w.md", "--out", f"{name}/jobs", "--root", name, cwd=tmp_path
        )
        assert result.returncode == 0, result.stdout
    plain = json.loads((tmp_path / "plain" / "jobs" / "weekly-status.job.json").read_text())
    dos = json.loads((tmp_path / "dos" / "jobs" / "weekly-status.job.json").read_text())
    plain["source"].pop("sha256")
    dos["source"].pop("sha256")  # the BOM is in the file's bytes
    plain.pop("digest")
    dos.pop("digest")
    assert dos == plain


def test_bom_and_crlf_keep_positions(cli: Cli, tmp_path: Path) -> None:
    text = FRONT + "kinds: x\n---\n" + BODY
    (tmp_path / "w.md").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    result = cli("validate", "w.md", cwd=tmp_path)
    assert result.stdout.splitlines()[0] == (
        "w.md:8:1: error: unknown key 'kinds' at the top level [HZ101]"
    )

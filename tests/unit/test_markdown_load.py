"""The Markdown contract loader and body scanner on their own: frontmatter boundaries,
comments, fences, sections, and the keys beside hz:."""

from __future__ import annotations

import inspect
from pathlib import Path

from markdown_it.parser_block import ParserBlock
from markdown_it.rules_inline import html_inline

from hz.compiler.load.body import read_body
from hz.compiler.load.markdown import frontmatter_end, has_hz_block, load_markdown
from hz.compiler.source import Pos, Section
from hz.compiler.validate import validate_paths, validate_source

FRONT = "---\nhz:\n  contract: 1\n  name: w\n  timeout: 60\n  agent: {max_usd: 1}\n"


def test_comments_across_lines_and_several_on_one_line() -> None:
    body = read_body("a <!-- one --> b <!-- two --> c\n<!-- three\nlines -->\nd <!-- x\n-->e\n", 5)
    assert body.text == "a  b  c\nd \ne\n"
    assert body.comments == ("<!-- one -->", "<!-- two -->", "<!-- three\nlines -->", "<!-- x\n-->")
    assert body.unclosed_comment is None


def test_sections_levels_and_closing_hashes() -> None:
    body = read_body("# Title\n## Goal ##\n### Detail\n# Part\n## Done when\n\n  <!-- -->\n", 3)
    assert body.sections == (
        Section("Goal", Pos(4, 1), False),  # a level-3 heading is content
        Section("Done when", Pos(7, 1), True),
    )


def test_a_body_without_level_2_headings_has_its_sections_at_level_3() -> None:
    """Heinzelmännchen writes ``# Title`` and ``### Goal``: those are the sections."""
    body = read_body("# Title\n### Goal\nx\n#### Note\n### Done when\n# End\n", 1)
    assert body.sections == (
        Section("Goal", Pos(2, 1), False),
        Section("Done when", Pos(5, 1), True),
    )


def test_an_unclosed_fence_keeps_the_rest_as_text() -> None:
    body = read_body("## Goal\n\n````\n## Done when\n```\n<!-- kept -->\n", 1)
    assert [s.title for s in body.sections] == ["Goal"]
    assert body.text == "## Goal\n\n````\n## Done when\n```\n<!-- kept -->\n"
    assert body.comments == ()


def test_an_unclosed_comment_is_located() -> None:
    """An inline ``<!--`` without its ``-->`` is text to CommonMark (kept, and reported); an
    HTML block opened by ``<!--`` runs to the end of its container (removed, and reported)."""
    body = read_body("x\n  y <!-- z\n", 10)
    assert body.unclosed_comment == Pos(11, 5)
    assert body.text == "x\n  y <!-- z\n"
    block = read_body("x\n\n- a\n\n  <!-- z\n  b\n\nc\n", 1)
    assert block.unclosed_comment == Pos(5, 3)
    assert block.text == "x\n\n- a\n\nc\n"


def test_input_names_are_found_once_where_first_named() -> None:
    body = read_body("use inputs.week and inputs.week, then `inputs.team`\n", 2)
    assert body.inputs == (("week", Pos(2, 5)), ("team", Pos(2, 40)))


def test_frontmatter_boundaries() -> None:
    assert frontmatter_end("---  \na: 1\n---\nbody") == 11
    assert frontmatter_end("---\na: 1\n---") == 9
    assert frontmatter_end("---\na: 1\n") is None
    assert frontmatter_end("# no\n---\n") is None


def test_discovery_reads_the_frontmatter_by_lines() -> None:
    assert has_hz_block("\ufeff---\r\nhz:\r\n  contract: 1\r\n---\r\n")
    assert has_hz_block("---\nhz :\n  contract: 1\n")  # unterminated: a contract with a problem
    assert not has_hz_block("---\ntitle: x\n---\nhz: not in the frontmatter\n")
    assert not has_hz_block("hz:\n  contract: 1\n")


def test_a_file_that_ends_at_the_closing_line_has_an_empty_body() -> None:
    doc, problems = load_markdown((FRONT + "---").encode(), "w.md")
    assert problems == []
    assert doc is not None
    assert doc.data["contract"] == ""
    found = [(d.code, d.line, d.message) for d in validate_source(doc)[1]]
    assert ("HZ111", 8, "a Markdown contract without a prompt needs a '## Goal' section") in found


def test_a_contract_key_in_the_frontmatter_is_refused() -> None:
    doc, _ = load_markdown((FRONT + "contract: rules\nprompt: go\n---\nbody\n").encode(), "w.md")
    assert doc is not None
    found = [(d.code, d.line, d.column, d.message) for d in validate_source(doc)[1]]
    assert found == [
        (
            "HZ101",
            7,
            1,
            "'contract' is not a frontmatter key: the body of a Markdown contract is its text",
        )
    ]


def test_heinzelmaennchen_signs_inside_hz_and_on_top_level_inputs() -> None:
    doc, _ = load_markdown(
        b"---\nhz:\n  name: w\n  outputs: {}\ninputs:\n  a: {read: git.log}\n---\nx\n", "w.md"
    )
    assert doc is not None
    (found,) = validate_source(doc)[1]
    assert (found.code, found.line, found.column) == ("HZ105", 4, 3)
    assert found.message == (
        "this is a Heinzelmännchen contract (hz.outputs, inputs that read:), not an hz contract"
    )


def test_a_directory_finds_an_unterminated_contract_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "w.md").write_text(FRONT + "\n## Goal\n")
    run = validate_paths([tmp_path])
    assert [(d.code, d.line) for d in run.diagnostics] == [("HZ015", 1)]


def test_the_shortest_comments_end_where_they_open() -> None:
    """``<!-->`` and ``<!--->`` are whole comments: the text after them stays the agent's."""
    body = read_body("keep <!--> this\n\nand <!---> this\n\n<!-- note -->\n", 1)
    assert body.text == "keep  this\n\nand  this\n"
    assert body.comments == ("<!-->", "<!--->", "<!-- note -->")


def test_backticks_after_a_backtick_fence_make_inline_code_not_a_fence() -> None:
    body = read_body("## Goal\n\n``` `x` inline\n<!-- private -->\n\n## Done when\n\nx\n", 1)
    assert body.text == "## Goal\n\n``` `x` inline\n\n## Done when\n\nx\n"
    assert [s.title for s in body.sections] == ["Goal", "Done when"]
    fenced = read_body("~~~ `x`\n<!-- kept -->\n~~~\n", 1)
    assert fenced.text == "~~~ `x`\n<!-- kept -->\n~~~\n"


def test_code_in_list_items_and_blockquotes_keeps_its_comments() -> None:
    """CommonMark containers: a fence in a list item or a blockquote, and an indented code
    block, are code; their ``<!--``, ``## `` and ``---`` are text."""
    listed = "- step\n\n  ```\n  <!-- kept -->\n  ## Done when\n  ---\n  ```\n"
    assert read_body(listed, 1).text == listed
    assert read_body(listed, 1).comments == ()
    assert read_body(listed, 1).sections == ()
    quoted = "> ```\n> <!-- kept -->\n> ```\n"
    assert read_body(quoted, 1).text == quoted
    indented = "x\n\n    <!-- kept -->\n"
    assert read_body(indented, 1).text == indented
    assert read_body(indented, 1).comments == ()


def test_a_comment_in_a_list_item_is_removed() -> None:
    body = read_body("- a <!-- inline -->\n- b\n\n  <!-- block -->\n  c\n", 4)
    assert body.text == "- a \n- b\n\n  c\n"
    assert body.comments == ("<!-- inline -->", "<!-- block -->")


def test_headings_in_a_blockquote_or_list_item_are_not_sections() -> None:
    """Only a top-level ``##`` heading is a section: one inside a container is the
    container's (CommonMark nests it there), so it counts as content."""
    body = read_body("## Goal\n\n> ## Done when\n\n- ## Maintains\n", 1)
    assert body.sections == (Section("Goal", Pos(1, 1), False),)


def test_pathological_bodies_parse() -> None:
    """Shapes that make some Markdown parsers blow up parse, at the size cap, to an answer."""
    deep = read_body(">" * 2000 + " <!-- deep -->\n" + "  " * 500 + "- x\n", 1)
    assert deep.comments == ()  # beyond the nesting limit nothing is read: HZ117 says where
    assert deep.too_deep == Pos(1, 21)
    ticks = read_body("`" * 10000 + " <!-- c --> " + "`" * 9999 + "\n", 1)
    assert ticks.comments == ("<!-- c -->",)
    openers = read_body("x <!--\n" * 10000, 1)
    assert openers.unclosed_comment == Pos(1, 3)


def test_the_first_line_nested_beyond_the_limit_is_located() -> None:
    """A list level counts two: nine nested lists are read, the tenth is not; 19
    blockquotes are read, the 20th is not."""
    read = read_body("".join("  " * i + "- x\n" for i in range(9)), 3)
    assert read.too_deep is None
    unread = read_body("".join("  " * i + "- x\n" for i in range(10)), 3)
    assert unread.too_deep == Pos(12, 21)
    assert read_body(">" * 19 + " x\n", 1).too_deep is None
    assert read_body(">" * 20 + " x\n", 1).too_deep == Pos(1, 22)


def test_inline_comments_are_found_in_their_file_lines() -> None:
    """An inline comment's position comes from its file line, whatever the container cut
    off in front of it: a blockquote's marker, or a tab markdown-it turns into spaces."""
    body = read_body("> a <!-- c --> inputs.x\n- a\n\tb <!-- d --> inputs.y\n", 7)
    assert body.text == "> a  inputs.x\n- a\n\tb  inputs.y\n"
    assert body.comments == ("<!-- c -->", "<!-- d -->")
    assert body.inputs == (("x", Pos(7, 16)), ("y", Pos(9, 15)))
    unclosed = read_body("- a\n\tb <!-- d\n", 1)
    assert unclosed.unclosed_comment == Pos(2, 4)


def test_the_markdown_it_functions_hz_wraps_keep_their_signatures() -> None:
    """hz wraps markdown-it's block tokenizer and html_inline rule (STYLE 22): a change of
    their signatures upstream must fail here, not in a contract."""
    assert list(inspect.signature(ParserBlock.tokenize).parameters) == [
        "self",
        "state",
        "startLine",
        "endLine",
    ]
    assert list(inspect.signature(html_inline).parameters) == ["state", "silent"]

"""``hz migrate``'s edits where a key is written otherwise than heinzel's own contracts write
it: publishes and chained inputs with keys hz has no home for, flow style, quoted keys, a null
agent, line ends. Each case: exactly what is reported and written, the result valid and
migrating to itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hz.compiler.migrate import migrate
from tests.conftest import Cli

BASE = """\
---
name: c
hz:
  schema: 1
  title: T
{inputs}  outputs:
    draft: {{format: markdown}}
{extra}---

### Goal

The status is current.

### Done when

- [ ] Done.
"""
NEW_ITEM = (
    "write it as an hz publish (to: command.run, args: {command: NAME}, or another target of "
    "docs/publishing.md), or delete the comment"
)
IN_PROSE = "keep the intent in the body's prose, or delete the comment"
NO_WHEN = (
    "publish key when: {} has no counterpart in an hz publish (hz publishes each completed "
    "draft that passed its checks, as the operator's [publish] policy allows): commented out"
)
LIMITS = "  timeout: 10m\n  agent:\n    max_usd: 1.0\n"


def _hz_block(cli: Cli, tmp_path: Path, data: bytes) -> tuple[str, list[tuple[object, ...]]]:
    """Migrate ``data`` in place: the migrated frontmatter and the HZ171/HZ174 notes; the
    result validates and migrates to itself."""
    (tmp_path / "c.md").write_bytes(data)
    result = migrate(data, "c.md")
    done = cli("migrate", "c.md", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert result.text is not None
    assert (tmp_path / "c.md").read_bytes() == result.text.encode()
    valid = cli("validate", "c.md", cwd=tmp_path)
    assert valid.returncode == 0, valid.stdout
    assert migrate(result.text.encode(), "c.md").text is None  # a migrated file is left as is
    notes = [
        (n.code, n.line, n.column, n.message, n.decide)
        for n in result.notes
        if n.code in ("HZ171", "HZ174")
    ]
    return result.text.split("\n---\n")[0] + "\n", notes


def test_a_publish_keeps_its_comments_and_comments_out_what_hz_cannot_carry_out(
    cli: Cli, tmp_path: Path
) -> None:
    """Every key but the action, every item without a usable action, and every comment of
    the block were dropped without a note: a conditional publish became unconditional."""
    extra = (
        "  publishes:\n"
        "    # post to the team channel, approved only\n"
        "    - action: notes.publish\n"
        "      output: draft  # the digest\n"
        "      when: approved\n"
        "    - {output: draft}\n"
        "    - action: 7\n"
        "    - action: '!!!'\n"
        "    - action: Notes_Publish\n"
    )
    front, notes = _hz_block(cli, tmp_path, BASE.format(inputs="", extra=extra).encode())
    assert front.split("  output: {format: markdown}\n")[1] == (
        "  publishes:\n"
        "    # post to the team channel, approved only\n"
        "    - to: command.run\n"
        '      args: {command: "notes-publish"}\n'
        "      # the digest\n"
        "      # hz migrate: an hz publish has no when\n"
        "      # when: approved\n"
        "    # hz migrate: a publish hz cannot carry out\n"
        "    # - {output: draft}\n"
        "    # hz migrate: a publish hz cannot carry out\n"
        "    # - action: 7\n"
        "    # hz migrate: a publish hz cannot carry out\n"
        "    # - action: '!!!'\n"
        "    # hz migrate: a publish hz cannot carry out\n"
        "    # - action: Notes_Publish\n" + LIMITS
    )
    no_command = (
        "names no command (a command's name is lowercase letters, digits and dashes): commented out"
    )
    assert notes == [
        (
            "HZ171",
            10,
            7,
            "publish action notes.publish is the operator's command notes-publish "
            "(to: command.run): hz has no publish target of that name",
            "declare [publish.commands.notes-publish] (argv) and allow command.run in [publish] "
            "of the hz configuration of whoever runs the job",
        ),
        ("HZ174", 12, 7, NO_WHEN.format("approved"), IN_PROSE),
        ("HZ174", 13, 7, 'publish {"output": "draft"} names no action: commented out', NEW_ITEM),
        ("HZ174", 14, 7, f"publish action 7 {no_command}", NEW_ITEM),
        ("HZ174", 15, 7, f"publish action !!! {no_command}", NEW_ITEM),
        (
            "HZ174",
            16,
            7,
            "publish action Notes_Publish is the operator's command notes-publish, as action "
            "notes.publish on line 10 is: commented out",
            NEW_ITEM,
        ),
    ]


def test_publishes_in_flow_style_are_cut_and_commented_above(cli: Cli, tmp_path: Path) -> None:
    extra = (
        "  publishes: [{action: 7}, {action: notes.publish, output: draft, when: ok}, 5, "
        "{when: x, action: x.y}]  # both\n"
    )
    front, notes = _hz_block(cli, tmp_path, BASE.format(inputs="", extra=extra).encode())
    assert front.split("  output: {format: markdown}\n")[1] == (
        "  # hz migrate: a publish hz cannot carry out\n"
        "  # {action: 7}\n"
        "  # hz migrate: an hz publish has no when\n"
        "  # when: ok\n"
        "  # hz migrate: a publish hz cannot carry out\n"
        "  # 5\n"
        "  # hz migrate: an hz publish has no when\n"
        "  # when: x\n"
        '  publishes: [{to: command.run, args: {command: "notes-publish"}}, '
        '{to: command.run, args: {command: "x-y"}}]  # both\n' + LIMITS
    )
    assert [(code, line, column) for code, line, column, *_ in notes] == [
        ("HZ174", 8, 16),
        ("HZ171", 8, 28),
        ("HZ174", 8, 67),
        ("HZ174", 8, 78),
        ("HZ171", 8, 81),
        ("HZ174", 8, 82),
    ]
    assert notes[3][3] == "publish 5 names no action: commented out"


def test_publishes_without_one_hz_can_carry_out_are_commented_out_whole(
    cli: Cli, tmp_path: Path
) -> None:
    extra = "  publishes:\n    # nothing hz can do\n    - {output: draft}\n"
    front, notes = _hz_block(cli, tmp_path, BASE.format(inputs="", extra=extra).encode())
    assert front.split("  output: {format: markdown}\n")[1] == (
        "  # hz migrate: no publish hz can carry out\n"
        "  # publishes:\n"
        "  #   # nothing hz can do\n"
        "  #   - {output: draft}\n" + LIMITS
    )
    assert notes == [
        ("HZ174", 10, 7, 'publish {"output": "draft"} names no action: commented out', NEW_ITEM)
    ]


def test_a_chained_input_keeps_its_comments_and_comments_out_what_hz_has_not(
    cli: Cli, tmp_path: Path
) -> None:
    """The input was replaced by {read: …}: stage: final, window, any other key and the
    comments went without a note."""
    inputs = (
        "  inputs:\n"
        "    up:\n"
        "      # the tracker row, only when fresh\n"
        "      read: contract:team/x#row  # the row\n"
        "      stage: final\n"
        "      window: 30d\n"
        "      max_items: 5\n"
    )
    front, notes = _hz_block(cli, tmp_path, BASE.format(inputs=inputs, extra="").encode())
    assert front.split("  title: T\n")[1] == (
        "  inputs:\n"
        "    up:\n"
        "      # the tracker row, only when fresh\n"
        '      read: "contract:team-x"  # the row\n'
        "      # hz migrate: an input that reads a contract has no stage\n"
        "      # stage: final\n"
        "      # hz migrate: an input that reads a contract has no window\n"
        "      # window: 30d\n"
        "      # hz migrate: an input that reads a contract has no max_items\n"
        "      # max_items: 5\n"
        "  output: {format: markdown}\n" + LIMITS
    )
    gone = "has no counterpart in an input that reads another contract's draft: commented out"
    assert notes == [
        ("HZ174", 10, 7, f"hz.inputs.up.stage: final {gone}", IN_PROSE),
        (
            "HZ174",
            11,
            7,
            f"hz.inputs.up.window: 30d {gone}",
            "hz reads the newest completed draft of team-x; to refuse one older than a span, "
            "write max_age: (such as 7d), or delete the comment",
        ),
        ("HZ174", 12, 7, f"hz.inputs.up.max_items: 5 {gone}", IN_PROSE),
    ]


def test_a_chained_input_in_flow_style_keeps_what_hz_has(cli: Cli, tmp_path: Path) -> None:
    inputs = (
        '  inputs:\n    up: {stage: draft, read: "contract:team/x#row", window: last 30d, '
        "description: Row}  # fresh\n"
    )
    front, notes = _hz_block(cli, tmp_path, BASE.format(inputs=inputs, extra="").encode())
    assert front.split("  title: T\n")[1] == (
        "  inputs:\n"
        "    # hz migrate: an input that reads a contract has no window\n"
        "    # window: last 30d\n"
        '    up: {read: "contract:team-x", description: Row}  # fresh\n'
        "  output: {format: markdown}\n" + LIMITS
    )
    assert [(code, line, column) for code, line, column, *_ in notes] == [("HZ174", 7, 53)]


def test_a_catch_up_beside_a_schedule_that_is_no_cron_is_left_to_decide(
    cli: Cli, tmp_path: Path
) -> None:
    """It stayed as written, and validate refused it (HZ101) after migrate exited 0."""
    data = BASE.format(inputs="", extra="  schedule: {cron: 0 7 * * 1}\n  catch_up: all\n")
    result = migrate(data.encode(), "c.md")
    assert result.text is not None
    assert "\n  # hz migrate: hz.schedule is no cron expression to merge it into\n" in (result.text)
    assert [(n.code, n.kind, n.line, n.message, n.decide) for n in result.notes][-1] == (
        "HZ174",
        "decide",
        9,
        "catch_up: all belongs in hz.schedule, which is no cron expression here: commented out",
        "write schedule: {cron: …, catch_up: all}",
    )
    (tmp_path / "c.md").write_text(result.text)
    assert cli("validate", "c.md", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("extra", "written"),
    [
        ("  agent:\n    tools: [Read]\n", "  agent:\n    tools: [Read]\n    max_usd: 1.0\n"),
        ("  agent:\n", "  agent:\n    max_usd: 1.0\n"),
        ("  agent: ~  # later\n", "  agent:   # later\n    max_usd: 1.0\n"),
        ("  agent: {tools: [Read]}\n", "  agent: {tools: [Read], max_usd: 1.0}\n"),
        ("  agent:\n      tools: [Read]\n", "  agent:\n      tools: [Read]\n      max_usd: 1.0\n"),
    ],
    ids=["last-key", "null", "tilde", "flow", "deeper"],
)
def test_a_budget_goes_into_the_agent_as_written(
    cli: Cli, tmp_path: Path, extra: str, written: str
) -> None:
    """As the last key of hz:, the agent's max_usd landed below the added timeout; a null
    agent got a second agent: key; both refused as HZ178."""
    front, _ = _hz_block(cli, tmp_path, BASE.format(inputs="", extra=extra).encode())
    assert front.split("  output: {format: markdown}\n")[1] == written + "  timeout: 10m\n"


@pytest.mark.parametrize(
    ("outputs", "written"),
    [
        ('  outputs:\n    "dr: aft": {format: markdown}\n', "  output: {format: markdown}\n"),
        (
            "  outputs: {draft: {format: markdown}}  # one\n",
            "  output: {format: markdown}  # one\n",
        ),
        (
            "  outputs:  # the one\n    # the draft\n    draft:\n      format: markdown\n",
            "  output:  # the one\n  # the draft\n    format: markdown\n",
        ),
    ],
    ids=["quoted-key-with-colon", "flow", "block-with-comments"],
)
def test_the_one_output_is_read_by_its_key_not_split_on_a_colon(
    cli: Cli, tmp_path: Path, outputs: str, written: str
) -> None:
    data = BASE.format(inputs="", extra="").replace(
        "  outputs:\n    draft: {format: markdown}\n", outputs
    )
    front, _ = _hz_block(cli, tmp_path, data.encode())
    assert front.split("  title: T\n")[1] == written + LIMITS


def test_line_ends_outside_the_edits_stay_as_written(cli: Cli, tmp_path: Path) -> None:
    """A CRLF anywhere turned every LF into CRLF, and a lone CR into LF."""
    text = BASE.format(inputs="", extra="").replace("  title: T\n", "  title: T\r\n")
    text = text.replace("- [ ] Done.\n", "- [ ] Done.\nline\r\nmore\rlast\n")
    result = migrate(text.encode(), "c.md")
    assert result.text is not None
    assert result.text.encode() == (
        b'---\nname: c\nhz:\n  contract: 1\n  name: "c"\n  title: T\r\n'
        b"  output: {format: markdown}\n" + LIMITS.encode() + b"---\n"
        b"\n### Goal\n\nThe status is current.\n\n### Done when\n\n"
        b"- [ ] Done.\nline\r\nmore\rlast\n"
    )
    cr = text.replace("\r\n", "\n").replace("\n", "\r").encode()
    migrated = migrate(cr, "c.md").text
    assert migrated is not None
    assert migrated.encode().startswith(b'---\rname: c\rhz:\r  contract: 1\r  name: "c"\r')
    assert b"\n" not in migrated.encode()


@pytest.mark.parametrize(
    ("extra", "written"),
    [
        (
            "  publishes:\n    -   # c\n      {output: draft}\n    - action: a.b\n",
            "  publishes:\n"
            "    # hz migrate: a publish hz cannot carry out\n"
            "    # -   # c\n"
            "    #   {output: draft}\n"
            "    - to: command.run\n"
            '      args: {command: "a-b"}\n',
        ),
        (
            "  publishes: [\n    {action: a.b,\n     when: x},  # c\n    {action: 7}\n  ]\n",
            "  # hz migrate: an hz publish has no when\n"
            "  # when: x\n"
            "  # hz migrate: a publish hz cannot carry out\n"
            "  # {action: 7}\n"
            "  publishes: [\n"
            '    {to: command.run, args: {command: "a-b"}}  # c\n'
            "    \n"
            "  ]\n",
        ),
    ],
    ids=["comment-after-the-dash", "flow-over-lines"],
)
def test_an_item_is_commented_out_as_it_stands(
    cli: Cli, tmp_path: Path, extra: str, written: str
) -> None:
    """A dash with a comment after it stayed behind as a null item (validate: HZ103); a key on
    its own line inside a flow mapping was commented out as if in block style (HZ178), and a
    comment between flow items was cut with the item."""
    front, _ = _hz_block(cli, tmp_path, BASE.format(inputs="", extra=extra).encode())
    assert front.split("  output: {format: markdown}\n")[1] == written + LIMITS


def test_a_migration_hz_could_not_read_says_so() -> None:
    """The keys a migration adds (name, timeout, budget) are nodes too: past the loader's
    limit, the refusal was HZ178's "written in a way hz migrate does not edit"."""
    many = "x-tags: [" + ", ".join(["1"] * 9980) + "]\n"
    result = migrate(
        BASE.format(inputs="", extra="").replace("hz:\n", many + "hz:\n").encode(), "c.md"
    )
    assert [(n.code, n.kind, n.line, n.column, n.message) for n in result.notes] == [
        (
            "HZ013",
            "error",
            4,
            1,
            "migrated, the contract would not be read by hz: more than 10,000 YAML nodes in "
            "the file",
        )
    ]


def test_a_first_key_after_the_dash_and_a_stage_over_two_lines(cli: Cli, tmp_path: Path) -> None:
    extra = "  publishes:\n    - when: y  # y\n      action: c.d\n"
    inputs = "  inputs:\n    up:\n      read: contract:team/x\n      stage:\n        draft\n"
    front, _ = _hz_block(cli, tmp_path, BASE.format(inputs=inputs, extra=extra).encode())
    assert front.split("  title: T\n")[1] == (
        "  inputs:\n"
        "    up:\n"
        '      read: "contract:team-x"\n'
        "      # hz migrate: carried over\n"
        "      # stage:\n"
        "      #   draft\n"
        "  output: {format: markdown}\n"
        "  publishes:\n"
        "    -\n"
        "      # hz migrate: an hz publish has no when\n"
        "      # when: y  # y\n"
        "      to: command.run\n"
        '      args: {command: "c-d"}\n' + LIMITS
    )


COMPLEX = (
    "is a complex key (after ?, or over several lines): hz migrate edits a key written on one "
    "line before its colon"
)
ONE_LINE_KEY = "write the key on one line, followed by its colon, then migrate again"
RUNS_ON = (
    "which stands no deeper than its key: its lines would not say where it ends, and hz migrate "
    "does not edit it"
)
INDENT = (
    "indent every line of the value deeper than its key (or write it on one line), then "
    "migrate again"
)


def _refused(data: str) -> list[tuple[object, ...]]:
    """The notes of a file ``hz migrate`` refuses (and writes nothing for)."""
    result = migrate(data.encode(), "c.md")
    assert result.text is None
    return [(n.code, n.kind, n.line, n.column, n.message, n.decide) for n in result.notes]


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        (
            "  publishes:\n    - action: a.b\n      ? when\n      : x\n",
            (10, 9, "publishes[0].when"),
        ),
        (
            "  ?\n    legacy\n    publishes\n  : [{to: command.run, args: {command: pwn}}]\n",
            (9, 5, "legacy publishes"),
        ),
    ],
    ids=["after-question-mark", "over-lines-after-a-bare-question-mark"],
)
def test_a_complex_key_is_refused_where_it_stands(extra: str, where: tuple[int, int, str]) -> None:
    """After a bare ``?``, only the key's first line was commented out: the rest of it became
    the key, a live publishes to command.run (validate: no issues)."""
    line, column, key = where
    assert _refused(BASE.format(inputs="", extra=extra)) == [
        ("HZ178", "error", line, column, f"hz.{key} {COMPLEX}", ONE_LINE_KEY)
    ]


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        (
            '  requires: "code-host\n  publishes: [{to: command.run, args: {command: pwn}}]\n'
            '  # "\n',
            (9, 3, "requires"),
        ),
        ('  requires: "x\npublishes: [{to: command.run}]\n# "\n', (9, 1, "requires")),
        ("  retries: 'x\n  timeout: 1h\n  '\n", (9, 3, "retries")),
        ('  agent: "x\n  publishes: []\n  "\n', (9, 3, "agent")),
        (
            '  publishes:\n    - action: a.b\n      when: "x\n      to: y\n      "\n',
            (11, 7, "publishes[0].when"),
        ),
    ],
    ids=["requires", "column-0", "retries", "agent", "publish-when"],
)
def test_a_value_running_onto_lines_no_deeper_than_its_key_is_refused(
    cli: Cli, tmp_path: Path, extra: str, where: tuple[int, int, str]
) -> None:
    """Commented out by its key's line only, the rest of the string came free as live keys:
    a publish to command.run hz migrate reported nothing of, and validate passed."""
    line, column, key = where
    data = BASE.format(inputs="", extra=extra)
    assert _refused(data) == [
        ("HZ178", "error", line, column, f"hz.{key} runs onto line {line}, {RUNS_ON}", INDENT)
    ]
    (tmp_path / "c.md").write_text(data)
    assert cli("migrate", "c.md", cwd=tmp_path).returncode == 1
    assert (tmp_path / "c.md").read_text() == data


def test_a_comment_at_column_0_inside_an_entry_goes_with_it(cli: Cli, tmp_path: Path) -> None:
    """A comment line at column 0 ended the entry and the hz: block: the requires' tools came
    under the agent: migrate added (agent.tools: [Bash, WebFetch]), an input moved into it."""
    inputs = "  inputs:\n# the tracker\n    up:\n      read: contract:team/x\n"
    extra = "  requires:\n# capabilities this contract needs\n    tools: [Bash, WebFetch]\n"
    front, _ = _hz_block(cli, tmp_path, BASE.format(inputs=inputs, extra=extra).encode())
    assert front.split("  title: T\n")[1] == (
        "  inputs:\n"
        "# the tracker\n"
        "    up:\n"
        '      read: "contract:team-x"\n'
        "  output: {format: markdown}\n"
        "  # hz migrate: hz reads the capabilities from the inputs' read\n"
        "  # requires:\n"
        "# capabilities this contract needs\n"
        "  #   tools: [Bash, WebFetch]\n" + LIMITS
    )


@pytest.mark.parametrize(
    ("extra", "written"),
    [
        (
            "  description: |\n    The rows.\n    # Only final rows count.\n",
            "  # hz migrate: hz has no hz.description\n"
            "  # description: |\n"
            "  #   The rows.\n"
            "  #   # Only final rows count.\n",
        ),
        (
            "  notes: |+\n    kept\n\n",
            "  # hz migrate: hz has no hz.notes\n  # notes: |+\n  #   kept\n\n",
        ),
        ('  title: "Weekly\n    # report"\n', '  title: "Weekly\n    # report"\n'),
    ],
    ids=["block-scalar-ending-in-a-hash-line", "kept-blank-lines", "quoted-ending-in-a-hash"],
)
def test_what_migrate_adds_goes_after_the_last_value_not_inside_it(
    cli: Cli, tmp_path: Path, extra: str, written: str
) -> None:
    """The budget and timeout went in before the value's last lines: a description lost its
    last line (now a comment under agent:), a quoted title took "timeout: 10m agent: …" in
    while the report said both were added."""
    data = BASE.format(inputs="", extra=extra)
    if extra.startswith("  title:"):  # the title, last of all
        data = data.replace("  title: T\n", "", 1)
    front, _ = _hz_block(cli, tmp_path, data.encode())
    assert front.split("  output: {format: markdown}\n")[1] == written + LIMITS


def test_an_output_with_a_block_scalar_moves_every_line_of_it(cli: Cli, tmp_path: Path) -> None:
    """Its last line, starting with #, was not moved left with the rest: the description
    gained two spaces of text."""
    data = BASE.format(inputs="", extra="").replace(
        "    draft: {format: markdown}\n",
        "    draft:\n      format: json\n      schema:\n        description: |\n"
        "          text\n          # more\n",
    )
    front, _ = _hz_block(cli, tmp_path, data.encode())
    assert front.split("  title: T\n")[1] == (
        "  output:\n    format: json\n    schema:\n      description: |\n        text\n"
        "        # more\n" + LIMITS
    )


@pytest.mark.parametrize(
    "outputs", ["  outputs:\n    ? k\n", "  outputs:\n    ? k\n    : {format: markdown}\n"]
)
def test_an_output_written_as_a_complex_key_is_refused(outputs: str) -> None:
    """ValueError: substring not found (exit 3)."""
    data = BASE.format(inputs="", extra="").replace(
        "  outputs:\n    draft: {format: markdown}\n", outputs
    )
    assert _refused(data) == [("HZ178", "error", 7, 7, f"hz.outputs.k {COMPLEX}", ONE_LINE_KEY)]


@pytest.mark.parametrize(
    ("schema", "shown"), [("11", "11"), ("'1'", '"1"'), ("1.0", "1.0"), ('"1\n    - 1"', '"1 - 1"')]
)
def test_a_schema_other_than_1_is_refused_by_its_value(schema: str, shown: str) -> None:
    """Written as contract: 11, and reported as "hz.schema: 1 is hz.contract: 1"."""
    data = BASE.format(inputs="", extra="").replace("schema: 1", f"schema: {schema}")
    assert _refused(data) == [
        (
            "HZ178",
            "error",
            4,
            11,
            f"hz.schema is {shown}: hz migrate knows Heinzelmännchen's schema 1 only",
            "migrate a contract of Heinzelmännchen's schema 1 (hz.schema: 1)",
        )
    ]


def test_a_window_that_would_read_as_a_number_is_quoted() -> None:
    """last 10 became window: 10, a number (for hz to refuse as a window, HZ412)."""
    inputs = "  inputs:\n    up:\n      read: x.y\n      window: last 10\n"
    result = migrate(BASE.format(inputs=inputs, extra="").encode(), "c.md")
    assert result.text is not None
    assert '      window: "10"\n' in result.text


def test_an_edit_that_would_change_the_meaning_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last check, read back: with the requires' entry ended by its first line (as by
    indentation it was), the string's second line would be a live publishes."""
    from hz.compiler.migrate.edit import Editor

    deeper = Editor.lines_deeper

    def first_line(self: Editor, path: tuple[str | int, ...], line: int, column: int) -> int:
        return line + 1 if path == ("requires",) else deeper(self, path, line, column)

    monkeypatch.setattr(Editor, "lines_deeper", first_line)
    extra = '  requires: "x\n  publishes: [{to: command.run, args: {command: pwn}}]\n  # "\n'
    assert _refused(BASE.format(inputs="", extra=extra)) == [
        (
            "HZ178",
            "error",
            3,
            1,
            "the edit would change the contract's meaning: hz.publishes would appear, written "
            "by no edit",
            "write that key's value on lines deeper than its key (or on one line), or migrate "
            "it by hand; then migrate again",
        )
    ]


def _unmeant_title(want: dict[str, Any]) -> None:
    del want["title"]


def _other_title(want: dict[str, Any]) -> None:
    want["title"] = "U"


def _scope(want: dict[str, Any]) -> None:
    want["scope"] = 1


def _other_target(want: dict[str, Any]) -> None:
    want["publishes"][0]["to"] = "x"


@pytest.mark.parametrize(
    ("fault", "where", "message"),
    [
        (_unmeant_title, (5, 3), "hz.title would appear, written by no edit"),
        (_other_title, (5, 3), "hz.title would be T, not U"),
        (_scope, (3, 1), "hz.scope would be gone"),
        (_other_target, (9, 7), "hz.publishes[0].to would be command.run, not x"),
        (None, (2, 1), "name would be d, not c"),
    ],
    ids=["appears", "changed", "gone", "in-a-list", "beside-hz"],
)
def test_the_last_check_names_what_would_change_where_it_comes_from(
    monkeypatch: pytest.MonkeyPatch,
    fault: Callable[[dict[str, Any]], None] | None,
    where: tuple[int, int],
    message: str,
) -> None:
    """Each way an edit could mean something else than it says (faults put into what the
    edits mean, or into the text they write) is refused at the source's key."""
    from hz.compiler.migrate.edit import Editor
    from hz.compiler.migrate.text import Edits

    meant = Editor.intended
    apply = Edits.apply

    def intended(self: Editor) -> tuple[dict[str, Any], dict[Any, Any]]:
        want, origin = meant(self)
        if fault is not None:
            fault(want)
        return want, origin

    monkeypatch.setattr(Editor, "intended", intended)
    if fault is None:
        monkeypatch.setattr(
            Edits, "apply", lambda self, raw, nl: apply(self, raw, nl).replace("name: c", "name: d")
        )
    extra = "  publishes:\n    - action: a.b\n"
    assert _refused(BASE.format(inputs="", extra=extra)) == [
        (
            "HZ178",
            "error",
            *where,
            f"the edit would change the contract's meaning: {message}",
            "write that key's value on lines deeper than its key (or on one line), or migrate "
            "it by hand; then migrate again",
        )
    ]


def test_a_read_written_as_a_block_scalar_is_replaced_to_its_end(cli: Cli, tmp_path: Path) -> None:
    """The blank line after it is the block scalar's too (YAML reads it to the next text)."""
    inputs = "  inputs:\n    up:\n      read: >-\n        contract:team/x\n\n      # the row\n"
    front, _ = _hz_block(cli, tmp_path, BASE.format(inputs=inputs, extra="").encode())
    assert front.split("  title: T\n")[1] == (
        '  inputs:\n    up:\n      read: "contract:team-x"\n      # the row\n'
        "  output: {format: markdown}\n" + LIMITS
    )


@pytest.mark.parametrize(
    ("outputs", "output"),
    [
        ("  outputs:\n    draft:\n", "  output: {}\n"),
        ("  outputs:\n    draft: ~  # the digest\n", "  output: {}  # the digest\n"),
        ("  outputs:\n    draft:   # the digest\n", "  output: {}  # the digest\n"),
        ("  outputs: {draft: null}\n", "  output: {}\n"),
        ("  outputs:\n   {draft}\n", "  output:\n   {}\n"),
    ],
    ids=["nothing", "tilde-and-comment", "comment", "flow-null", "flow-key-alone"],
)
def test_an_output_of_no_value_is_hz_s_output_of_the_defaults(
    cli: Cli, tmp_path: Path, outputs: str, output: str
) -> None:
    """``draft:`` with no value became ``output:`` with none (null): HZ103 at validate after
    migrate exited 0; a comment after it was read as the whole value."""
    data = BASE.format(inputs="", extra="").replace(
        "  outputs:\n    draft: {format: markdown}\n", outputs
    )
    front, _ = _hz_block(cli, tmp_path, data.encode())
    assert front == f'---\nname: c\nhz:\n  contract: 1\n  name: "c"\n  title: T\n{output}' + (
        "  timeout: 10m\n  agent:\n    max_usd: 1.0\n"
    )


def test_publishes_past_the_sixteen_an_hz_job_has_are_commented_out(
    cli: Cli, tmp_path: Path
) -> None:
    """Seventeen carried over: HZ104 at validate after migrate had exited 0."""
    extra = "  publishes:\n" + "".join(f"    - action: a{i}\n" for i in range(18))
    front, notes = _hz_block(cli, tmp_path, BASE.format(inputs="", extra=extra).encode())
    assert front.endswith(
        "    - to: command.run\n"
        '      args: {command: "a15"}\n'
        "    # hz migrate: a publish hz cannot carry out\n"
        "    # - action: a16\n"
        "    # hz migrate: a publish hz cannot carry out\n"
        "    # - action: a17\n"
        "  timeout: 10m\n  agent:\n    max_usd: 1.0\n"
    )
    past = [n for n in notes if n[0] == "HZ174"]
    assert past == [
        (
            "HZ174",
            9 + i,
            7,
            f"publish action a{i} is past the 16 publishes an hz job has: commented out",
            "publish from one of the operator's commands that does what several did, or delete "
            "the comment",
        )
        for i in (16, 17)
    ]

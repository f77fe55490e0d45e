"""``hz migrate``'s edits where a key is written otherwise than heinzel's own contracts write
it: publishes and chained inputs with keys hz has no home for, flow style, quoted keys, a null
agent, line ends. Each case: exactly what is reported and written, the result valid and
migrating to itself."""

from __future__ import annotations

from pathlib import Path

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
    many = "tags: [" + ", ".join(["1"] * 9980) + "]\n"
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


def test_a_complex_key_in_a_publish_is_refused_not_guessed_at() -> None:
    extra = "  publishes:\n    - action: a.b\n      ? when\n      : x\n"
    result = migrate(BASE.format(inputs="", extra=extra).encode(), "c.md")
    assert (result.text, [(n.code, n.line, n.column) for n in result.notes]) == (
        None,
        [("HZ178", 3, 1)],
    )


@pytest.mark.parametrize(
    ("outputs", "output"),
    [
        ("  outputs:\n    draft:\n", "  output: {}\n"),
        ("  outputs:\n    draft: ~  # the digest\n", "  output: {}  # the digest\n"),
        ("  outputs:\n    draft:   # the digest\n", "  output: {}  # the digest\n"),
        ("  outputs: {draft: null}\n", "  output: {}\n"),
    ],
    ids=["nothing", "tilde-and-comment", "comment", "flow-null"],
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

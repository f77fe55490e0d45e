"""``hz migrate``: Heinzelmännchen's contracts (from the heinzel 0.7.19 sdist, and small
hostile ones) converted key by key, reported line by line, idempotent."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion

import hz.compiler.migrate
from hz.compiler.load.markdown import frontmatter_end
from hz.compiler.migrate import migrate
from hz.runtime.artifacts.printable import printable
from tests.conftest import Cli
from tests.helpers.heinzel import CONTRACTS, Contract, original, sdist
from tests.helpers.users import OTHER_UID, SHARED_GID, as_user

IDS = [c.id for c in CONTRACTS]
BY_ID = {c.id: c for c in CONTRACTS}


def _place(tmp_path: Path, contract: Contract) -> Path:
    path = tmp_path / contract.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original(contract), encoding="utf-8")
    return path


@pytest.mark.parametrize("contract", ["weekly-digest", "weekly-report", "team-graph-keeper"])
def test_the_report_of_three_contracts_of_the_sdist(
    cli: Cli, tmp_path: Path, contract: str, snapshot: SnapshotAssertion
) -> None:
    _place(tmp_path, BY_ID[contract])
    done = cli("migrate", BY_ID[contract].path, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    migrated = (tmp_path / BY_ID[contract].path).read_text()
    assert (done.stdout, migrated) == snapshot


@pytest.mark.parametrize("contract", CONTRACTS, ids=IDS)
def test_a_migrated_contract_migrates_to_itself_and_keeps_its_body(
    contract: Contract,
) -> None:
    text = original(contract)
    first = migrate(text.encode(), contract.path)
    assert first.text is not None
    assert not first.failed
    body = text.split("\n---\n", 1)[1]
    assert first.text.split("\n---\n", 1)[1] == body
    # Every comment line of the frontmatter is still there.
    front = text.split("\n---\n", 1)[0]
    comments = [line.strip() for line in front.split("\n") if line.lstrip().startswith("#")]
    kept = [line.strip() for line in first.text.split("\n---\n", 1)[0].split("\n")]
    assert [c for c in comments if c not in kept] == []
    second = migrate(first.text.encode(), contract.path)
    assert (second.text, second.notes) == (None, ())


def test_check_exits_1_when_a_file_would_change_and_writes_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    path = _place(tmp_path, BY_ID["tracker-update"])
    before = path.read_bytes()
    done = cli("migrate", ".", "--check", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.endswith(
        "team/workflows/tracker-update.prose.md: would be migrated (3 to decide)\n"
    )
    assert path.read_bytes() == before
    assert cli("migrate", ".", cwd=tmp_path).returncode == 0
    again = cli("migrate", ".", "--check", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (
        0,
        "team/workflows/tracker-update.prose.md: an hz contract already, unchanged\n",
    )


def test_out_writes_beside_the_same_relative_paths(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "heinzel"
    for contract in CONTRACTS:
        _place(source, contract)
    before = {p: p.read_bytes() for p in source.rglob("*.md")}
    done = cli("migrate", str(source), "--out", str(tmp_path / "hz"))
    assert done.returncode == 0, done.stdout
    written = sorted(str(p.relative_to(tmp_path / "hz")) for p in (tmp_path / "hz").rglob("*.md"))
    assert written == sorted(c.path for c in CONTRACTS)
    assert {p: p.read_bytes() for p in source.rglob("*.md")} == before


def test_a_placeholder_left_in_a_template_is_a_located_error(cli: Cli, tmp_path: Path) -> None:
    template = "tests/fixtures/playbook/templates/weekly-report.prose.md"
    path = tmp_path / "weekly-report.prose.md"
    path.write_bytes((sdist() / template).read_bytes())
    before = path.read_bytes()
    done = cli("migrate", "weekly-report.prose.md", cwd=tmp_path)
    assert done.returncode == 1
    decide = (
        "  decide: fill it with the asset's reference (Heinzelmännchen's `new --asset`) "
        "before migrating\n"
    )
    expected = "".join(
        f"weekly-report.prose.md:{where}: error: the template placeholder "
        f"{{{{asset:{asset}}}}} was never filled [HZ176]\n" + decide
        for where, asset in [
            ("26:27", "team-repository"),
            ("30:24", "team-project"),
            ("34:20", "weekly-report"),
            ("37:20", "team-tracker"),
        ]
    )
    assert done.stdout == expected + "weekly-report.prose.md: not migrated\n"
    assert path.read_bytes() == before


#: A body hz validate accepts, for contracts whose body is not the point.
BODY = "## Goal\n\nThe status is current.\n\n## Done when\n\n- [ ] Done.\n"

HEINZEL = """\
---
name: status
hz:
  schema: 1
  title: Status
  scope: personal
  outputs:
{outputs}
  agent:
    tools: [Read]
  retries: 2
---

# Status

### Goal

The status is current.

### Done when

- [ ] It names the week.
"""


def test_several_outputs_cannot_be_migrated(cli: Cli, tmp_path: Path) -> None:
    outputs = "    summary: {format: markdown}\n    table: {format: json}"
    (tmp_path / "status.md").write_text(HEINZEL.format(outputs=outputs))
    done = cli("migrate", "status.md", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == (
        "status.md:7:3: error: hz.outputs names 2 outputs; an hz job has one draft [HZ173]\n"
        "  decide: split the contract into one contract per output (one may read another's "
        "draft), or keep one output\n"
        "status.md: not migrated\n"
    )


@pytest.mark.parametrize(
    ("outputs", "what"),
    [("    [status]", "a list of 1 item"), ("    - status\n    - table", "a list of 2 items")],
)
def test_a_list_of_outputs_is_said_to_be_a_list(
    cli: Cli, tmp_path: Path, outputs: str, what: str
) -> None:
    (tmp_path / "status.md").write_text(HEINZEL.format(outputs=outputs))
    done = cli("migrate", "status.md", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == (
        f"status.md:7:3: error: hz.outputs is {what}, not a mapping of named outputs (NAME: "
        "{format: ...}); an hz job has one draft [HZ173]\n"
        "  decide: write hz.outputs as a mapping of one named output, such as "
        "`draft: {format: markdown}`, then migrate again\n"
        "status.md: not migrated\n"
    )


def test_retries_scope_and_a_missing_budget_are_reported(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "status.md").write_text(HEINZEL.format(outputs="    status: {format: markdown}"))
    done = cli("migrate", "status.md", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert done.stdout == (
        "status.md:3:1: decide: hz requires a timeout: timeout: 10m added, Heinzelmännchen's "
        "default [HZ175]\n"
        "  decide: set how long one session of this job may take\n"
        "status.md:4:3: mapped: hz.schema: 1 is hz.contract: 1 [HZ170]\n"
        "status.md:4:3: mapped: hz.name is status, the contract's name [HZ170]\n"
        "status.md:6:3: decide: hz.scope has no counterpart in hz: commented out [HZ174]\n"
        "  decide: keep the intent in the body's prose, or delete the comment\n"
        "status.md:7:3: mapped: hz.outputs.status is hz.output: the job's one draft (the name "
        "status is gone) [HZ170]\n"
        "status.md:9:3: decide: hz requires a budget: agent.max_usd: 1.0 added, "
        "Heinzelmännchen's default cap ([heinzel] max_usd) [HZ175]\n"
        "  decide: set the most one run of this job may cost\n"
        "status.md:11:3: decide: retries: 2 has no counterpart: hz starts a run at most once and "
        "never repeats a failed one by itself (its cost would count again); commented out "
        "[HZ174]\n"
        "  decide: start a failed run again by hand or from CI, or accept one attempt\n"
        "status.md: migrated to status.md (4 to decide)\n"
    )
    assert (tmp_path / "status.md").read_text().split("\n---\n")[0] == (
        "---\n"
        "name: status\n"
        "hz:\n"
        "  contract: 1\n"
        '  name: "status"\n'
        "  title: Status\n"
        "  # hz migrate: hz has no hz.scope\n"
        "  # scope: personal\n"
        "  output: {format: markdown}\n"
        "  agent:\n"
        "    tools: [Read]\n"
        "    max_usd: 1.0\n"
        "  # hz migrate: hz starts a run at most once\n"
        "  # retries: 2\n"
        "  timeout: 10m"
    )
    assert cli("validate", "status.md", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (
            b"---\nhz:\n  schema: 1\n",
            "status.md:1:1: error: the frontmatter opened on line 1 is never closed [HZ015]",
        ),
        (b"---\nhz: {schema: 1\n---\n", "status.md:3:1: error:"),
        (b"---\nhz:\n  schema: \xff\n---\n", "status.md:3:"),
    ],
    ids=["unterminated", "yaml-error", "not-utf8"],
)
def test_a_broken_file_is_a_located_error_not_a_crash(
    cli: Cli, tmp_path: Path, data: bytes, line: str
) -> None:
    (tmp_path / "status.md").write_bytes(data)
    done = cli("migrate", "status.md", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith(line)
    assert done.stdout.endswith("status.md: not migrated\n")
    assert (tmp_path / "status.md").read_bytes() == data


def test_a_folder_without_contracts_exits_1(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Notes\n")
    done = cli("migrate", ".", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        1,
        "no contracts found in . (looked for *.md with an hz: frontmatter)\n",
    )
    missing = cli("migrate", "nowhere", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2,
        "hz: error: no such file or directory: nowhere\n",
    )


def test_an_hz_block_in_flow_style_is_left_as_it_is(cli: Cli, tmp_path: Path) -> None:
    data = b"---\nhz: {schema: 1, title: Status, outputs: {status: {format: markdown}}}\n---\n"
    (tmp_path / "status.md").write_bytes(data)
    done = cli("migrate", "status.md", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        1,
        "status.md:2:1: error: the hz: block is written in a way hz migrate does not edit "
        "(flow style, or a key sharing another's line): the result would not read back "
        "[HZ178]\n"
        "  decide: write the hz: block one key per line (block style), then migrate again\n"
        "status.md: not migrated\n",
    )
    assert (tmp_path / "status.md").read_bytes() == data


def test_a_look_ahead_window_of_an_own_operation_is_left_to_decide() -> None:
    text = (
        "---\nhz:\n  schema: 1\n  title: Agenda\n  inputs:\n    meetings:\n"
        "      read: meetings.upcoming\n      window: next 7d\n"
        "  outputs:\n    agenda: {format: markdown}\n---\n" + BODY
    )
    notes = migrate(text.encode(), "agenda.md").notes
    assert [
        (n.code, n.line, n.column, n.message) for n in notes if n.code in ("HZ171", "HZ172")
    ] == [
        (
            "HZ171",
            7,
            7,
            "meetings.upcoming is not an operation of hz's providers: it stays as written, "
            "for the operator's command provider",
        ),
        (
            "HZ172",
            8,
            15,
            "hz reads this input otherwise than Heinzelmännchen did: hz.inputs.meetings.window: "
            "'next 7d' is not a window: write a count and a unit (m, h, d or w) such as '24h', "
            "'7d' or '2w', or 'since-last-success'",
        ),
    ]


def test_a_last_window_is_hz_s_window_back_from_the_run(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "digest.md").write_text(
        "---\nhz:\n  schema: 1\n  title: Digest\n  inputs:\n"
        "    merged: {read: code-host.merged_pull_requests, args: {repository: acme/app}, "
        "window: last 7d}\n  outputs:\n    digest: {format: markdown}\n"
        "  agent: {max_usd: 0.5}\n  timeout: 5m\n---\n\n"
        "### Goal\n\nA digest of `inputs.merged`.\n\n### Done when\n\n- Done.\n"
    )
    done = cli("migrate", "digest.md", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert (
        "digest.md:6:82: mapped: window: last 7d is window: 7d (back from the run) [HZ170]\n"
        "digest.md:7:3: mapped: hz.outputs.digest" in done.stdout
    )
    assert "window: 7d}" in (tmp_path / "digest.md").read_text()
    assert cli("validate", "digest.md", cwd=tmp_path).returncode == 0


def test_a_problem_on_a_line_the_migration_edited_stands_at_hz() -> None:
    """The edited line is not the original's: the note stands at hz: and shows the line."""
    text = "---\nhz:\n  schema: 1\n  title: T\n  outputs: {draft: markdown}\n---\n" + BODY
    assert [
        (n.code, n.kind, n.line, n.column, n.message) for n in migrate(text.encode(), "t.md").notes
    ] == [
        (
            "HZ103",
            "error",
            2,
            1,
            "migrated, the file would fail hz validate (line 6, column 11 of the migrated file: "
            "output: markdown): hz.output: expected a mapping, got a string ('markdown')",
        )
    ]


def test_a_window_hz_cannot_read_is_left_to_decide_once_at_its_own_line(
    cli: Cli, tmp_path: Path
) -> None:
    """'last &a' is migrated to "&a", which hz validate refuses (HZ412): reported once, as the
    decision it is (HZ172) at the original's line, and not again by the safety net."""
    text = (
        "---\nhz:\n  schema: 1\n  title: Digest\n  inputs:\n    merged:\n"
        "      read: code-host.merged_pull_requests\n      args: {repository: acme/app}\n"
        "      window: 'last &a'\n  outputs:\n    digest: {format: markdown}\n"
        "  agent: {max_usd: 0.5}\n  timeout: 5m\n---\n" + BODY.replace("current", "`merged`")
    )
    (tmp_path / "digest.md").write_text(text)
    done = cli("migrate", "digest.md", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert [line for line in done.stdout.splitlines() if "HZ172" in line or "HZ412" in line] == [
        "digest.md:9:15: decide: hz reads this input otherwise than Heinzelmännchen did: "
        "hz.inputs.merged.window: '&a' is not a window: write a count and a unit (m, h, d or "
        "w) such as '24h', '7d' or '2w', or 'since-last-success' [HZ172]"
    ]
    assert '      window: "&a"\n' in (tmp_path / "digest.md").read_text()
    checked = cli("validate", "digest.md", cwd=tmp_path)
    assert checked.returncode == 1
    assert "digest.md:10:15: error: hz.inputs.merged.window: '&a' is not a window" in (
        checked.stdout
    )


def test_a_link_is_not_followed_and_inputs_without_read_stay(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "status.md").write_text(
        HEINZEL.format(outputs="    status: {format: markdown}").replace(
            "  scope: personal\n", "  inputs:\n    week: {schema: {type: string}}\n"
        )
    )
    (tmp_path / "link.md").symlink_to(tmp_path / "status.md")
    done = cli("migrate", "link.md", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "hz: error: link.md is a symbolic link: hz migrate edits files only\n"
    assert (tmp_path / "link.md").is_symlink()
    assert cli("migrate", "status.md", cwd=tmp_path).returncode == 0
    assert "    week: {schema: {type: string}}\n" in (tmp_path / "status.md").read_text()


def test_crlf_line_ends_and_a_byte_order_mark_are_kept(cli: Cli, tmp_path: Path) -> None:
    text = HEINZEL.format(outputs="    status: {format: markdown}")
    data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    (tmp_path / "status.md").write_bytes(data)
    assert cli("migrate", "status.md", cwd=tmp_path).returncode == 0
    migrated = (tmp_path / "status.md").read_bytes()
    assert migrated.startswith(b"\xef\xbb\xbf---\r\nname: status\r\nhz:\r\n  contract: 1\r\n")
    assert migrated.count(b"\n") == migrated.count(b"\r\n")
    assert migrated.endswith(text.split("\n---\n", 1)[1].replace("\n", "\r\n").encode())
    again = cli("migrate", "status.md", "--check", cwd=tmp_path)
    assert again.returncode == 0


@pytest.mark.parametrize(
    ("option", "name"),
    [
        ([], "team-status"),
        (["--namespace", "me"], "me-status"),
        (["--namespace", "none"], "status"),
    ],
)
def test_the_namespace_comes_from_the_folder_or_the_option(
    cli: Cli, tmp_path: Path, option: list[str], name: str
) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "status.md").write_text(HEINZEL.format(outputs="    s: {format: json}"))
    assert cli("migrate", "team/status.md", *option, cwd=tmp_path).returncode == 0
    assert f'\n  name: "{name}"\n' in (tmp_path / "team" / "status.md").read_text()


def test_what_hz_validate_would_refuse_is_a_located_error_not_written(
    cli: Cli, tmp_path: Path
) -> None:
    """The safety net: migrated, inputs: [merged] and a body without sections failed
    hz validate (HZ103, HZ111) after migrate had exited 0."""
    text = "---\nhz:\n  schema: 1\n  title: T\n  inputs: [merged]\n  outputs:\n    t: {}\n---\nb\n"
    (tmp_path / "t.md").write_text(text)
    for argv in (["t.md", "--check"], ["t.md"]):
        done = cli("migrate", *argv, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (
            1,
            "t.md:5:11: error: migrated, the file would fail hz validate (line 6, column 11 of "
            "the migrated file: inputs: [merged]): hz.inputs: expected a mapping, got a list "
            "[HZ103]\n"
            "  decide: change the original so that hz validate passes its migration, then "
            "migrate again\n"
            "t.md:9:1: error: migrated, the file would fail hz validate (line 12, column 1 of the "
            "migrated file: b): a Markdown contract without a prompt needs a '## Done when' "
            "section [HZ111]\n"
            "  decide: change the original so that hz validate passes its migration (hz "
            "validate's hint: add a heading '## Done when' and what belongs under it), then "
            "migrate again\n"
            "t.md:9:1: error: migrated, the file would fail hz validate (line 12, column 1 of the "
            "migrated file: b): a Markdown contract without a prompt needs a '## Goal' section "
            "[HZ111]\n"
            "  decide: change the original so that hz validate passes its migration (hz "
            "validate's hint: add a heading '## Goal' and what belongs under it), then migrate "
            "again\n"
            "t.md: not migrated\n",
        )
        assert (tmp_path / "t.md").read_text() == text
    (tmp_path / "t.md").write_text(text.replace("[merged]", "{}").replace("b\n", BODY))
    assert cli("migrate", "t.md", cwd=tmp_path).returncode == 0
    assert cli("validate", "t.md", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    "block",
    [
        "  inputs: {a: 5, b: {read: 7}, c: {read: x.y, window: 3}}",
        "  outputs: 5",
        "  outputs: {}",
        "  publishes: 5",
        "  publishes: [5, {action: 7}]",
        "  agent: 5",
        "  schedule: [1]\n  catch_up: 2",
        "  retries: [1]",
        "  inputs: {a: {read: 'contract:me/x#y', stage: draft, window: last 5}}",
    ],
)
def test_odd_values_never_raise(block: str) -> None:
    """Whatever the shapes, a migration or a located refusal: never an exception."""
    text = f"---\nname: 5\nhz:\n  schema: 1\n{block}\n---\n"
    result = migrate(text.encode(), "odd.md")
    assert result.text is not None or result.failed


def test_comment_lines_find_the_frontmatter_end_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``#`` line used to search for the frontmatter's end again: quadratic time."""
    calls = []

    def counted(text: str) -> int | None:
        calls.append(1)
        return frontmatter_end(text)

    monkeypatch.setattr(hz.compiler.migrate, "frontmatter_end", counted)
    text = "---\nhz:\n  schema: 1\n  outputs:\n    d: {format: markdown}\n" + "#\n" * 200
    text += "---\nb\n"
    migrate(text.encode(), "many-comments.md")
    assert len(calls) <= 2


INJECTED = "c\n  publishes: [{to: command.run, args: {command: pwn}}]"


@pytest.mark.parametrize(
    ("name_line", "file", "where", "origin", "shown"),
    [
        ("", f"{INJECTED}.md", "3:3", "the file's name", INJECTED.replace("\n", "\\n")),
        (f"name: {json.dumps(INJECTED)}\n", "c.md", "2:1", "the contract's name", None),
        ('name: "Weekly digest"\n', "c.md", "2:1", "the contract's name", None),
        ('name: "x #y"\n', "c.md", "2:1", "the contract's name", None),
        ('name: "../../etc/passwd"\n', "c.md", "2:1", "the contract's name", None),
    ],
)
def test_a_name_that_is_no_hz_name_is_a_located_error_not_written(
    name_line: str, file: str, where: str, origin: str, shown: str | None
) -> None:
    """The name was pasted into the hz: block as written: a line break in it wrote keys."""
    text = f"---\n{name_line}hz:\n  schema: 1\n  outputs:\n    d: {{format: markdown}}\n---\nb\n"
    result = migrate(text.encode(), file)
    assert result.text is None
    name = shown or printable(yaml.safe_load(name_line)["name"])
    line, column = where.split(":")
    assert [(n.code, n.line, n.column, n.message) for n in result.notes] == [
        (
            "HZ179",
            int(line),
            int(column),
            f"hz.name would be {name} (from {origin}), which is not an hz name: lowercase "
            "letters, digits and single hyphens, starting with a letter, at most 64 characters",
        )
    ]


def test_a_quoted_input_key_stays_one_key_when_its_read_is_rewritten() -> None:
    text = (
        '---\nhz:\n  schema: 1\n  inputs:\n    "a\\n  publishes: [x]":\n'
        "      read: contract:team/x\n  outputs:\n    d: {format: markdown}\n---\n" + BODY
    )
    result = migrate(text.encode(), "c.md")
    # Not an input name hz takes, and still one key: no publishes.
    assert [(n.code, n.line, n.column, n.message) for n in result.notes] == [
        (
            "HZ104",
            5,
            5,
            "migrated, the file would fail hz validate (line 6, column 5 of the migrated file: "
            "\"a\\n  publishes: [x]\":): hz.inputs: 'a\\n  publishes: [x]' is not a valid input "
            "name",
        )
    ]


def _files_lines(stdout: str) -> list[str]:
    """The report's lines about whole files: not those of the keys (code) and their decisions."""
    return [
        line
        for line in stdout.splitlines()
        if not line.endswith("]") and not line.startswith("  decide: ")
    ]


@pytest.mark.parametrize("link", ["contracts/team", "contracts/team/status.md"])
def test_out_never_writes_through_a_link_inside_the_output_folder(
    cli: Cli, tmp_path: Path, link: str
) -> None:
    """The repository chose the relative paths and planted a link in the output folder. The
    refusal stopped the run half-way: the files after it were neither written nor reported."""
    for folder, name in (("a", "first"), ("team", "status"), ("zz", "last")):
        (tmp_path / "wf" / folder).mkdir(parents=True)
        (tmp_path / "wf" / folder / f"{name}.md").write_text(
            HEINZEL.format(outputs="    s: {format: json}").replace("name: status", f"name: {name}")
        )
    (tmp_path / "victim").mkdir()
    (tmp_path / link).parent.mkdir(parents=True)
    victim = tmp_path / "victim"
    (tmp_path / link).symlink_to(victim / "status.md" if link.endswith(".md") else victim)
    done = cli("migrate", "wf", "--out", "contracts", "--namespace", "none", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")
    assert _files_lines(done.stdout) == [
        "wf/a/first.md: migrated to contracts/a/first.md (4 to decide)",
        f"wf/team/status.md: error: {link} is a symbolic link inside the output folder: hz "
        "migrate does not write through it",
        "  hint: remove the link, or choose an output folder without links",
        "wf/team/status.md: not migrated",
        "wf/zz/last.md: migrated to contracts/zz/last.md (4 to decide)",
    ]
    assert list((tmp_path / "victim").iterdir()) == []
    assert (tmp_path / link).is_symlink()
    assert "  contract: 1\n" in (tmp_path / "contracts" / "zz" / "last.md").read_text()


def test_a_file_where_the_output_folder_needs_a_folder_is_that_file_s_error(
    cli: Cli, tmp_path: Path
) -> None:
    for name in ("team", "zz"):
        (tmp_path / "wf" / name).mkdir(parents=True)
        (tmp_path / "wf" / name / f"{name}.md").write_text(
            HEINZEL.format(outputs="    s: {}").replace("name: status", f"name: {name}")
        )
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "team").write_text("a file\n")
    done = cli("migrate", "wf", "--out", "contracts", "--namespace", "none", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")
    assert _files_lines(done.stdout) == [
        "wf/team/team.md: error: cannot write contracts/team/team.md: contracts/team is not a "
        "folder",
        "wf/team/team.md: not migrated",
        "wf/zz/zz.md: migrated to contracts/zz/zz.md (4 to decide)",
    ]
    assert (tmp_path / "contracts" / "team").read_text() == "a file\n"


def test_a_link_below_a_folder_of_the_same_name_is_named_where_it_is(
    cli: Cli, tmp_path: Path
) -> None:
    """The walk named the failing folder by its name alone: team/team's link was shown as
    the first team."""
    (tmp_path / "wf" / "team" / "team").mkdir(parents=True)
    (tmp_path / "wf" / "team" / "team" / "status.md").write_text(
        HEINZEL.format(outputs="    s: {}")
    )
    (tmp_path / "contracts" / "team").mkdir(parents=True)
    (tmp_path / "victim").mkdir()
    (tmp_path / "contracts" / "team" / "team").symlink_to(tmp_path / "victim")
    done = cli("migrate", "wf", "--out", "contracts", cwd=tmp_path)
    assert _files_lines(done.stdout)[0] == (
        "wf/team/team/status.md: error: contracts/team/team is a symbolic link inside the "
        "output folder: hz migrate does not write through it"
    )
    assert list((tmp_path / "victim").iterdir()) == []


@pytest.mark.parametrize("out", [[], ["--out", "hz"]])
def test_a_migrated_file_keeps_its_permissions(cli: Cli, tmp_path: Path, out: list[str]) -> None:
    (tmp_path / "status.md").write_text(HEINZEL.format(outputs="    s: {format: json}"))
    (tmp_path / "status.md").chmod(0o600)
    assert cli("migrate", "status.md", *out, cwd=tmp_path).returncode == 0
    written = tmp_path / ("hz/status.md" if out else "status.md")
    assert "  contract: 1\n" in written.read_text()
    assert stat.S_IMODE(written.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("out", "kept"), [([], 0o777), (["--out", "hz"], 0o755)], ids=["in-place", "out"]
)
def test_a_migrated_file_is_never_setuid_setgid_or_sticky(
    cli: Cli, tmp_path: Path, out: list[str], kept: int
) -> None:
    """The full mode was copied: a 4777 original became a setuid, world-writable file of root.
    In place the permissions stay; a new file in the output folder is made as cp makes one
    (the original's permissions less the umask)."""
    (tmp_path / "status.md").write_text(HEINZEL.format(outputs="    s: {format: json}"))
    (tmp_path / "status.md").chmod(0o7777)
    umask = os.umask(0o022)
    try:
        assert cli("migrate", "status.md", *out, cwd=tmp_path).returncode == 0
    finally:
        os.umask(umask)
    written = tmp_path / ("hz/status.md" if out else "status.md")
    assert "  contract: 1\n" in written.read_text()
    assert oct(stat.S_IMODE(written.stat().st_mode)) == oct(kept)


@pytest.mark.skipif(os.geteuid() != 0, reason="gives files to other users: root only")
def test_in_place_a_file_keeps_its_owner_and_group(cli: Cli, tmp_path: Path) -> None:
    """The rewrite made a new file of whoever ran hz: a contract of another user, migrated by
    root, came back root's, and its owner could no longer edit it."""
    path = tmp_path / "status.md"
    path.write_text(HEINZEL.format(outputs="    s: {format: json}"))
    os.chown(path, OTHER_UID, SHARED_GID)
    path.chmod(0o640)
    assert cli("migrate", "status.md", cwd=tmp_path).returncode == 0
    status = path.stat()
    assert "  contract: 1\n" in path.read_text()
    assert (status.st_uid, status.st_gid, oct(stat.S_IMODE(status.st_mode))) == (
        OTHER_UID,
        SHARED_GID,
        "0o640",
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="acts as another user: root only")
def test_in_place_another_user_s_file_is_not_taken_over(cli: Cli) -> None:
    """A user who may write the folder but is not root replaced another user's contract with
    a file of their own. Now that file is reported, left as it is, and the others migrated."""
    base = Path(tempfile.mkdtemp(prefix="hz-migrate-"))  # pytest's tmp_path is root's 0700
    try:
        base.chmod(0o755)
        folder = base / "wf"
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)
        theirs, mine = folder / "a.md", folder / "b.md"
        contract = HEINZEL.format(outputs="    s: {format: json}")
        theirs.write_text(contract.replace("name: status", "name: a"))
        mine.write_text(contract.replace("name: status", "name: b"))
        os.chown(theirs, OTHER_UID + 1, SHARED_GID)
        os.chown(mine, OTHER_UID, SHARED_GID)
        report = base / "report.txt"
        report.touch()
        os.chown(report, OTHER_UID, SHARED_GID)

        def act() -> int:
            done = cli("migrate", "wf", cwd=base)
            report.write_text(done.stdout + done.stderr)
            return done.returncode

        assert as_user(act) == 1
        assert _files_lines(report.read_text()) == [
            f"wf/a.md: error: cannot write wf/a.md: it is a file of user {OTHER_UID + 1}, and "
            "migrated in place it would become yours",
            "  hint: migrate it as its owner (or as root, which keeps the owner), or with --out",
            "wf/a.md: not migrated",
            "wf/b.md: migrated to wf/b.md (4 to decide)",
        ]
        assert theirs.read_text() == contract.replace("name: status", "name: a")
        assert theirs.stat().st_uid == OTHER_UID + 1
        assert mine.stat().st_uid == OTHER_UID
        assert sorted(p.name for p in folder.iterdir()) == ["a.md", "b.md"]
        # A folder it may not list is reported, not passed over as if it held nothing.
        (folder / "private").mkdir(mode=0o700)
        assert as_user(act) == 1
        assert _files_lines(report.read_text()) == [
            f"wf/a.md: error: cannot write wf/a.md: it is a file of user {OTHER_UID + 1}, and "
            "migrated in place it would become yours",
            "  hint: migrate it as its owner (or as root, which keeps the owner), or with --out",
            "wf/a.md: not migrated",
            "wf/b.md: an hz contract already, unchanged",
            "wf/private: error: cannot list wf/private: Permission denied",
            "wf/private: not migrated",
        ]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_file_gone_after_the_listing_is_reported_and_the_others_migrated(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that could not be read stopped the whole run (exit 2), the others unreported."""
    import hz.cli.migrate.reading

    contract = HEINZEL.format(outputs="    s: {format: json}")
    (tmp_path / "wf").mkdir()
    (tmp_path / "wf" / "a.md").write_text(contract.replace("name: status", "name: a"))
    (tmp_path / "wf" / "b.md").write_text(contract.replace("name: status", "name: b"))
    listed = hz.cli.migrate.reading.files

    def remove(target: Path) -> object:
        found = listed(target)
        (tmp_path / "wf" / "a.md").unlink()
        return found

    monkeypatch.setattr(hz.cli.migrate.reading, "files", remove)
    done = cli("migrate", "wf", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")
    assert _files_lines(done.stdout) == [
        "wf/a.md: error: cannot read wf/a.md: No such file or directory",
        "wf/a.md: not migrated",
        "wf/b.md: migrated to wf/b.md (4 to decide)",
    ]


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("a" * 5000, "File name too long"),
        ("loop/status.md", "Too many levels of symbolic links"),
        ("status.md/x.md", "Not a directory"),
    ],
    ids=["too-long", "loop", "not-a-folder"],
)
def test_a_target_that_cannot_be_looked_at_is_an_error_naming_it(
    cli: Cli, tmp_path: Path, target: str, why: str
) -> None:
    """A name too long was an unexpected error (exit 3); a loop of links or a file on the
    way was "no such file or directory"."""
    (tmp_path / "status.md").write_text(HEINZEL.format(outputs="    s: {format: json}"))
    (tmp_path / "loop").symlink_to("loop")
    done = cli("migrate", target, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"hz: error: cannot read {target}: {why}\n"


def test_a_folder_too_deep_to_list_is_reported_and_a_file_too_deep_to_look_at_migrated(
    cli: Cli, tmp_path: Path
) -> None:
    """Below a path of PATH_MAX: a folder is reported as not migrated, not passed over; a
    file is migrated all the same (read and written by descriptor)."""
    (tmp_path / "wf").mkdir()
    fd = os.open(tmp_path / "wf", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(20):
        os.mkdir("d" * 200, dir_fd=fd)
        inner = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    try:
        os.mkdir("e" * 100, dir_fd=fd)
        handle = os.open("s" * 100 + ".md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        with os.fdopen(handle, "w") as f:
            f.write(HEINZEL.format(outputs="    s: {format: json}"))
        done = cli("migrate", "wf", cwd=tmp_path)
        deep = "wf/" + "/".join(["d" * 200] * 20)
        assert (done.returncode, done.stderr) == (1, "")
        assert _files_lines(done.stdout) == [
            f"{deep}/{'s' * 100}.md: migrated to {deep}/{'s' * 100}.md (4 to decide)",
            f"{deep}/{'e' * 100}: error: cannot list {deep}/{'e' * 100}: File name too long",
            f"{deep}/{'e' * 100}: not migrated",
        ]
        with os.fdopen(os.open("s" * 100 + ".md", os.O_RDONLY, dir_fd=fd)) as f:
            assert "  contract: 1\n" in f.read()
    finally:
        os.close(fd)


def test_a_target_that_is_no_file_or_folder_is_an_error_naming_it(cli: Cli, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    done = cli("migrate", "pipe.md", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "hz: error: pipe.md is neither a file nor a folder: hz migrate edits files only\n"
    )


@pytest.mark.parametrize(
    ("line", "where", "shown"),
    [
        ("  title: T\u2028  bogus: 1\n", (4, 11), "U+2028 (line separator)"),
        ('  title: "T\u0085x"\n', (4, 12), "U+0085 (next line)"),
        ("# note\u2029# more\n", (2, 7), "U+2029 (paragraph separator)"),
    ],
)
def test_a_yaml_line_break_besides_newline_is_a_located_error(
    line: str, where: tuple[int, int], shown: str
) -> None:
    """YAML breaks lines at these, the line edits did not: an IndexError (exit 3) or edits
    landing a line low."""
    head = line if line.startswith("#") else ""
    body = "" if head else line
    text = f"---\n{head}hz:\n  schema: 1\n{body}  outputs:\n    d: {{format: markdown}}\n---\nb\n"
    result = migrate(text.encode(), "c.md")
    assert result.text is None
    assert [(n.code, n.line, n.column, n.message) for n in result.notes] == [
        (
            "HZ178",
            *where,
            f"the frontmatter holds the character {shown}, which YAML reads as a line break: hz "
            "migrate edits the frontmatter line by line and does not edit it",
        )
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ('"latest, timezone: Pacific/Kiritimati"', '"latest, timezone: Pacific/Kiritimati"'),
        ("true", "true"),
    ],
)
def test_a_catch_up_hz_does_not_know_is_left_to_decide_not_pasted(value: str, shown: str) -> None:
    """Pasted into the schedule's flow mapping, it wrote a time zone of its own choosing."""
    text = (
        "---\nhz:\n  schema: 1\n  outputs:\n    d: {format: markdown}\n"
        f'  schedule: "0 7 * * MON"\n  catch_up: {value}\n---\n' + BODY
    )
    result = migrate(text.encode(), "c.md")
    assert result.text is not None
    assert '\n  schedule: "0 7 * * MON"\n' in result.text
    assert f"\n  # hz migrate: not one of latest, all or skip\n  # catch_up: {value}\n" in (
        result.text
    )
    assert [(n.kind, n.line, n.message, n.decide) for n in result.notes if n.code == "HZ174"] == [
        (
            "decide",
            7,
            f"catch_up: {shown} is not one of hz's (latest, all or skip): commented out",
            "write schedule: {cron: …, catch_up: latest|all|skip}, or leave hz's default (latest)",
        )
    ]
    assert "timezone" not in yaml.safe_load(result.text.split("---\n")[1])["hz"]["schedule"]


def _clash(path: str, name: str, other: str) -> str:
    return (
        f"{path}:2:1: error: hz.name would be {name}, the name of {other} too: two jobs of one "
        "name are one job [HZ180]\n"
        "  decide: give one of them a top-level `name` of its own, then migrate again\n"
        f"{path}: not migrated\n"
    )


@pytest.mark.parametrize(
    ("files", "option", "name"),
    [
        (["team/status.md", "team/status.prose.md"], [], "team-status"),
        (["team/a.md", "team/b.md"], [], "team-status"),
        (["me/status.md", "team/status.md"], ["--namespace", "none"], "status"),
    ],
    ids=["md-beside-prose-md", "one-name-in-one-namespace", "namespace-none"],
)
def test_two_contracts_of_one_hz_name_are_reported_with_both_paths(
    cli: Cli, tmp_path: Path, files: list[str], option: list[str], name: str
) -> None:
    """Both were migrated to one hz.name (exit 0): two jobs that are one."""
    for file in files:
        (tmp_path / file).parent.mkdir(exist_ok=True)
        (tmp_path / file).write_text(HEINZEL.format(outputs="    s: {format: json}"))
    first, second = files
    check = cli("migrate", ".", "--check", *option, cwd=tmp_path)
    assert check.returncode == 1
    assert check.stdout.endswith(
        f"{first}: would be migrated (4 to decide)\n" + _clash(second, name, first)
    )
    done = cli("migrate", ".", *option, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.endswith(_clash(second, name, first))
    assert "  schema: 1\n" in (tmp_path / second).read_text()
    # The first is an hz contract now and keeps its name; the second still may not take it.
    again = cli("migrate", ".", "--check", *option, cwd=tmp_path)
    assert (again.returncode, again.stdout) == (
        1,
        f"{first}: an hz contract already, unchanged\n" + _clash(second, name, first),
    )


def test_in_place_never_writes_through_a_folder_swapped_for_a_link(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewrite went by path: a folder replaced by a link after the listing was followed."""
    import hz.cli.migrate.names

    (tmp_path / "wf" / "team").mkdir(parents=True)
    contract = HEINZEL.format(outputs="    s: {format: json}")
    (tmp_path / "wf" / "team" / "status.md").write_text(contract)
    (tmp_path / "victim").mkdir()
    listed = hz.cli.migrate.names.collisions

    def swap(results: list[hz.compiler.migrate.Migration], *names: object) -> object:
        (tmp_path / "wf" / "team").rename(tmp_path / "moved")
        (tmp_path / "wf" / "team").symlink_to(tmp_path / "victim")
        return listed(results, *names)

    monkeypatch.setattr(hz.cli.migrate.names, "collisions", swap)
    done = cli("migrate", "wf", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")
    assert _files_lines(done.stdout) == [
        "wf/team/status.md: error: wf/team is a symbolic link inside the folder being migrated: "
        "hz migrate does not write through it",
        "  hint: it became a link after hz migrate listed the folder: see what made it, then "
        "migrate again",
        "wf/team/status.md: not migrated",
    ]
    assert list((tmp_path / "victim").iterdir()) == []
    assert (tmp_path / "moved" / "status.md").read_text() == contract


@pytest.mark.parametrize("swapped", ["wf/team", "wf/team/status.md"])
def test_a_folder_or_file_swapped_for_a_link_after_the_listing_is_not_read(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
) -> None:
    """The reads went by path: what the link pointed at was read, migrated and written into
    the output folder as if it were the repository's."""
    import hz.cli.migrate.reading

    (tmp_path / "wf" / "team").mkdir(parents=True)
    (tmp_path / "wf" / "team" / "status.md").write_text(HEINZEL.format(outputs="    s: {}"))
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "status.md").write_text(
        HEINZEL.format(outputs="    s: {}").replace("Status", "Planted")
    )
    listed = hz.cli.migrate.reading.files

    def swap(target: Path) -> object:
        found = listed(target)
        (tmp_path / swapped).rename(tmp_path / "moved")
        (tmp_path / swapped).symlink_to(tmp_path / "victim" / Path(swapped).relative_to("wf/team"))
        return found

    monkeypatch.setattr(hz.cli.migrate.reading, "files", swap)
    done = cli("migrate", "wf", "--out", "out", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout == (
        f"wf/team/status.md: error: {swapped} is a symbolic link inside the folder being "
        "migrated: hz migrate does not read through it\n"
        "  hint: it became a link after hz migrate listed the folder: see what made it, then "
        "migrate again\n"
        "wf/team/status.md: not migrated\n"
    )
    assert not (tmp_path / "out").exists()


def test_out_checks_the_names_of_the_hz_contracts_already_there(cli: Cli, tmp_path: Path) -> None:
    """The clash check saw one run only: a contract migrated into a folder that holds an hz
    contract of that name already was written beside it (two jobs of one name)."""
    (tmp_path / "wf" / "team").mkdir(parents=True)
    (tmp_path / "wf" / "team" / "status.md").write_text(HEINZEL.format(outputs="    s: {}"))
    assert cli("migrate", "wf", "--out", "contracts", cwd=tmp_path).returncode == 0
    # Migrated again into the same folder: the copy it replaces is no clash.
    again = cli("migrate", "wf", "--out", "contracts", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    (tmp_path / "contracts" / "team").rename(tmp_path / "contracts" / "old")
    # A Heinzelmännchen contract there holds no name.
    (tmp_path / "contracts" / "heinzel.md").write_text(HEINZEL.format(outputs="    s: {}"))
    for argv in (["wf"], ["wf/team/status.md"]):
        done = cli("migrate", *argv, "--out", "contracts", cwd=tmp_path)
        assert (done.returncode, done.stdout) == (
            1,
            _clash("wf/team/status.md", "team-status", "contracts/old/status.md"),
        )
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.md")) == [
        "contracts/heinzel.md",
        "contracts/old/status.md",
        "wf/team/status.md",
    ]


def test_out_inside_the_folder_migrated_is_no_clash_with_itself(cli: Cli, tmp_path: Path) -> None:
    """The second run found the first one's copy as an hz contract of that name: HZ180 on a
    file against its own migration."""
    (tmp_path / "wf" / "team").mkdir(parents=True)
    (tmp_path / "wf" / "team" / "status.md").write_text(HEINZEL.format(outputs="    s: {}"))
    assert cli("migrate", "wf", "--out", "wf/hz", cwd=tmp_path).returncode == 0
    again = cli("migrate", "wf", "--out", "wf/hz", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert again.stdout.startswith("wf/hz/team/status.md: an hz contract already, unchanged\n")
    assert again.stdout.endswith(
        "wf/team/status.md: wf/hz/team/status.md is up to date (4 to decide)\n"
    )


def test_a_name_that_is_not_utf8_is_shown_as_hz_validate_shows_it(cli: Cli, tmp_path: Path) -> None:
    """Every hz report writes a byte of a file name that is not UTF-8 as the escape of the
    character Python decodes it to (``\\udcff`` for 0xff): the migration's report names the
    file, its destination and a clash exactly as ``hz validate`` names the file."""
    folder = os.fsdecode(b"wf\xff")
    name = os.fsdecode(b"\xfe.md")
    (tmp_path / folder).mkdir()
    (tmp_path / folder / name).write_text(HEINZEL.format(outputs="    s: {format: json}"))
    shown = "wf\\udcff/\\udcfe.md"
    check = cli("migrate", folder, "--check", cwd=tmp_path)
    assert (check.returncode, _files_lines(check.stdout)) == (
        1,
        [f"{shown}: would be migrated (4 to decide)"],
    )
    assert {line.split(":")[0] for line in check.stdout.splitlines()} - {"  decide"} == {shown}
    done = cli("migrate", folder, "--out", os.fsdecode(b"out\xfd"), cwd=tmp_path)
    assert (done.returncode, _files_lines(done.stdout)) == (
        0,
        [f"{shown}: migrated to out\\udcfd/\\udcfe.md (4 to decide)"],
    )
    # hz validate names the file (still a Heinzelmännchen contract) as the report does.
    validated = cli("validate", os.path.join(folder, name), cwd=tmp_path)
    assert validated.stdout.splitlines()[0] == (
        f"{shown}:4:3: error: this is a Heinzelmännchen contract (hz.schema, hz.outputs), not "
        "an hz contract [HZ105]"
    )
    assert f"{shown}:4:3: mapped: hz.schema: 1 is hz.contract: 1 [HZ170]" in check.stdout
    # Another contract of that name: the clash names the file there the same way.
    (tmp_path / "b.md").write_text(HEINZEL.format(outputs="    s: {format: json}"))
    clash = cli("migrate", "b.md", "--out", os.fsdecode(b"out\xfd"), cwd=tmp_path)
    assert (clash.returncode, clash.stdout) == (
        1,
        "b.md:2:1: error: hz.name would be status, the name of out\\udcfd/\\udcfe.md too: two "
        "jobs of one name are one job [HZ180]\n"
        "  decide: give one of them a top-level `name` of its own, then migrate again\n"
        "b.md: not migrated\n",
    )

"""The draft is the model's output: each target takes it as data. Size caps, neutralised
mentions and slash commands, no HTML that hides text, JSON checked, no path tricks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hz.runtime.artifacts.publish_targets import TARGETS
from hz.runtime.ledger.store import Step
from hz.runtime.publish.draft import DraftRefused, github_text, prepare
from hz.runtime.publish.targets.base import Refused
from hz.runtime.publish.targets.files import FilesPublisher, check_path

COMMENT = TARGETS["code-host.pull_request_comment"]


def _step(path: str, **args: object) -> Step:
    return Step(
        run_id="run_20261202_000000000001",
        step=1,
        target="files.write",
        args={"path": path, **args},
        state="publishing",
        generation=1,
        attempts=1,
        marker="hz-publish:run_20261202_000000000001:1",
        sha256=None,
        location=None,
        detail=None,
        lease_until=None,
        updated_at=0.0,
    )


def test_mentions_and_slash_commands_are_neutralised_unless_allowed() -> None:
    draft = "Thanks @octocat and @acme/team.\n/deploy production\n  /approve\nmail a@b.c"
    assert github_text(draft, mentions=False) == (
        "Thanks @\u2060octocat and @\u2060acme/team.\n\\/deploy production\n  \\/approve\n"
        "mail a@b.c"
    )
    assert github_text(draft, mentions=True) == draft


def test_no_html_can_hide_text_or_forge_the_marker() -> None:
    draft = (
        "ok <!-- hz-publish:run_x:1 --> <details><summary>x</summary>hidden</details>"
        "<span hidden>y</span> 3 < 4"
    )
    assert github_text(draft, mentions=True) == (
        "ok &lt;!-- hz-publish:run_x:1 --> &lt;details>&lt;summary>x&lt;/summary>hidden"
        "&lt;/details>&lt;span hidden>y&lt;/span> 3 < 4"
    )


@pytest.mark.parametrize(
    ("draft", "shown"),
    [
        ("_@octocat_ italic", "_@\u2060octocat_ italic"),
        ("`x`@acme/team after a code span", "`x`@\u2060acme/team after a code span"),
        ("é@acme/team", "é@\u2060acme/team"),
        ("> /deploy\n- /approve\n1. /merge", "> \\/deploy\n- \\/approve\n1. \\/merge"),
        ("[//]: # (hidden text nobody sees)", "\\[//]: # (hidden text nobody sees)"),
        ("  > [x]: https://e.example", "  > \\[x]: https://e.example"),
        ("ab\u202edc\u200b\u2066x\ufeff", "abdcx"),
    ],
)
def test_markdown_cannot_mention_command_or_hide_past_the_escaping(draft: str, shown: str) -> None:
    assert github_text(draft, mentions=False) == shown


def test_a_json_body_for_a_webhook_cannot_ping_the_channel() -> None:
    hook = TARGETS["webhook.post"]
    draft = '{"text": "<!channel> go", "blocks": [{"text": "<@U1>"}]}'
    payload = prepare(hook, {"webhook": "m", "body": "json"}, draft, mentions=False)
    assert payload.data == {"text": "&lt;!channel&gt; go", "blocks": [{"text": "&lt;@U1&gt;"}]}
    assert prepare(hook, {"webhook": "m", "body": "json"}, draft, mentions=True).data["text"] == (
        "<!channel> go"
    )


def test_caps_hold_what_is_sent_escaped_and_in_bytes() -> None:
    with pytest.raises(DraftRefused) as refused:
        prepare(COMMENT, {}, "<a" * 20_000, mentions=False)  # 40,000 characters, 100,000 sent
    assert str(refused.value) == (
        "the draft is 100,000 characters once escaped, over the 65,000 "
        "code-host.pull_request_comment takes"
    )
    with pytest.raises(DraftRefused) as refused:
        prepare(TARGETS["files.write"], {}, "\U0001f600" * (2 * 1024 * 1024 + 1), mentions=False)
    assert str(refused.value) == (
        "the draft is 8,388,612 bytes, over the 8,388,608 files.write takes"
    )
    status = TARGETS["code-host.commit_status"]
    with pytest.raises(DraftRefused) as refused:
        prepare(status, {}, "<b" * 60 + "\nrest", mentions=False)  # 120 characters, 300 sent
    assert str(refused.value) == (
        "the draft is 300 characters once escaped, over the 140 code-host.commit_status takes"
    )
    assert prepare(status, {}, "All green.\nthe rest", mentions=False).text == "All green."


def test_a_draft_over_the_targets_cap_is_refused_not_cut() -> None:
    with pytest.raises(DraftRefused) as refused:
        prepare(COMMENT, {}, "x" * 65_001, mentions=False)
    assert str(refused.value) == (
        "the draft is 65,001 characters, over the 65,000 code-host.pull_request_comment takes"
    )
    assert prepare(COMMENT, {}, "x" * 65_000, mentions=False).text == "x" * 65_000


def test_an_invalid_json_draft_is_not_published() -> None:
    hook = TARGETS["webhook.post"]
    with pytest.raises(DraftRefused) as refused:
        prepare(hook, {"webhook": "m", "body": "json"}, '{"a": 1,}', mentions=False)
    assert str(refused.value).startswith("the draft is not valid JSON (")
    assert str(refused.value).endswith("); nothing was sent")
    assert prepare(hook, {"webhook": "m", "body": "json"}, '{"a": 1}', mentions=False).data == {
        "a": 1
    }


def test_a_slack_text_cannot_ping_the_channel() -> None:
    payload = prepare(TARGETS["webhook.post"], {"webhook": "m"}, "<!channel> a & b", mentions=False)
    assert payload.data == {"text": "&lt;!channel&gt; a &amp; b"}


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (
            "../etc/passwd",
            "files.write: '../etc/passwd' must name a file without '.' or '..' parts",
        ),
        (
            "reports/../../x",
            "files.write: 'reports/../../x' must name a file without '.' or '..' parts",
        ),
        ("/etc/passwd", "files.write: '/etc/passwd' must be a relative path"),
        (
            "other/x.md",
            "files.write: 'other/x.md' is in no folder [publish] folders allows (reports)",
        ),
        ("reports", "files.write: 'reports' is in no folder [publish] folders allows (reports)"),
        (
            "reports/a\nb.md",
            "files.write: 'reports/a\\nb.md' has characters that are not printable",
        ),
        (
            "reports/a\x1b[31m.md",
            "files.write: 'reports/a\\x1b[31m.md' has characters that are not printable",
        ),
        (
            "reports/" + "x" * 201,
            f"files.write: a name in 'reports/{'x' * 201}' is longer than 200 bytes",
        ),
    ],
)
def test_path_tricks_are_refused(tmp_path: Path, path: str, why: str) -> None:
    with pytest.raises(Refused) as refused:
        check_path(path, ("reports",), tmp_path)
    assert str(refused.value) == why


def test_a_link_inside_the_folder_does_not_lead_out(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "reports" / "week").symlink_to(outside)
    publisher = FilesPublisher(("reports",), tmp_path, overwrite=False)
    payload = prepare(TARGETS["files.write"], {}, "text", mentions=False)
    with pytest.raises(Refused) as refused:
        publisher.write(_step("reports/week/a.md"), payload)
    assert (
        str(refused.value)
        == f"files.write: 'week' under {tmp_path}/reports is a link or not a folder"
    )
    assert list(outside.iterdir()) == []


def test_a_folder_that_is_itself_a_link_is_never_written_through(tmp_path: Path) -> None:
    """The project's checkout commits ``reports -> /etc/cron.d``: the folder the operator
    allows is itself the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "reports").symlink_to(outside)
    publisher = FilesPublisher(("reports",), work, overwrite=False)
    payload = prepare(TARGETS["files.write"], {}, "* * * * * root touch /x", mentions=False)
    why = (
        f"files.write: the folder {work}/reports is reached through a link or is not a folder "
        "('reports'): nothing is written through a link"
    )
    for attempt in (publisher.where, lambda step: publisher.write(step, payload)):
        with pytest.raises(Refused) as refused:
            attempt(_step("reports/evil-cron"))
        assert str(refused.value) == why
    assert publisher.lookup(_step("reports/evil-cron")) is None
    assert list(outside.iterdir()) == []


def test_where_a_file_goes_is_said_as_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "real" / "reports").mkdir(parents=True)
    (tmp_path / "work").symlink_to(tmp_path / "real")  # the operator's own choice: followed
    publisher = FilesPublisher(("reports",), tmp_path / "work", overwrite=False)
    step = _step("reports/a.md")
    real = str(tmp_path / "real" / "reports" / "a.md")
    assert publisher.where(step) == real
    payload = prepare(TARGETS["files.write"], {}, "text", mentions=False)
    assert publisher.write(step, payload) == real
    assert publisher.lookup(step) == real


def test_a_file_is_never_replaced_unless_both_allow_it(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    target = tmp_path / "reports" / "a.md"
    target.write_text("theirs")
    payload = prepare(TARGETS["files.write"], {}, "ours", mentions=False)
    with pytest.raises(Refused):
        FilesPublisher(("reports",), tmp_path, overwrite=True).write(_step("reports/a.md"), payload)
    with pytest.raises(Refused):
        FilesPublisher(("reports",), tmp_path, overwrite=False).write(
            _step("reports/a.md", overwrite=True), payload
        )
    assert target.read_text() == "theirs"
    FilesPublisher(("reports",), tmp_path, overwrite=True).write(
        _step("reports/a.md", overwrite=True), payload
    )
    assert target.read_text() == "ours"
    assert sorted(os.listdir(tmp_path / "reports")) == [".a.md.hz-publish.json", "a.md"]


def test_a_written_file_is_found_by_its_sidecar_or_digest(tmp_path: Path) -> None:
    publisher = FilesPublisher((str(tmp_path / "out"),), tmp_path, overwrite=False)
    (tmp_path / "out").mkdir()
    step = _step("out/deep/a.md")
    assert publisher.lookup(step) is None
    payload = prepare(TARGETS["files.write"], {}, "text", mentions=False)
    assert publisher.write(step, payload) == str(tmp_path / "out" / "deep" / "a.md")
    assert publisher.lookup(step) == str(tmp_path / "out" / "deep" / "a.md")


def test_a_file_that_cannot_be_put_in_place_is_refused_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    (tmp_path / "reports" / "a.md").mkdir(parents=True)  # a folder where the file would go
    payload = prepare(TARGETS["files.write"], {}, "ours", mentions=False)
    publisher = FilesPublisher(("reports",), tmp_path, overwrite=True)
    with pytest.raises(Refused) as refused:
        publisher.write(_step("reports/a.md", overwrite=True), payload)
    assert (
        str(refused.value) == f"files.write: cannot write {tmp_path}/reports/a.md: Is a directory"
    )
    assert sorted(os.listdir(tmp_path / "reports")) == ["a.md"]

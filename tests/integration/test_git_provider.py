"""The git provider against real repositories built by the tests, with the real git CLI."""

from __future__ import annotations

import json
import os
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.operations import CATALOG, Window
from hz.runtime.providers.git import GitProvider, GitSettings
from hz.runtime.providers.protocol import FetchRequest, ProviderError
from tests.helpers.git_repo import DAY, EPOCH, Repo


def _provider(**table: Any) -> GitProvider:
    return GitProvider(GitSettings.from_table(table))


def _request(
    workdir: Path,
    operation: str,
    window: Window | None = None,
    deadline: float = 60.0,
    max_bytes: int = 4 * 1024 * 1024,
    **args: Any,
) -> FetchRequest:
    return FetchRequest(
        CATALOG[operation], args, window, workdir, time.monotonic() + deadline, max_bytes
    )


def _fetch(workdir: Path, operation: str, provider: GitProvider | None = None, **kw: Any) -> Any:
    return (provider or _provider()).fetch(_request(workdir, operation, **kw))


def _error(workdir: Path, operation: str, provider: GitProvider | None = None, **kw: Any) -> Any:
    with pytest.raises(ProviderError) as caught:
        _fetch(workdir, operation, provider, **kw)
    return caught.value.code, str(caught.value), caught.value.hint


def _at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def test_log_gives_hostile_commits_field_by_field(repo: Repo) -> None:
    first = repo.commit("plain\n\nbody line one\nline two\n", files={"a": "a\n"})
    second = repo.commit(
        b"%H%x00%n 100% --output=/tmp/x\n\n\x1b[31mred\x1b[0m %s%b\n",
        author=b"Ev\xffl \xc3\xa9",  # git commit stores it as Latin-1 made UTF-8
        when=EPOCH + 60,
    )
    # Written as is: git prints the byte that is no UTF-8 unchanged, hz decodes it as U+FFFD.
    third = repo.raw_commit(
        b"author Ev\xffl \xc3\xa9 <e\xff@x> 1700000120 +0000\n"
        b"committer C <c@x> 1700000120 +0000\n\nraw\n"
    )
    assert _fetch(repo.path, "git.log") == [
        {
            "commit": third,
            "author": "Ev\ufffdl é",
            "email": "e\ufffd@x",
            "date": "2023-11-14T22:15:20Z",
            "subject": "raw",
            "body": "",
        },
        {
            "commit": second,
            "author": "Evÿl é",
            "email": "ann@example.com",
            "date": "2023-11-14T22:14:20Z",
            "subject": "%H%x00%n 100% --output=/tmp/x",
            "body": "\x1b[31mred\x1b[0m %s%b",
        },
        {
            "commit": first,
            "author": "Ann Author",
            "email": "ann@example.com",
            "date": "2023-11-14T22:13:20Z",
            "subject": "plain",
            "body": "body line one\nline two",
        },
    ]


def test_a_nul_in_a_commit_message_ends_it_and_shifts_no_field(repo: Repo) -> None:
    first = repo.commit("first")
    hostile = repo.raw_commit(
        b"author Mal\x00lory <m@x> 1700000000 +0000\n"
        b"committer C <c@x> 1700000000 +0000\n\nsub\x00ject\n\nbo\x00dy\n"
    )
    log = _fetch(repo.path, "git.log")
    # git reads an ident or a message as a C string: nothing after a NUL reaches the output.
    assert [(c["commit"], c["author"], c["subject"], c["body"]) for c in log] == [
        (hostile, "", "sub", ""),
        (first, "Ann Author", "first", ""),
    ]


def test_a_window_selects_commits_by_committer_time(repo: Repo) -> None:
    repo.commit("day 0", when=EPOCH)
    repo.commit("day 2", when=EPOCH + 2 * DAY)
    repo.commit("day 5", when=EPOCH + 5 * DAY)
    # Older than its parent: `--since` would stop walking here and miss "day 2".
    repo.commit("dated back", when=EPOCH - DAY)
    window = Window(_at(EPOCH + 2 * DAY), _at(EPOCH + 5 * DAY))
    log = _fetch(repo.path, "git.log", window=window)
    # since is inclusive, until exclusive.
    assert [c["subject"] for c in log] == ["day 2"]
    wider = Window(_at(EPOCH), _at(EPOCH + 5 * DAY + 1))
    assert [c["subject"] for c in _fetch(repo.path, "git.log", window=wider)] == [
        "day 5",
        "day 2",
        "day 0",
    ]


def test_log_takes_a_range_a_path_and_a_count(repo: Repo) -> None:
    repo.commit("base", files={"a/x": "1"})
    repo.git("tag", "v1")
    repo.commit("touches a", files={"a/x": "2"})
    repo.commit("touches b", files={"b/y": "1"})
    repo.commit("touches a again", files={"a/x": "3"})
    subjects = lambda **kw: [c["subject"] for c in _fetch(repo.path, "git.log", **kw)]  # noqa: E731
    assert subjects(range="v1..HEAD") == ["touches a again", "touches b", "touches a"]
    assert subjects(range="v1..HEAD", path="a") == ["touches a again", "touches a"]
    assert subjects(max_commits=2) == ["touches a again", "touches b"]


@pytest.mark.parametrize("operation", ["git.log", "git.diff", "git.changed_files"])
def test_a_range_that_is_an_option_is_refused(repo: Repo, tmp_path: Path, operation: str) -> None:
    repo.commit("one", files={"a": "1"})
    target = tmp_path / "x"
    assert _error(repo.path, operation, range=f"--output={target}") == (
        "HZ727",
        f"the range '--output={target}' starts with '-': git would read it as an option",
        None,
    )
    assert not target.exists()


def test_a_path_that_is_an_option_or_outside_is_refused(repo: Repo) -> None:
    repo.commit("one", files={"a": "1"})
    assert _error(repo.path, "git.log", path="-p")[:2] == (
        "HZ727",
        "the path '-p' starts with '-': git would read it as an option",
    )
    for path in ("../outside", "/etc/passwd", "a/../../x"):
        assert _error(repo.path, "git.changed_files", range="HEAD..", path=path) == (
            "HZ727",
            f"the path {path!r} is outside the working directory",
            "give a path relative to the working directory, inside it",
        )


def test_a_path_is_literal_not_a_pattern(repo: Repo) -> None:
    repo.commit("star", files={"a*": "1"})
    repo.commit("plain", files={"ab": "1"})
    assert [c["subject"] for c in _fetch(repo.path, "git.log", path="a*")] == ["star"]


def test_diff_of_a_range(repo: Repo) -> None:
    repo.commit("one", files={"f": "a\n"})
    repo.commit("two", files={"f": "a\nb\n"})
    assert _fetch(repo.path, "git.diff", range="HEAD~1..HEAD") == {
        "range": "HEAD~1..HEAD",
        "diff": "diff --git a/f b/f\nindex 7898192..422c2b7 100644\n--- a/f\n+++ b/f\n"
        "@@ -1 +1,2 @@\n a\n+b\n",
        "truncated": False,
    }


def _json_size(value: Any) -> int:
    """How the fetch counts an answer: compact UTF-8 JSON, keys sorted."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode())


@pytest.mark.parametrize("line", ["äöü\n", '\x1b[1m日本\x1b[0m\t"\\\n'])
def test_a_huge_diff_is_cut_to_fit_the_cap_as_json(repo: Repo, line: str) -> None:
    repo.commit("empty")
    repo.commit("huge", files={"big": line * 300_000})
    provider = _provider(max_bytes=100_001)
    value = _fetch(repo.path, "git.diff", provider, range="HEAD~1..HEAD")
    assert value["truncated"] is True
    # Cut on a character, as close to the cap as a character allows: a line break counts two
    # bytes there, an escape character six, a CJK character three.
    assert 100_001 - 6 < _json_size(value) <= 100_001
    assert value["diff"].startswith("diff --git a/big b/big\nnew file mode 100644\n")
    assert "\ufffd" not in value["diff"]
    # The request's own cap counts too.
    smaller = _fetch(repo.path, "git.diff", range="HEAD~1..HEAD", max_bytes=1000)
    assert smaller["truncated"] is True
    assert 1000 - 6 < _json_size(smaller) <= 1000


def test_a_diff_that_fits_as_git_prints_it_but_not_as_json_is_cut(repo: Repo) -> None:
    repo.commit("empty")
    repo.commit("lines", files={"f": "\n" * 900})
    whole = _fetch(repo.path, "git.diff", range="HEAD~1..HEAD")
    assert whole["truncated"] is False
    raw = len(whole["diff"].encode())
    value = _fetch(repo.path, "git.diff", _provider(max_bytes=raw + 10), range="HEAD~1..HEAD")
    assert value["truncated"] is True
    assert raw + 10 - 6 < _json_size(value) <= raw + 10
    assert whole["diff"].startswith(value["diff"])


def test_a_diff_of_one_revision_is_refused(repo: Repo) -> None:
    repo.commit("one", files={"f": "1"})
    assert _error(repo.path, "git.diff", range="HEAD") == (
        "HZ727",
        "the range 'HEAD' is one revision: a diff compares two, such as main..HEAD",
        "write HEAD^..HEAD for its own change",
    )


def test_log_over_the_cap_fails(repo: Repo) -> None:
    for n in range(20):
        repo.commit(f"commit {n}")
    assert _error(repo.path, "git.log", _provider(max_bytes=500)) == (
        "HZ725",
        "git printed more than 500 bytes",
        "narrow the range, the window or the path, or lower max_commits",
    )


def test_changed_files_of_a_range(repo: Repo) -> None:
    repo.commit("one", files={"keep": "1", "gone": "1", "moved": "1"})
    repo.commit(
        "two", files={"keep": "2", "new\nline": "1", "renamed": "1"}, remove=("gone", "moved")
    )
    assert _fetch(repo.path, "git.changed_files", range="HEAD~1..HEAD") == [
        {"path": "gone", "status": "D"},
        {"path": "keep", "status": "M"},
        {"path": "moved", "status": "D"},
        {"path": "new\nline", "status": "A"},
        {"path": "renamed", "status": "A"},
    ]


def test_changed_files_in_a_window_is_the_net_change(repo: Repo) -> None:
    repo.commit("before", files={"old": "1", "edited": "1", "replaced": "1"}, when=EPOCH)
    repo.commit("add temp", files={"temp": "1", "added": "1"}, when=EPOCH + DAY)
    repo.commit("edit", files={"edited": "2", "added": "2"}, remove=("old",), when=EPOCH + DAY)
    repo.commit("drop temp", remove=("temp", "replaced"), when=EPOCH + DAY)
    repo.commit("back again", files={"replaced": "2"}, when=EPOCH + DAY)
    repo.commit("after", files={"later": "1"}, when=EPOCH + 3 * DAY)
    window = Window(_at(EPOCH + 1), _at(EPOCH + 2 * DAY))
    assert _fetch(repo.path, "git.changed_files", window=window) == [
        {"path": "added", "status": "A"},
        {"path": "edited", "status": "M"},
        {"path": "old", "status": "D"},
        {"path": "replaced", "status": "M"},
    ]


def test_changed_files_needs_a_range_or_a_window(repo: Repo) -> None:
    repo.commit("one")
    assert _error(repo.path, "git.changed_files")[:2] == (
        "HZ727",
        "git.changed_files needs a range (such as main..HEAD) or a window",
    )


def test_a_directory_that_is_no_repository(tmp_path: Path) -> None:
    assert _error(tmp_path, "git.log") == (
        "HZ722",
        "the working directory is not in a git repository",
        "run hz in a git checkout, or bind the git capability to another provider",
    )


def test_a_bad_revision_names_git_s_message(repo: Repo) -> None:
    repo.commit("one")
    assert _error(repo.path, "git.log", range="nope\u202e]")[:2] == (
        "HZ722",
        "git exited with code 128: fatal: bad revision 'nope\\u202e]'",
    )


def test_a_repository_of_another_user_is_refused(repo: Repo) -> None:
    repo.commit("one")
    for top, dirs, files in os.walk(repo.path):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.lchown(name, 54321, 54321)
    assert _error(repo.path, "git.log") == (
        "HZ722",
        "git refuses the repository: it is owned by another user (dubious ownership)",
        "run hz as the repository's owner, or list it in safe.directory of your global git "
        "configuration (see `git help config`)",
    )


def test_git_variables_of_hz_s_environment_never_reach_git(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("ours")
    other = Repo(tmp_path / "other")
    other.commit("theirs")
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.path))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "log.showSignature")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "true")
    assert [c["subject"] for c in _fetch(repo.path, "git.log")] == ["ours"]


def _marker_program(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    program = tmp_path / "planted"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program, marker


def test_the_repository_s_configuration_runs_no_program(repo: Repo, tmp_path: Path) -> None:
    program, marker = _marker_program(tmp_path)
    repo.commit("one", files={"f.txt": "1\n", ".gitattributes": "*.txt diff=planted\n"})
    repo.commit("two", files={"f.txt": "2\n"})
    for key, value in (
        ("core.pager", str(program)),
        ("pager.log", str(program)),
        ("core.fsmonitor", str(program)),
        ("diff.external", str(program)),
        ("diff.planted.textconv", str(program)),
        ("diff.planted.command", str(program)),
        ("log.showSignature", "true"),
        ("gpg.program", str(program)),
    ):
        repo.git("config", key, value)
    # The control: git itself runs the planted program with this configuration.
    repo.git("diff", "HEAD~1..HEAD")
    assert marker.exists()
    marker.unlink()
    _fetch(repo.path, "git.log")
    _fetch(repo.path, "git.diff", range="HEAD~1..HEAD")
    _fetch(repo.path, "git.changed_files", range="HEAD~1..HEAD")
    _fetch(repo.path, "git.changed_files", window=Window(_at(0), _at(EPOCH + DAY)))
    assert not marker.exists()


def test_a_missing_git(tmp_path: Path) -> None:
    provider = _provider(executable=str(tmp_path / "no-git"))
    assert _error(tmp_path, "git.log", provider) == (
        "HZ721",
        f"git did not start: {tmp_path}/no-git: program not found",
        "check the program's name or path in the provider's settings",
    )
    assert provider.ready() == provider.ready(online=True)
    assert provider.ready().ok is False
    assert provider.ready().detail == f"git did not start: {tmp_path}/no-git: program not found"


def _fake_git(tmp_path: Path, script: str) -> str:
    path = tmp_path / "fake-git"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_ready_names_the_version() -> None:
    readiness = _provider().ready()
    assert readiness.ok is True
    assert readiness.detail.startswith("git version 2.")


def test_an_old_git_is_not_ready(tmp_path: Path) -> None:
    provider = _provider(executable=_fake_git(tmp_path, "echo 'git version 2.30.1'"))
    assert provider.ready().ok is False
    assert provider.ready().detail == "git version 2.30.1 is older than git 2.37, which hz needs"


@pytest.mark.serial
def test_a_git_that_hangs_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    provider = _provider(executable=_fake_git(tmp_path, "sleep 30"), timeout_seconds=0.5)
    started = time.monotonic()
    assert _error(tmp_path, "git.log", provider) == (
        "HZ726",
        "git did not end within 0.5 seconds; its process group was stopped",
        "raise timeout_seconds in the provider's settings, or ask for less",
    )
    assert time.monotonic() - started < 5


def test_a_deadline_already_passed_starts_nothing(tmp_path: Path) -> None:
    program, marker = _marker_program(tmp_path)
    provider = _provider(executable=str(program))
    assert _error(tmp_path, "git.log", provider, deadline=-1)[:2] == (
        "HZ726",
        "no time left to start git: the fetch's deadline has passed",
    )
    assert not marker.exists()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"timeout_seconds": 0},
            "[providers.git] timeout_seconds must be a number of seconds greater than 0 and "
            "at most 3600, got 0",
        ),
        (
            {"max_bytes": "1M"},
            "[providers.git] max_bytes must be a number of bytes from 1 to 1073741824, got '1M'",
        ),
        (
            {"executable": ""},
            "[providers.git] executable must be a path (a non-empty string without a NUL "
            "character), got ''",
        ),
    ],
)
def test_bad_settings_are_named(table: dict[str, Any], message: str) -> None:
    from hz.runtime.artifacts.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        GitSettings.from_table(table)
    assert str(caught.value) == message


def test_a_log_longer_than_the_default_fails_rather_than_being_cut(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hz.runtime.providers.git.provider.DEFAULT_MAX_COMMITS", 2)
    for number in range(3):
        repo.commit(f"commit {number}")
    assert _error(repo.path, "git.log") == (
        "HZ725",
        "more than 2 commits",
        "narrow the range, the window or the path, or set max_commits to take the newest ones only",
    )
    # Asked for: the newest ones, as many as asked.
    assert [c["subject"] for c in _fetch(repo.path, "git.log", max_commits=2)] == [
        "commit 2",
        "commit 1",
    ]
    monkeypatch.setattr("hz.runtime.providers.git.provider.DEFAULT_MAX_COMMITS", 3)
    assert len(_fetch(repo.path, "git.log")) == 3


def test_a_file_named_dashes_outside_a_repository_reads_nothing(tmp_path: Path) -> None:
    # git diff A B outside a repository is `git diff --no-index`: with a file named `--`
    # there, `RANGE --` compared /etc/passwd with it.
    (tmp_path / "--").write_text("")
    for operation in ("git.diff", "git.changed_files"):
        assert _error(tmp_path, operation, range="/etc/../etc/passwd")[:2] == (
            "HZ722",
            "the working directory is not in a git repository",
        )


def test_a_range_that_is_a_path_is_refused_before_git_reads_it(repo: Repo, tmp_path: Path) -> None:
    program, marker = _marker_program(tmp_path)
    repo.commit("one", files={"--": "", ".gitattributes": "* filter=planted\n"})
    repo.commit("two", files={"f": "2\n"})
    # Inside a repository a path outside it made the diff --no-index too, and git applied
    # the repository's attributes to the files it read: the filter ran.
    repo.git("config", "filter.planted.process", str(program))
    marker.unlink(missing_ok=True)
    for text_range, side in (
        ("/etc/../etc/passwd", "/etc/"),
        ("../x..HEAD", "/x..HEAD"),
        ("HEAD..sub/../x", "sub/../x"),
        ("./a...HEAD", "./a"),
        ("HEAD..x/.", "x/."),
    ):
        for operation in ("git.diff", "git.changed_files"):
            assert _error(repo.path, operation, range=text_range) == (
                "HZ727",
                f"the range {text_range!r} names a path ({side!r}), not a revision",
                "give revisions, such as main..HEAD or v1.2...v1.3",
            )
    assert not marker.exists()
    assert _fetch(repo.path, "git.changed_files", range="HEAD~1..HEAD") == [
        {"path": "f", "status": "A"}
    ]


def test_each_side_of_a_range_must_be_a_commit(repo: Repo) -> None:
    repo.commit("one", files={"f": "1\n"})
    repo.commit("two", files={"f": "2\n"})
    blob = repo.git("rev-parse", "HEAD:f").decode().strip()
    for text_range, side in (
        ("nope..HEAD", "nope"),
        (f"HEAD..{blob}", blob),
        ("HEAD..b..c", "b..c"),
    ):
        assert _error(repo.path, "git.diff", range=text_range) == (
            "HZ722",
            f"{side!r} of the range {text_range!r} is no commit of the repository",
            "check the revision's name (a branch, a tag, a hash)",
        )


def test_a_symmetric_range_diffs_from_the_merge_base(repo: Repo) -> None:
    repo.commit("base", files={"f": "base\n"})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("topic", files={"t": "topic\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main moves on", files={"f": "main\n"})
    files = _fetch(repo.path, "git.changed_files", range="main...topic")
    assert files == [{"path": "t", "status": "A"}]
    assert _fetch(repo.path, "git.changed_files", range="main..topic") == [
        {"path": "f", "status": "M"},
        {"path": "t", "status": "A"},
    ]
    repo.git("checkout", "-q", "--orphan", "alone")
    repo.commit("unrelated", files={"u": "1\n"})
    assert _error(repo.path, "git.diff", range="main...alone") == (
        "HZ722",
        "the sides of the range 'main...alone' have no common commit",
        "write A..B to compare the two commits themselves",
    )


def test_a_cut_diff_is_kept_only_when_hz_stopped_git(tmp_path: Path) -> None:
    # git that fails on its own after printing more than the cap (as `--no-index` exits 1
    # once it has printed a file) is a failure, not a cut diff.
    script = f"""
case " $* " in
  *" --show-toplevel "*) printf '%s\\n%s\\n\\n' "$PWD" "$PWD/.git";;
  *" --verify "*) echo {"a" * 40};;
  *" diff "*) exec 2>/dev/null; trap 'exit 1' TERM
    head -c 20000 /dev/zero | tr '\\0' x; sleep 5 & wait;;
esac
"""
    provider = _provider(executable=_fake_git(tmp_path, script), max_bytes=500)
    assert _error(tmp_path, "git.diff", provider, range="A..B")[:2] == (
        "HZ722",
        "git exited with code 1 (nothing on stderr)",
    )


def test_a_git_file_pointing_at_another_repository_is_refused(repo: Repo, tmp_path: Path) -> None:
    repo.commit("private", files={"secret": "s\n"})
    planted = tmp_path / "unpacked"
    planted.mkdir()
    (planted / ".git").write_text(f"gitdir: {repo.path}/.git\n")
    for operation, args in (
        ("git.log", {}),
        ("git.diff", {"range": "HEAD..HEAD"}),
        ("git.changed_files", {"range": "HEAD..HEAD"}),
    ):
        assert _error(planted, operation, **args) == (
            "HZ727",
            f"the repository's git directory '{repo.path}/.git' is outside its work tree "
            f"'{planted}': a .git file there points elsewhere",
            "run hz in a checkout whose .git is its own, or set [providers.git] "
            "allow_other_git_dir = true if that repository is meant to be read",
        )
    allowed = _provider(allow_other_git_dir=True)
    assert [c["subject"] for c in _fetch(planted, "git.log", allowed)] == ["private"]


def test_a_linked_worktree_and_a_submodule_are_their_repositories_own(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("main", files={"f": "1\n"})
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "linked"))
    assert [c["subject"] for c in _fetch(tmp_path / "linked", "git.log")] == ["main"]
    library = Repo(tmp_path / "library")
    library.commit("library")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "lib")
    assert [c["subject"] for c in _fetch(repo.path / "lib", "git.log")] == ["library"]
    # Another worktree's git directory does not name this one.
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / ".git").write_text(f"gitdir: {repo.path}/.git/worktrees/linked\n")
    assert _error(stranger, "git.log")[0] == "HZ727"


@pytest.mark.parametrize("line", ["line of ordinary text\n", "日本語のテキスト\n"])
def test_a_cut_diff_passes_the_fetch_s_cap(repo: Repo, line: str) -> None:
    from hz.runtime.providers.binding import Bindings
    from hz.runtime.providers.fetch import FetchContext, fetch_inputs
    from tests.helpers.providers import job_reading

    repo.commit("empty")
    repo.commit("huge", files={"big": line * 20_000})
    context = FetchContext(Bindings({"git": "git"}, {"git": {"max_bytes": 50_000}}), repo.path)
    job = job_reading(
        {"change": {"read": {"operation": "git.diff", "args": {"range": "HEAD~1.."}}}}
    )
    found = fetch_inputs(job, context)
    assert found.problems == ()
    assert found.values["change"]["truncated"] is True
    assert 50_000 - 6 < _json_size(found.values["change"]) <= 50_000


def test_a_cap_smaller_than_the_record_itself_is_hz725(repo: Repo) -> None:
    repo.commit("one", files={"f": "1\n"})
    repo.commit("two", files={"f": "2\n"})
    assert _error(repo.path, "git.diff", _provider(max_bytes=40), range="HEAD~1..HEAD") == (
        "HZ725",
        "a cap of 40 bytes leaves no room for the diff",
        "raise max_bytes",
    )

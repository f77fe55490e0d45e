"""Request keys, in process with the echo runner: opt-in (without one every invocation is a
new run), one run per key, refused when reused for another request, bounded and checked before
the ledger is opened; and the other values ``hz runs`` reads from the command line."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.store import Ledger
from tests.conftest import Cli
from tests.helpers.contracts import contract
from tests.helpers.ledger_cli import echo_space

CONTRACT = contract(inputs=("topic",), prompt="Write about {{ inputs.topic }}.")

KEY_RULE = (
    "a request key is 1 to 256 letters, digits, punctuation marks, symbols and spaces (not at "
    "either end); no control or invisible characters"
)
RESERVED = (
    "a key starting schedule: or after: is the worker's (a schedule's slot, a chain's "
    "follower): choose another key"
)


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    (tmp_path / "job.yaml").write_text(CONTRACT)
    (tmp_path / "elsewhere").mkdir()
    return echo_space(cli, tmp_path)


def rows(tmp_path: Path) -> list[RunRow]:
    return Ledger(tmp_path / "s" / "ledger.sqlite3").select()


def test_without_a_key_every_run_submit_and_batch_is_a_new_run(hz: Cli, tmp_path: Path) -> None:
    """The second hz run of a contract (what hz init suggests), after a failure or a change of
    runner, is run: nothing is refused for a key the user never chose."""
    for _ in range(2):
        done = hz("run", "job.yaml", "--input", "topic=APPLES", "-q")
        assert (done.returncode, done.stdout, done.stderr) == (0, "Write about APPLES.\n", "")
        assert hz("submit", "job.yaml", "--input", "topic=APPLES").returncode == 0
        batch = hz("run", "-j", "2", "job.yaml", "job.yaml", "--input", "topic=APPLES", "-q")
        assert batch.returncode == 0, batch.stderr
    keys = [row.request_key for row in rows(tmp_path)]
    assert len(keys) == len(set(keys)) == 8
    assert all(key.startswith("auto:") and len(key) == 37 for key in keys)


def test_a_key_has_one_run_and_force_new_runs_it_again(hz: Cli, tmp_path: Path) -> None:
    args = ("job.yaml", "--input", "topic=APPLES", "--request-key", "weekly 2026-W49")
    assert hz("run", *args, "-q").returncode == 0
    [held] = rows(tmp_path)
    again = hz("run", *args)
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == (
        f"hz: error: run {held.id} (completed) already holds this request key; "
        "nothing was started\n"
        f"  hint: see hz runs show {held.id}; --force-new runs the request again under "
        "this key, another key (or none) starts a new run\n"
    )
    # hz submit starts nothing in any case: it says that nothing was queued.
    again = hz("submit", *args)
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == (
        f"hz: error: run {held.id} (completed) already holds this request key; "
        "nothing was queued\n"
        f"  hint: see hz runs show {held.id}; --force-new queues the request again under "
        "this key, another key (or none) queues a new run\n"
    )
    assert hz("run", *args, "--force-new", "-q").returncode == 0
    assert len(rows(tmp_path)) == 2


def test_hz_request_key_names_the_request_as_the_option_does(hz: Cli, tmp_path: Path) -> None:
    args = ("job.yaml", "--input", "topic=APPLES")
    assert hz("run", *args, HZ_REQUEST_KEY="nightly").returncode == 0
    again = hz("submit", *args, HZ_REQUEST_KEY="nightly")
    assert again.returncode == 2
    assert "already holds this request key; nothing was queued\n" in again.stderr
    assert hz("run", *args, "--request-key", "other", HZ_REQUEST_KEY="nightly").returncode == 0
    assert hz("run", *args, HZ_REQUEST_KEY="").returncode == 0  # empty: unset, a new run
    keys = sorted(str(row.request_key) for row in rows(tmp_path))
    assert keys[1:] == ["nightly", "other"]
    assert keys[0].startswith("auto:")
    bad = hz("run", *args, HZ_REQUEST_KEY="\u200f")
    assert bad.returncode == 2
    assert bad.stderr.endswith(
        "Error: Invalid value for HZ_REQUEST_KEY: the key holds U+200F RIGHT-TO-LEFT MARK at "
        f"character 1; {KEY_RULE}\n"
    )
    batch = hz("run", "-j", "2", "job.yaml", "job.yaml", "--input", "topic=A", HZ_REQUEST_KEY="k")
    assert batch.returncode == 2
    assert batch.stderr.endswith(
        "Error: --dry-run, --no-ledger and --request-key (or HZ_REQUEST_KEY) take one target "
        "(no -j)\n"
    )
    many = hz("submit", "job.yaml", "job.yaml", "--input", "topic=A", HZ_REQUEST_KEY="k")
    assert many.returncode == 2
    assert many.stderr.endswith(
        "Error: --request-key (or HZ_REQUEST_KEY) names one request: give one target\n"
    )


def test_a_key_reused_for_another_request_is_refused_and_nothing_runs(
    hz: Cli, tmp_path: Path
) -> None:
    """Issue 21, item 1: the queued APPLES run of the key was adopted and run by an hz run of
    BANANAS, in another working directory, which printed APPLES' draft and exited 0."""
    queued = hz("submit", "job.yaml", "--input", "topic=APPLES", "--request-key", "K",
                "--workdir", "elsewhere")  # fmt: skip
    assert queued.returncode == 0, queued.stderr
    run_id = queued.stdout.strip()
    for extra in ((), ("--force-new",)):
        done = hz("run", "job.yaml", "--input", "topic=BANANAS", "--request-key", "K", *extra)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"hz: error: run {run_id} (queued) holds this request key for another request; "
            "what differs: the input values and the working directory (there "
            f"{tmp_path / 'elsewhere'}, here {tmp_path}); nothing was started\n"
            "  hint: a request key names one request: give this one a key of its own, or leave "
            f"--request-key out to start a new run (hz runs show {run_id} shows the other)\n"
        )
    submitted = hz("submit", "job.yaml", "--input", "topic=BANANAS", "--request-key", "K")
    assert (submitted.returncode, submitted.stdout) == (2, "")
    assert submitted.stderr == (
        f"hz: error: run {run_id} (queued) holds this request key for another request; "
        "what differs: the input values and the working directory (there "
        f"{tmp_path / 'elsewhere'}, here {tmp_path}); nothing was queued\n"
        "  hint: a request key names one request: give this one a key of its own, or leave "
        f"--request-key out to queue a new run (hz runs show {run_id} shows the other)\n"
    )
    [row] = rows(tmp_path)
    assert (row.id, row.state, row.owner) == (run_id, "queued", None)
    # The same request under the key: its queued run is adopted and run, as before.
    same = hz("run", "job.yaml", "--input", "topic=APPLES", "--request-key", "K",
              "--workdir", "elsewhere", "-q")  # fmt: skip
    assert (same.returncode, same.stdout) == (0, "Write about APPLES.\n")
    assert [(r.id, r.state) for r in rows(tmp_path)] == [(run_id, "completed")]


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("", "an empty key names no request; leave the option out to start a new run"),
        (" \t ", f"the key holds U+0009 at character 2; {KEY_RULE}"),
        (
            "\u200f\u200e\u202e",
            f"the key holds U+200F RIGHT-TO-LEFT MARK at character 1; {KEY_RULE}",
        ),
        ("run\u200b1", f"the key holds U+200B ZERO WIDTH SPACE at character 4; {KEY_RULE}"),
        ("k\n::warning::x", f"the key holds U+000A at character 2; {KEY_RULE}"),
        (
            "a\u00a0b",
            f"the key holds U+00A0 NO-BREAK SPACE (a space other than U+0020) at "
            f"character 2; {KEY_RULE}",
        ),
        (" padded", f"the key starts or ends with a space; {KEY_RULE}"),
        (
            "weekly\ufe0f",
            f"the key holds U+FE0F VARIATION SELECTOR-16 (shown as nothing) at character 7; "
            f"{KEY_RULE}",
        ),
        (
            "\u3164",
            f"the key holds U+3164 HANGUL FILLER (shown as nothing) at character 1; {KEY_RULE}",
        ),
        ("\u0301\u0301", f"the key holds only combining marks; {KEY_RULE}"),
        ("\udcff", f"the key holds the byte \\xff, which is not UTF-8, at character 1; {KEY_RULE}"),
        ("k" * 257, f"a key of 257 characters is too long; {KEY_RULE}"),
        ("k" * 8192, f"a key of 8192 characters is too long; {KEY_RULE}"),
        # The worker's keys: a client's would switch a schedule off until its date (attack
        # on issue 26, hit 2), or mark a chain's follower as queued.
        ("schedule:minutely:9999-12-31T23:59:00Z", RESERVED),
        ("Schedule:minutely:2099-01-01T00:00:00Z", RESERVED),
        ("after:run_1:down", RESERVED),
    ],
)
@pytest.mark.parametrize("command", ["run", "submit"])
def test_a_key_that_is_not_plain_text_is_refused_before_the_ledger_is_opened(
    hz: Cli, tmp_path: Path, command: str, key: str, why: str
) -> None:
    done = hz(command, "job.yaml", "--input", "topic=A", "--request-key", key)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(f"Error: Invalid value for --request-key: {why}\n")
    assert not (tmp_path / "s").exists()  # nothing recorded, nothing opened


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("caf\u00e9", "cafe\u0301"),  # é composed, and e with a combining accent (macOS)
        ("cafe\u0301", "caf\u00e9"),
        ("\u212b", "\u00c5"),  # ANGSTROM SIGN and LATIN CAPITAL LETTER A WITH RING ABOVE
    ],
    ids=["nfc-then-nfd", "nfd-then-nfc", "angstrom"],
)
def test_keys_that_print_alike_in_any_normal_form_are_one_key(
    hz: Cli, tmp_path: Path, first: str, second: str
) -> None:
    """They were two keys: the request ran twice (attack on issue 21, H10). A key is taken
    in its composed form (NFC), stored and shown so."""
    args = ("job.yaml", "--input", "topic=A")
    assert hz("run", *args, "-q", "--request-key", first).returncode == 0
    [held] = rows(tmp_path)
    for command, nothing in (("run", "started"), ("submit", "queued")):
        again = hz(command, *args, "--request-key", second)
        assert (again.returncode, again.stderr.splitlines()[0]) == (
            2,
            f"hz: error: run {held.id} (completed) already holds this request key; nothing "
            f"was {nothing}",
        )
    again = hz("run", *args, **{"HZ_REQUEST_KEY": second})
    assert again.returncode == 2
    assert [row.request_key for row in rows(tmp_path)] == [unicodedata.normalize("NFC", first)]


def test_a_key_is_measured_in_its_composed_form(hz: Cli, tmp_path: Path) -> None:
    """256 accented letters typed decomposed (512 characters) are a key of 256."""
    done = hz("run", "job.yaml", "--input", "topic=A", "-q", "--request-key", "e\u0301" * 256)
    assert done.returncode == 0, done.stderr
    assert [row.request_key for row in rows(tmp_path)] == ["\u00e9" * 256]


def test_the_longest_key_of_the_widest_characters_is_taken(hz: Cli, tmp_path: Path) -> None:
    key = "\U0001f34e" * 256  # 1 KiB of UTF-8
    done = hz("run", "job.yaml", "--input", "topic=A", "-q", "--request-key", key)
    assert done.returncode == 0, done.stderr
    assert [row.request_key for row in rows(tmp_path)] == [key]


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400", "-1", " nan\n"])
def test_runs_wait_refuses_a_timeout_that_is_not_a_finite_number_of_seconds(
    hz: Cli, value: str
) -> None:
    done = hz("runs", "wait", "run_20260101_0123456789ab", "--timeout", value)
    assert (done.returncode, done.stdout) == (2, "")
    shown = value.replace("\n", "\\n")
    assert done.stderr.endswith(
        f"Error: Invalid value for '--timeout': {shown} is not a finite number of seconds, 0 or "
        "more\n"
    )


@pytest.mark.parametrize("command", [("show",), ("wait",), ("cancel",), ("retry",)])
@pytest.mark.parametrize("run_id", ["run_\udcff", "run_nope", "run_20260101_0123456789ab\n"])
def test_runs_refuse_what_is_not_a_run_id(
    hz: Cli, tmp_path: Path, command: tuple[str, ...], run_id: str
) -> None:
    done = hz("runs", *command, run_id)
    assert (done.returncode, done.stdout) == (2, "")
    shown = repr(run_id)
    argument = "RUN_IDS..." if command[0] in ("wait", "cancel") else "RUN_ID"
    assert done.stderr.endswith(
        f"Error: Invalid value for '{argument}': {shown} is not a run id (run_, a date as "
        "YYYYMMDD, _ and 12 hexadecimal digits, as hz runs list shows them)\n"
    )

"""Numbers in the configuration that no setting can hold — an integer of 400 digits, one of
thousands, a float that overflows, NaN, infinity — are refused naming the setting, with a hint,
wherever they are set: never an OverflowError (exit 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import contract

CONTRACT = contract(inputs=(), prompt="Say hi.")
DIGITS_400 = "9" * 400
SHOWN_400 = "99999999999999999999… (a number of 400 digits)"
DOLLARS = "  hint: an amount of US dollars such as 25 or 0.5\n"
WHOLE = "  hint: a whole number from 1 to 9223372036854775807\n"


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Callable[..., CliResult]:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    env = {"HZ_RUNNER": "echo", "HZ_STATE_DIR": str(tmp_path / "s")}

    def run(*args: str, **extra: str) -> CliResult:
        return cli(*args, cwd=tmp_path, env={**env, **extra})

    return run


@pytest.mark.parametrize(
    ("variable", "key"),
    [
        ("HZ_AUTHORING__MAX_USD_CEILING", "[authoring] max_usd_ceiling"),
        ("HZ_SYSTEM_BUDGET__MAX_USD_PER_DAY", "[system.budget] max_usd_per_day"),
    ],
)
def test_a_ceiling_of_400_digits_is_refused_before_anything_runs(
    hz: Callable[..., CliResult], variable: str, key: str
) -> None:
    done = hz("run", "greet.yaml", **{variable: DIGITS_400})
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"hz: error: environment variable {variable}: {key} must be a finite number greater "
        f"than 0, got {SHOWN_400}\n" + DOLLARS,
    )


@pytest.mark.parametrize(
    ("table", "key", "message", "hint"),
    [
        ("authoring", "max_usd_ceiling", "must be a finite number greater than 0", DOLLARS),
        ("system.budget", "max_usd_per_day", "must be a finite number greater than 0", DOLLARS),
        ("system", "max_attempts", "must be a positive integer", WHOLE),
        ("system.runner", "max_turns", "must be a positive integer", WHOLE),
        (
            "system",
            "max_parallel",
            "must be an integer from 1 to 256",
            "  hint: each run holds two threads and an agent: a machine takes a few hundred\n",
        ),
        (
            "system.schedules",
            "max_followers",
            "must be an integer from 1 to 100000",
            "  hint: each follower run may spend its job's max_usd\n",
        ),
    ],
)
@pytest.mark.parametrize(("toml", "shown"), [(DIGITS_400, SHOWN_400), ("1e999", "inf")])
def test_every_number_in_an_operator_file_is_held_to_what_it_can_be(
    hz: Callable[..., CliResult],
    tmp_path: Path,
    table: str,
    key: str,
    message: str,
    hint: str,
    toml: str,
    shown: str,
) -> None:
    (tmp_path / "operator.toml").write_text(f"[{table}]\n{key} = {toml}\n")
    done = hz("config", "show", HZ_CONFIG=str(tmp_path / "operator.toml"))
    assert (done.returncode, done.stderr) == (
        2,
        f"hz: error: {tmp_path / 'operator.toml'}:2:1: [{table}] {key} {message}, got {shown}\n"
        + hint,
    )


def test_a_per_runner_ceiling_of_400_digits_is_refused(hz: Callable[..., CliResult]) -> None:
    done = hz("config", "show", HZ_SYSTEM_BUDGET__PER_RUNNER=f"{{ echo = {DIGITS_400} }}")
    assert (done.returncode, done.stderr.splitlines()[1]) == (
        2,
        "  hint: e.g. per_runner = { claude-code = 20 }: an amount of US dollars such as 25 or "
        "0.5 per runner",
    )


def test_an_integer_of_thousands_of_digits_is_refused_where_it_is_set(
    hz: Callable[..., CliResult], tmp_path: Path
) -> None:
    huge = "9" * 5000
    hint = "  hint: no setting takes a number that large\n"
    done = hz("config", "show", HZ_SYSTEM__MAX_ATTEMPTS=huge)
    assert (done.returncode, done.stderr) == (
        2,
        "hz: error: environment variable HZ_SYSTEM__MAX_ATTEMPTS: an integer of thousands of "
        "digits (TOML integers have 64 bits)\n" + hint,
    )
    (tmp_path / "operator.toml").write_text(f"[system]\nmax_attempts = {huge}\n")
    done = hz("config", "show", HZ_CONFIG=str(tmp_path / "operator.toml"))
    assert (done.returncode, done.stderr) == (
        2,
        f"hz: error: {tmp_path / 'operator.toml'}:2:16: invalid TOML: an integer of thousands "
        "of digits (TOML integers have 64 bits)\n" + hint,
    )


def test_a_project_ceiling_of_400_digits_is_hz804_with_a_hint(
    hz: Callable[..., CliResult], tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text(f"[authoring]\nmax_usd_ceiling = {DIGITS_400}\n")
    done = hz("validate", "greet.yaml")
    assert (done.returncode, done.stdout) == (
        1,
        f"{tmp_path / 'hz.toml'}:2:1: error: [authoring] max_usd_ceiling must be a finite "
        f"number greater than 0, got {SHOWN_400} [HZ804]\n" + DOLLARS,
    )
    assert done.stderr == "Found 1 error in 1 file (checked 2 files)\n"

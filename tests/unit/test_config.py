"""Configuration files and variables: every mistake is a ConfigError that says where."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.config.env import parse_env_value
from hz.runtime.config.layers import load_config
from hz.runtime.config.tables import BudgetSettings
from hz.runtime.ledger.session import policy
from hz.runtime.settings.keys import RUNNER


def _explicit(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "hz.conf.toml"
    path.write_text(text)
    return {"HZ_CONFIG": str(path), "HZ_SITE_CONFIG": str(tmp_path / "none.toml")}


def _error(env: dict[str, str]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(environ=env)
    return caught.value


def test_defaults_alone() -> None:
    config = load_config(environ={})
    assert config.agent_runner == "claude-code"
    assert config.table(RUNNER) == {}
    assert config.max_usd_ceiling == 100.0


def test_values_and_their_file_positions(tmp_path: Path) -> None:
    env = _explicit(
        tmp_path,
        'capabilities.agent_runner = "echo"\n\n[system.runner]\nmodel = "m"\n  max_turns = 4\n',
    )
    config = load_config(environ=env)
    where = {s.key: (s.value, str(s.origin)) for s in config.settings}
    path = env["HZ_CONFIG"]
    assert where == {
        "agent_runner": ("echo", f"HZ_CONFIG {path}:1:1"),
        "model": ("m", f"HZ_CONFIG {path}:4:1"),
        "max_turns": (4, f"HZ_CONFIG {path}:5:3"),
        "max_usd_ceiling": (100, "default"),
    }


def test_malformed_toml_names_file_line_and_column(tmp_path: Path) -> None:
    env = _explicit(tmp_path, "[system.runner]\nmodel = \n")
    assert _error(env).message == f"{env['HZ_CONFIG']}:2:9: invalid TOML: Invalid value"


def test_unknown_key_has_did_you_mean_and_the_file(tmp_path: Path) -> None:
    env = _explicit(tmp_path, '[system.runner]\nmodle = "m"\n')
    error = _error(env)
    assert error.message == (
        f"{env['HZ_CONFIG']}:2:1: unknown key 'modle' in [system.runner] (did you mean 'model'?)"
    )
    assert error.hint is not None
    assert error.hint.startswith("known keys: ")
    assert "echo_status" in error.hint.split(": ", 1)[1].split(", ")


def test_unknown_table(tmp_path: Path) -> None:
    env = _explicit(tmp_path, '[capabilitys]\nagent_runner = "echo"\n')
    assert _error(env).message == (
        f"{env['HZ_CONFIG']}:2:1: unknown table [capabilitys] (did you mean 'capabilities'?)"
    )


def test_top_level_key_points_to_its_table(tmp_path: Path) -> None:
    env = _explicit(tmp_path, 'agent_runner = "echo"\n')
    error = _error(env)
    assert (error.message, error.hint) == (
        f"{env['HZ_CONFIG']}:1:1: unknown top-level key 'agent_runner'",
        "'agent_runner' belongs in [capabilities]",
    )


def test_wrong_value_type(tmp_path: Path) -> None:
    env = _explicit(tmp_path, "[system.runner]\nrequire_enforced_budget = 1\n")
    assert _error(env).message == (
        f"{env['HZ_CONFIG']}:2:1: [system.runner] require_enforced_budget must be true or "
        "false, got 1"
    )


@pytest.mark.parametrize(
    ("toml", "shown"), [("inf", "inf"), ("+inf", "inf"), ("nan", "nan"), ("-1", "-1"), ("0", "0")]
)
def test_an_unbounded_or_non_positive_ceiling_is_refused(
    tmp_path: Path, toml: str, shown: str
) -> None:
    env = _explicit(tmp_path, f"[authoring]\nmax_usd_ceiling = {toml}\n")
    assert _error(env).message == (
        f"{env['HZ_CONFIG']}:2:1: [authoring] max_usd_ceiling must be a finite number greater "
        f"than 0, got {shown}"
    )
    assert _error({"HZ_AUTHORING__MAX_USD_CEILING": toml}).message == (
        "environment variable HZ_AUTHORING__MAX_USD_CEILING: [authoring] max_usd_ceiling must "
        f"be a finite number greater than 0, got {shown}"
    )


def test_an_unbounded_daily_budget_is_refused(tmp_path: Path) -> None:
    env = _explicit(tmp_path, "[system.budget]\nper_runner = { echo = inf }\n")
    assert _error(env).message == (
        f"{env['HZ_CONFIG']}:2:1: [system.budget] per_runner must be a table of runner names to "
        "finite numbers greater than 0, got {'echo': inf}"
    )


@pytest.mark.parametrize(
    ("toml", "shown"),
    [
        ("0", "0"),
        ("0.05", "0.05"),
        ("3601", "3601"),
        ("inf", "inf"),
        ("nan", "nan"),
        ("true", "True"),
        ('"2"', "'2'"),
    ],
)
def test_a_hold_wait_outside_its_bounds_is_refused(tmp_path: Path, toml: str, shown: str) -> None:
    env = _explicit(tmp_path, f"[system.budget]\nhold_wait_max_seconds = {toml}\n")
    assert _error(env).message == (
        f"{env['HZ_CONFIG']}:2:1: [system.budget] hold_wait_max_seconds must be a number of "
        f"seconds from 0.1 to 3600, got {shown}"
    )


def test_the_shortest_hold_wait_is_not_longer_than_the_longest(tmp_path: Path) -> None:
    env = _explicit(tmp_path, "[system.budget]\nhold_wait_min_seconds = 45\n")
    with pytest.raises(ConfigError) as caught:
        BudgetSettings.from_config(load_config(environ=env))
    assert (caught.value.message, caught.value.hint) == (
        "[system.budget] hold_wait_min_seconds (45) is more than hold_wait_max_seconds (30)",
        "the wait between two looks at a held run grows from the first to the second",
    )
    # Judged on the effective configuration: the longest wait may come from another layer.
    site = tmp_path / "site.toml"
    site.write_text("[system.budget]\nhold_wait_max_seconds = 60\n")
    settings = BudgetSettings.from_config(load_config(environ={**env, "HZ_SITE_CONFIG": str(site)}))
    assert (settings.hold_wait_min_seconds, settings.hold_wait_max_seconds) == (45, 60)
    assert policy(load_config(environ={**env, "HZ_SITE_CONFIG": str(site)})).ceilings.hold_wait == (
        45.0,
        60.0,
    )


def test_missing_hz_config_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert _error({"HZ_CONFIG": str(missing)}).message == (
        f"{missing}: configuration file named by HZ_CONFIG does not exist"
    )


def test_missing_default_files_are_fine(tmp_path: Path) -> None:
    env = {"HZ_SITE_CONFIG": str(tmp_path / "no.toml"), "XDG_CONFIG_HOME": str(tmp_path)}
    states = [(s.layer, s.state) for s in load_config(environ=env).layers]
    assert states == [
        ("default", "loaded"),
        ("site", "missing"),
        ("user", "missing"),
        ("project", "unset"),
        ("HZ_CONFIG", "unset"),
        ("environment", "unset"),
    ]


def test_xdg_config_home_locates_the_user_file(tmp_path: Path) -> None:
    (tmp_path / "hz").mkdir()
    (tmp_path / "hz" / "config.toml").write_text('[capabilities]\nagent_runner = "echo"\n')
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert config.agent_runner == "echo"


def test_user_file_defaults_to_home_config(isolated_home: Path) -> None:
    (isolated_home / ".config" / "hz").mkdir(parents=True)
    (isolated_home / ".config" / "hz" / "config.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n'
    )
    assert load_config(environ={}).agent_runner == "command"


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("sonnet", "sonnet"),
        ("true", True),
        ("3", 3),
        ('["Read", "Grep"]', ["Read", "Grep"]),
        ('"007"', "007"),
        ("a = 1", "a = 1"),
        ("2026-01-01", "2026-01-01"),
        ("12:00:00", "12:00:00"),
    ],
)
def test_environment_values_are_toml_when_they_parse(raw: str, value: object) -> None:
    assert parse_env_value(raw) == value


def test_environment_mapping() -> None:
    config = load_config(
        environ={
            "HZ_RUNNER": "echo",
            "HZ_SYSTEM_RUNNER__MODEL": "m",
            "HZ_SYSTEM_RUNNER__REQUIRE_ENFORCED_BUDGET": "true",
            "HZ_AUTHORING__MAX_USD_CEILING": "2.5",
            "HZ_CREDENTIAL_TOKEN": "secret",
            "HZ_AGENT_CLIS": "/somewhere",
        }
    )
    assert config.layers[-1].where == (
        "HZ_AUTHORING__MAX_USD_CEILING, HZ_RUNNER, HZ_SYSTEM_RUNNER__MODEL, "
        "HZ_SYSTEM_RUNNER__REQUIRE_ENFORCED_BUDGET"
    )
    assert [(s.table, s.key, s.value, s.origin.where) for s in config.settings] == [
        ("authoring", "max_usd_ceiling", 2.5, "HZ_AUTHORING__MAX_USD_CEILING"),
        ("capabilities", "agent_runner", "echo", "HZ_RUNNER"),
        ("system.runner", "model", "m", "HZ_SYSTEM_RUNNER__MODEL"),
        (
            "system.runner",
            "require_enforced_budget",
            True,
            "HZ_SYSTEM_RUNNER__REQUIRE_ENFORCED_BUDGET",
        ),
    ]


def test_environment_unknown_key() -> None:
    assert _error({"HZ_SYSTEM_RUNNER__MODLE": "m"}).message == (
        "environment variable HZ_SYSTEM_RUNNER__MODLE: unknown key 'modle' in [system.runner] "
        "(did you mean 'model'?)"
    )


def test_environment_unknown_table() -> None:
    assert _error({"HZ_SYSTEM_RUNER__MODEL": "m"}).message == (
        "environment variable HZ_SYSTEM_RUNER__MODEL: unknown table "
        "(did you mean 'HZ_SYSTEM_RUNNER'?)"
    )


def test_environment_alias_and_full_name_together_is_ambiguous() -> None:
    assert _error({"HZ_RUNNER": "echo", "HZ_CAPABILITIES__AGENT_RUNNER": "command"}).message == (
        "environment variables HZ_CAPABILITIES__AGENT_RUNNER and HZ_RUNNER both set "
        "[capabilities] agent_runner; set one"
    )

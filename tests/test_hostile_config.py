"""Config values: every value is checked up front against its row of the SETTINGS
table — type, range, choices — and a bad one stops Memex with one sentence naming the key,
the value and what is allowed (exit code 2); so are the environment's values."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest

from engine.cli import run
from engine.settings import SETTINGS, SettingsError, load_settings
from engine.settings.checks import INT_LIMIT, allowed, coerce
from engine.settings.table import Setting

BAD_CONFIGS: list[tuple[str, str, str]] = [  # (config text, key named, what is allowed)
    ('[search]\nhalf_lives = {slack = "fast"}\n', "search.half_lives.slack", "greater than 0"),
    ("[search]\nhalf_lives = {slack = -3}\n", "search.half_lives.slack", "greater than 0"),
    ("[search]\nhalf_lives = {slack = {a = 1}}\n", "search.half_lives.slack", "a number"),
    ("roots = [1, 2]\n", "roots[0]", "a string"),
    ('roots = "/data"\n', "roots", "a list of strings"),
    ("[search]\noverfetch = -5\n", "search.overfetch", "from 1 to 1000"),
    ("max_file_bytes = -1\n", "max_file_bytes", "of at least 1"),
    ("[search]\nrrf_k = 0\n", "search.rrf_k", "greater than 0"),
    ("[search]\nrrf_k = nan\n", "search.rrf_k", "greater than 0"),
    ("[search]\nlimit = 4611686018427387904\n", "search.limit", "from 1 to 100000"),
    ("[watch]\ndebounce_seconds = -1\n", "watch.debounce_seconds", "from 0 to 3600"),
    ("[search]\ndecay_floor = 2.0\n", "search.decay_floor", "from 0 to 1"),
    ("[embedder]\nbatch_size = 0\n", "embedder.batch_size", "from 1 to 4096"),
    ("[embedder]\nmax_tokens = 100000\n", "embedder.max_tokens", "from 1 to 512"),
    ('[embedder]\nname = "bogus"\n', "embedder.name", "one of 'local', 'openai'"),
    ('[desktop]\ntheme = "neon"\n', "desktop.theme", "one of 'system', 'light', 'dark'"),
    ('db = "x\\u0000y"\n', "db", "without NUL characters"),
]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("text", "key", "wanted"), BAD_CONFIGS, ids=[c[1] for c in BAD_CONFIGS])
def test_a_bad_config_value_is_one_sentence_and_exit_2(
    tmp_path: Path, text: str, key: str, wanted: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    code, out, err = cli("--search", "x", "--db", str(tmp_path / "m.db"), "--config", str(config))
    [line] = err.splitlines()
    assert code == 2 and out == ""
    assert line.startswith(f"memex: config file {config}: setting '{key}' must be "), line
    assert wanted in line and ", got " in line


def test_a_config_file_that_is_not_utf8_or_has_a_bom(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(b'db = "/tmp/caf\xe9.db"\n')
    with pytest.raises(SettingsError, match=r"is not UTF-8 text \(byte 14 is 0xe9\)"):
        load_settings(config, env={})
    config.write_bytes(b"\xef\xbb\xbf[search]\nlimit = 3\n")  # Notepad's BOM is harmless
    assert load_settings(config, env={}).search.limit == 3


def test_routes_are_checked_too(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    for text, wanted in (
        ('[[routes]]\npattern = "x/*.md"\nenabled = "no"\n', "enabled must be true or false"),
        ("[[routes]]\npattern = 5\n", "pattern must be a non-empty string, got 5"),
        ('[[routes]]\npattern = "x/*.md"\nsource_type = 3\n', "source_type must be a string"),
    ):
        config.write_text(text)
        with pytest.raises(SettingsError, match=f"config file {config}: .*{wanted}"):
            load_settings(config, env={})


def test_environment_values_are_checked_like_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "empty.toml"
    config.write_text("")
    with pytest.raises(SettingsError, match="environment variable MEMEX_DB: setting 'db'"):
        load_settings(config, env={"MEMEX_DB": "index\x00.db"})
    with pytest.raises(SettingsError, match=r"environment variable MEMEX_ROOT: .*'roots\[1\]'"):
        load_settings(config, env={"MEMEX_ROOT": "/a:/b\x00"})
    assert [str(r) for r in load_settings(config, env={"MEMEX_ROOT": "/a:/b"}).roots] == [
        "/a",
        "/b",
    ]


def test_flags_and_with_values_are_checked_too(tmp_path: Path) -> None:
    config = tmp_path / "empty.toml"
    config.write_text("")
    with pytest.raises(SettingsError, match="'search.limit' must be a whole number"):
        load_settings(config, env={}, search__limit=0)
    settings = load_settings(config, env={})
    with pytest.raises(SettingsError, match="'watch.debounce_seconds' must be a number from 0"):
        settings.with_values(watch__debounce_seconds=-1)


def out_of_range(setting: Setting) -> list[Any]:
    """Values every row must refuse, from what it declares and what no row may hold."""
    kind = float if setting.type is dict else setting.type
    bad: list[Any] = []
    if kind in (int, float):
        bad += [True, "many"]
        bad += [] if setting.low is None else [setting.low - 1]
        bad += [] if setting.high is None else [setting.high + 1]
        bad += [0, -1] if setting.positive else []
        bad += [math.nan, math.inf] if kind is float else [INT_LIMIT + 1]
    elif kind is str:
        bad += [5, "a\x00b"] + (["not-a-choice"] if setting.choices else [])
    elif kind is bool:
        bad += ["perhaps", 2]
    elif kind is list:
        bad += ["a string", [1], ["a\x00"]]
    if setting.type is dict:
        return [{"slack": value} for value in bad] + [["a list"]]
    return bad


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.name for s in SETTINGS])
def test_every_row_accepts_its_default_and_refuses_what_it_does_not_allow(
    setting: Setting,
) -> None:
    """Generic over the table: a row added later is checked the same way."""
    coerce(setting, setting.default)
    if setting.type in (int, float) or setting.type is dict:
        assert setting.low is not None or setting.positive, f"{setting.name}: declare a range"
    for value in out_of_range(setting):
        with pytest.raises(SettingsError, match=f"setting '{setting.name}"):
            coerce(setting, value)
    assert allowed(setting)  # what the docs print in their "allowed" column

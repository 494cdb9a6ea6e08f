"""The app reads its own options and its settings through engine.app_api, as the CLI would."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.app import app_parser, main, overrides_from
from engine.cli.common import settings_from
from engine.cli.search import search_parser


def test_the_app_reads_the_index_options_as_the_cli_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["--root", "notes", "--root", "~/mail", "--db", "idx/memex.db", "--toggle"]
    config = tmp_path / "config.toml"
    config.write_text("[search]\nlimit = 7\n", encoding="utf-8")
    argv += ["--config", str(config)]
    ours = app_parser().parse_args(argv)
    theirs = search_parser().parse_args(argv)
    assert ours.toggle and overrides_from(ours)["db"] == str(tmp_path / "idx" / "memex.db")
    assert overrides_from(ours)["roots"][0] == str(tmp_path / "notes")
    from engine.settings import settings_from_options

    mine = settings_from_options(ours.root, ours.db, ours.config)
    assert mine.values == settings_from(theirs).values and mine.search.limit == 7


def test_a_flag_the_app_does_not_take_is_one_sentence_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--toggle", "--frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err == "memex: unrecognized arguments: --frobnicate (see 'memex --help')\n"


def test_a_missing_config_file_is_one_sentence_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.toml"
    assert main(["--config", str(missing)]) == 2
    assert capsys.readouterr().err == f"memex: config file {missing} does not exist\n"

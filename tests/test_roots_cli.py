"""`memex roots add/list/remove`: the data folders in the user's config file (the one the app
reads), and what a search with no index says to run, end to end through the CLI."""

from __future__ import annotations

import io
import json
import shutil
import tomllib
from pathlib import Path

import pytest

from engine.cli import run
from engine.settings import default_config_path, load_settings

FIXTURES = Path(__file__).parent / "fixtures"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, with the user config, data and log folders inside it."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Downloads").mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    return home


def saved_roots(config: Path) -> list[str]:
    return list(tomllib.loads(config.read_text(encoding="utf-8")).get("roots", []))


def test_add_writes_absolute_expanded_paths_to_the_apps_config_file(home: Path) -> None:
    code, out, err = cli(
        "roots", "add", "~/Documents", str(home / "Downloads" / ".." / "Downloads")
    )
    assert (code, err) == (0, "")
    config = default_config_path()
    assert config.is_relative_to(home.parent / "xdg_config_home")
    assert saved_roots(config) == [str(home / "Documents"), str(home / "Downloads")]
    assert "added ~/Documents" in out and "memex reindex" in out
    assert load_settings().roots == (home / "Documents", home / "Downloads")  # what the app reads
    code, out, _ = cli("roots", "list")
    assert (code, out) == (0, "~/Documents\n~/Downloads\n")
    code, out, _ = cli("roots", "list", "--json")
    listed = json.loads(out)
    assert listed["config_file"] == str(config)
    assert listed["roots"] == [
        {"path": str(home / "Documents"), "exists": True},
        {"path": str(home / "Downloads"), "exists": True},
    ]


def test_duplicates_and_folders_inside_a_root_are_refused_and_change_nothing(home: Path) -> None:
    assert cli("roots", "add", "~/Documents")[0] == 0
    before = default_config_path().read_bytes()
    code, out, err = cli("roots", "add", str(home / "Documents"))
    assert (code, out) == (2, "")
    assert err == "memex: ~/Documents is already a data folder; nothing was added\n"
    (home / "Documents" / "notes").mkdir()
    code, _, err = cli("roots", "add", "~/Downloads", "~/Documents/notes")
    assert code == 2 and "inside the data folder ~/Documents" in err
    assert default_config_path().read_bytes() == before  # not even ~/Downloads went in


def test_a_missing_folder_or_a_file_is_a_clear_error_exit_2(home: Path) -> None:
    code, out, err = cli("roots", "add", "~/Dropbox")
    assert (code, out) == (2, "")
    assert err == "memex: ~/Dropbox does not exist; nothing was added\n"
    (home / "notes.txt").write_text("x")
    code, _, err = cli("roots", "add", "~/notes.txt")
    assert code == 2 and "~/notes.txt is not a folder" in err
    assert "Traceback" not in err and not default_config_path().exists()


def test_adding_a_folder_that_holds_roots_replaces_them(home: Path) -> None:
    assert cli("roots", "add", "~/Documents", "~/Downloads")[0] == 0
    code, out, _ = cli("roots", "add", "~")
    assert code == 0 and "it holds ~/Documents" in out and "it holds ~/Downloads" in out
    assert saved_roots(default_config_path()) == [str(home)]


def test_remove_and_removing_what_is_not_a_root(home: Path) -> None:
    assert cli("roots", "add", "~/Documents", "~/Downloads")[0] == 0
    code, out, _ = cli("roots", "remove", "~/Documents")
    assert code == 0 and out.startswith("removed ~/Documents")
    assert saved_roots(default_config_path()) == [str(home / "Downloads")]
    code, _, err = cli("roots", "remove", "~/Documents")
    assert code == 2 and "~/Documents is not a data folder" in err
    assert cli("roots", "remove", "~/Downloads")[0] == 0
    assert (
        cli("roots", "list")[1]
        == "no data folders yet: 'memex roots add ~' adds your home folder\n"
    )


def test_other_settings_and_routes_are_kept(tmp_path: Path, home: Path) -> None:
    config = tmp_path / "mine.toml"
    config.write_text(
        '[search]\nlimit = 7\n\n[[routes]]\npattern = "exports/*.jsonl"\nsource_type = "telegram"\n'
    )
    assert cli("roots", "add", "~/Documents", "--config", str(config))[0] == 0
    again = load_settings(config, env={})
    assert again.roots == (home / "Documents",) and again["search.limit"] == 7
    assert [r.pattern for r in again.routes] == ["exports/*.jsonl"]
    assert not default_config_path().exists()  # --config chose the file


def test_a_broken_config_file_is_one_sentence(tmp_path: Path, home: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("roots = [\n")
    code, _, err = cli("roots", "add", "~/Documents", "--config", str(config))
    assert code == 2 and "is not valid TOML" in err and "Traceback" not in err
    assert config.read_text() == "roots = [\n"


@pytest.mark.parametrize("argv", [["roots"], ["roots", "add"], ["roots", "list", "x"]])
def test_bad_usage_says_how(home: Path, argv: list[str]) -> None:
    code, out, err = cli(*argv)
    assert code == 2 and out == "" and err.startswith("memex: ") and err[-1] == "\n"


def test_first_run_end_to_end_no_index_then_roots_then_reindex_then_a_hit(home: Path) -> None:
    default_config_path().parent.mkdir(parents=True)
    default_config_path().write_text('[embedder]\nname = "hashing"\n')  # plumbing, not quality
    code, out, err = cli("--search", "retro")
    assert (code, out) == (3, "")
    assert "no data folder" in err and "'memex roots add ~'" in err and "'memex reindex'" in err
    code, _, err = cli("reindex")
    assert code == 2 and "run 'memex roots add ~'" in err
    export = home / "Downloads" / "acme-slack-export"
    shutil.copytree(
        FIXTURES / "slack" / "export", export, ignore=shutil.ignore_patterns("*.golden.*", "bad-*")
    )
    assert cli("roots", "add", "~")[0] == 0
    code, _, err = cli("--search", "retro")
    assert code == 3 and err == "memex: no index yet: run 'memex reindex' to index ~\n"
    code, out, err = cli("reindex")
    assert code == 0, err
    assert "new chunk(s)" in out
    code, out, err = cli("--search", "benchmark", "--json")
    assert code == 0, err
    hits = json.loads(out)["results"]
    assert hits and all(h["source_type"] == "slack" for h in hits)
    assert all(h["source_file"].startswith(str(export)) for h in hits)


def test_list_says_when_memex_root_is_used_instead(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("roots", "add", "~/Documents")[0] == 0
    monkeypatch.setenv("MEMEX_ROOT", str(home / "Downloads"))
    code, out, _ = cli("roots", "list")
    assert code == 0 and out.startswith("~/Documents\n")
    assert f"MEMEX_ROOT is set ({home / 'Downloads'})" in out
    assert json.loads(cli("roots", "list", "--json")[1])["MEMEX_ROOT"] == str(home / "Downloads")

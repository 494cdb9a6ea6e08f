"""Settings: declared once, read from file, environment and overrides, validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.settings import SETTINGS, SettingsError, load_settings


def test_precedence_file_then_environment_then_overrides(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('roots = ["/a"]\ndb = "/file.db"\n[search]\nlimit = 7\nrrf_k = 30\n'
                      '[[routes]]\npattern = "x/*.jsonl"\nsource_type = "telegram"\n')
    s = load_settings(config, env={})
    assert s["search.limit"] == 7 and s["search.rrf_k"] == 30.0
    assert s.routes[0].source_type == "telegram"
    s = load_settings(config, env={"MEMEX_DB": "/env.db", "MEMEX_ROOT": "/r1:/r2"})
    assert str(s.db_path) == "/env.db" and [str(r) for r in s.roots] == ["/r1", "/r2"]
    s = load_settings(config, env={"MEMEX_DB": "/env.db"}, db="/flag.db", search__limit=3)
    assert str(s.db_path) == "/flag.db" and s["search.limit"] == 3


def test_unknown_keys_and_bad_types_are_clear_errors(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[search]\nlimt = 5\n")
    with pytest.raises(SettingsError, match="unknown setting 'search.limt'"):
        load_settings(config, env={})
    config.write_text('[search]\nlimit = "many"\n')
    with pytest.raises(SettingsError, match="must be a int"):
        load_settings(config, env={})
    config.write_text("roots = [\n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(config, env={})
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", env={})


def test_config_from_environment_variable(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[search]\nlimit = 4\n")
    assert load_settings(env={"MEMEX_CONFIG": str(config)})["search.limit"] == 4


def test_every_setting_is_documented() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text()
    for setting in SETTINGS:
        assert setting.help.strip(), setting.name
        assert f"`{setting.name}`" in docs, f"{setting.name} missing from docs/configuration.md"

"""Settings: declared once, read from file, environment and overrides, validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.settings import SETTINGS, SettingsError, load_settings


def test_precedence_file_then_environment_then_overrides(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'roots = ["/a"]\ndb = "/file.db"\n[search]\nlimit = 7\nrrf_k = 30\n'
        '[[routes]]\npattern = "x/*.jsonl"\nsource_type = "telegram"\n'
    )
    s = load_settings(config, env={})
    assert s.search.limit == 7 and s.search.rrf_k == 30.0
    assert s.routes[0].source_type == "telegram"
    s = load_settings(config, env={"MEMEX_DB": "/env.db", "MEMEX_ROOT": "/r1:/r2"})
    assert str(s.db_path) == "/env.db" and [str(r) for r in s.roots] == ["/r1", "/r2"]
    s = load_settings(config, env={"MEMEX_DB": "/env.db"}, db="/flag.db", search__limit=3)
    assert str(s.db_path) == "/flag.db" and s.search.limit == 3


def test_unknown_keys_and_bad_types_are_clear_errors(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[search]\nlimt = 5\n")
    with pytest.raises(SettingsError, match="unknown setting 'search.limt'"):
        load_settings(config, env={})
    config.write_text('[search]\nlimit = "many"\n')
    with pytest.raises(SettingsError, match="'search.limit' must be a whole number from 1 to"):
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


def test_every_setting_is_a_field_of_one_typed_view() -> None:
    """The typed views cover the declared table exactly, with matching types."""
    import dataclasses
    import typing

    from engine import settings as module

    top_level = {
        "roots",
        "db",
        "log_dir",
        "people_file",
        "max_file_bytes",
        "follow_symlinks_outside_roots",
        "languages",
    }
    covered = set(top_level)
    for prefix, view in module.VIEWS.items():
        hints = typing.get_type_hints(view)
        for field in dataclasses.fields(view):
            name = f"{prefix}.{field.name}"
            declared = module.SETTINGS_BY_NAME[name].type
            origin = typing.get_origin(hints[field.name]) or hints[field.name]
            expected = {list: tuple, dict: typing.get_origin(typing.Mapping[str, float])}
            assert origin in (declared, expected.get(declared)), (name, origin, declared)
            covered.add(name)
    assert covered == set(module.SETTINGS_BY_NAME)


def test_views_read_the_values_and_follow_with_values() -> None:
    s = load_settings(env={}, search__limit=4, desktop__disabled_types=["cgm"])
    assert s.search.limit == 4 and s.desktop.disabled_types == ("cgm",)
    changed = s.with_values(search__limit=9)
    assert changed.search.limit == 9 and s.search.limit == 4


def test_the_views_are_made_from_the_table_and_their_stub_is_current() -> None:
    """A setting is declared once, as a row: the view classes are built from the table at
    import, and views.pyi (what mypy reads) is generated from it too."""
    import dataclasses

    from engine.settings import views

    stub = Path(views.__file__).with_suffix(".pyi").read_text(encoding="utf-8")
    assert stub == views.stub_text(), "run: python scripts/gen_settings_views.py"
    for prefix, view in views.VIEWS.items():
        assert dataclasses.is_dataclass(view) and view.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert getattr(views, view.__name__) is view and view.__module__ == views.__name__
        rows = [s.name for s in SETTINGS if s.name.startswith(f"{prefix}.")]
        assert [f.metadata["setting"] for f in dataclasses.fields(view)] == rows
        assert f"class {view.__name__}:" in stub


def test_a_view_is_frozen_and_hashable() -> None:
    import dataclasses

    s = load_settings(env={})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.embedder.name = "openai"  # type: ignore[misc]
    assert hash(s.embedder) == hash(load_settings(env={}).embedder)
    assert {s.embedder: 1}[load_settings(env={}).embedder] == 1  # the model pool's key


def test_every_view_is_an_attribute_of_settings() -> None:
    from engine.settings import VIEWS

    s = load_settings(env={})
    for prefix, view in VIEWS.items():
        assert isinstance(getattr(s, prefix), view), prefix

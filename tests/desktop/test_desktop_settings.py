"""The settings dialog: the config file is written without the key; the key goes to the
keyring (an in-memory backend registered for the test); changes apply without a restart."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from desktop_helpers import start_app
from memory_keyring import installed
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from desktop.config_file import write_config
from desktop.settings_dialog import SettingsDialog
from engine.settings import Settings, load_settings

SECRET = "sk-test-7f3a9c1e"


@pytest.fixture
def memory_keyring() -> Iterator[dict[str, str]]:
    """The project's in-memory keyring backend, registered for one test."""
    with installed() as store:
        yield store


@pytest.fixture
def configured(tmp_path: Path) -> Settings:
    config = tmp_path / "config.toml"
    config.write_text(
        f'roots = ["{tmp_path / "vita"}"]\n\n[search]\nlimit = 7\n\n'
        '[[routes]]\npattern = "exports/*.jsonl"\nsource_type = "telegram"\n'
    )
    return load_settings(config, env={})


def _check(dialog: SettingsDialog, source_type: str, on: bool) -> None:
    for i in range(dialog.types.count()):
        item = dialog.types.item(i)
        if item.data(Qt.ItemDataRole.UserRole) == source_type:
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)


def test_settings_round_trip_keeps_the_key_out_of_the_file(
    qtbot: Any, tmp_path: Path, configured: Settings, memory_keyring: dict[str, str]
) -> None:
    dialog = SettingsDialog(configured, found_types=["garmin", "note"])
    qtbot.addWidget(dialog)
    asked: list[str] = []
    dialog.confirm = lambda text: asked.append(text) or True
    dialog.roots.addItem(str(tmp_path / "notes"))
    _check(dialog, "garmin", False)
    dialog.embedder.setCurrentIndex(dialog.embedder.findData("compatible"))
    dialog.base_url.setText("http://127.0.0.1:11434/v1")
    dialog.model.setText("nomic-embed-text")
    dialog.dimensions.setValue(768)
    dialog.api_key.setText(SECRET)
    dialog.hotkey.setKeySequence(QKeySequence("Ctrl+Shift+K"))
    dialog.start_at_login.setChecked(False)
    dialog.watching.setChecked(False)
    saved: list[dict[str, Any]] = []
    dialog.saved.connect(saved.append)
    assert dialog.save()
    text = configured.config_path.read_text()
    assert SECRET not in text and "sk-" not in text
    assert memory_keyring == {"memex/openai": SECRET}
    assert asked and "Switch the embedder" in asked[0]
    again = load_settings(configured.config_path, env={})
    assert again["roots"] == [str(tmp_path / "vita"), str(tmp_path / "notes")]
    assert again["embedder.name"] == "openai"
    assert again["embedder.base_url"] == "http://127.0.0.1:11434/v1"
    assert (again["embedder.model"], again["embedder.dimensions"]) == ("nomic-embed-text", 768)
    assert again["desktop.hotkey"] == "<ctrl>+<shift>+k"
    assert again["desktop.disabled_types"] == ["garmin"] and again["desktop.watching"] is False
    assert again["search.limit"] == 7 and again.routes == configured.routes  # kept as they were
    assert set(saved[0]) >= {"roots", "embedder.name", "desktop.hotkey"}
    assert "desktop.theme" not in saved[0]  # unchanged settings are not rewritten


def test_declining_the_embedder_switch_saves_nothing(
    qtbot: Any, configured: Settings, memory_keyring: dict[str, str]
) -> None:
    before = configured.config_path.read_text()
    dialog = SettingsDialog(configured)
    qtbot.addWidget(dialog)
    dialog.confirm = lambda text: False
    dialog.embedder.setCurrentIndex(dialog.embedder.findData("openai"))
    dialog.api_key.setText(SECRET)
    assert not dialog.save()
    assert configured.config_path.read_text() == before and not memory_keyring


def test_no_keyring_is_a_clear_message_not_a_file(qtbot: Any, configured: Settings) -> None:
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        dialog = SettingsDialog(configured)
        qtbot.addWidget(dialog)
        dialog.confirm = lambda text: True
        dialog.embedder.setCurrentIndex(dialog.embedder.findData("openai"))
        dialog.api_key.setText(SECRET)
        assert not dialog.save()
        assert "OPENAI_API_KEY" in dialog.error.text()
        assert SECRET not in configured.config_path.read_text()
    finally:
        keyring.set_keyring(previous)


def test_the_config_writer_refuses_secrets_and_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    with pytest.raises(KeyError):
        write_config(path, {"embedder.api_key": SECRET})
    with pytest.raises(KeyError):
        write_config(path, {"nonsense": 1})
    assert not path.exists()
    write_config(path, {"desktop.theme": "dark", "roots": ["/x"]})
    assert tomllib.loads(path.read_text()) == {"roots": ["/x"], "desktop": {"theme": "dark"}}


def test_saved_settings_apply_without_a_restart(
    qtbot: Any,
    qapp: Any,
    tmp_path: Path,
    demo_index: Settings,
    opener: Any,
    memory_keyring: dict[str, str],
) -> None:
    config = tmp_path / "app-config.toml"
    config.write_text("")
    overrides = {
        "roots": [str(demo_index.roots[0])],
        "db": str(demo_index.db_path),
        "log_dir": str(tmp_path / "logs"),
        "desktop__watching": False,
    }
    settings = load_settings(config, env={}, now=demo_index.now, **overrides)
    memex = start_app(qapp, settings, opener, overrides=overrides)
    qtbot.addWidget(memex.window)
    try:
        dialog = memex.open_settings()
        dialog.theme.setCurrentText("dark")
        dialog.hotkey.setKeySequence(QKeySequence("Ctrl+Alt+M"))
        dialog.editor.setText("code --goto {file}:{line}")
        assert dialog.save()
        assert memex.settings.desktop.theme == "dark" and memex.theme.dark
        assert memex.settings.desktop.hotkey == "<ctrl>+<alt>+m"
        assert memex.tray.search_action.text().endswith("Ctrl+Alt+M")
        assert memex.tasks.settings is memex.settings  # the searchers use the new settings
        assert memex.settings.roots == settings.roots  # the --root override is kept
    finally:
        memex.shutdown()
        qapp.setQuitOnLastWindowClosed(True)


def test_the_data_tab_lists_what_each_folder_holds_per_export(qtbot: Any, tmp_path: Path) -> None:
    """The same list as `memex discover` and the welcome: one line per export, its icon."""
    from first_run_home import build_home

    from desktop.survey import survey_folder

    home = build_home(tmp_path / "home")
    config = tmp_path / "config.toml"
    config.write_text(f'roots = ["{home}", "{tmp_path / "gone"}"]\n')
    settings = load_settings(config, env={})
    asked: list[Path] = []

    def discover(folder: Path, on_done: Any) -> None:  # the read pool's answer, at once
        asked.append(folder)
        on_done(survey_folder(settings, folder))

    dialog = SettingsDialog(settings, discover=discover)
    qtbot.addWidget(dialog)
    lines = [dialog.exports.item(i).text() for i in range(dialog.exports.count())]
    assert asked == [home, tmp_path / "gone"]
    assert any("Slack export" in line and "day file(s)" in line for line in lines)
    assert any(line.startswith("WhatsApp · ") for line in lines)  # the type first
    assert "cannot look in" in dialog.exports_note.text()  # the folder that is gone
    assert dialog.exports.textElideMode() == Qt.TextElideMode.ElideMiddle
    assert [dialog.exports.item(i).toolTip() for i in range(dialog.exports.count())] == lines
    dialog.show()  # on its first tab, Data
    before = dialog.exports.height()
    assert before >= 6 * dialog.exports.sizeHintForRow(0)
    dialog.resize(dialog.width(), dialog.height() + 400)
    # The folders' and the types' lists stop at a few lines: the exports take the rest.
    qtbot.waitUntil(lambda: dialog.exports.height() > before + 250)
    assert dialog.exports.height() > max(dialog.roots.height(), dialog.types.height())

"""The first run: with no data folder the window shows the welcome; a folder chosen in the
(native) picker is listed per export; Index saves it in the config file and indexes it, and
the search finds it. The Data tab lists only the types found, by their labels."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from desktop_helpers import RecordingOpener, start_app, type_query, wait_for
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from desktop.controller import MemexApp
from desktop.settings_dialog import SettingsDialog
from desktop.welcome import WelcomePage
from engine.settings import Settings, load_settings
from tests.first_run_home import SLACK, build_home


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A config file with no roots; index and logs in the test's folder."""
    path = tmp_path / "config" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        f'db = "{tmp_path / "index" / "memex.db"}"\nlog_dir = "{tmp_path / "logs"}"\n\n'
        '[embedder]\nname = "hashing"\n\n[desktop]\nwatching = false\n'
    )
    return path


@pytest.fixture
def first_run(qapp: Any, qtbot: Any, config: Path) -> Iterator[MemexApp]:
    app = start_app(qapp, load_settings(config, env={}), RecordingOpener())
    qtbot.addWidget(app.window)
    app.window.summon()
    yield app
    app.shutdown()
    qapp.setQuitOnLastWindowClosed(True)


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    return build_home(tmp_path / "home")


def welcome_of(app: MemexApp) -> WelcomePage:
    assert app.welcome is not None
    return app.welcome


def pick(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[tuple[Any, ...]]:
    """The native folder picker, answered with `folder`; the calls it got."""
    calls: list[tuple[Any, ...]] = []

    def answer(*args: Any, **kwargs: Any) -> str:
        calls.append(args)
        return str(folder)

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", answer)
    return calls


def surveyed(qtbot: Any, app: MemexApp, monkeypatch: pytest.MonkeyPatch, folder: Path) -> Any:
    calls = pick(monkeypatch, folder)
    welcome = welcome_of(app)
    qtbot.mouseClick(welcome.add_folder, Qt.MouseButton.LeftButton)
    wait_for(qtbot, lambda: welcome.survey is not None)
    return calls


def test_the_welcome_is_shown_with_no_roots(first_run: MemexApp) -> None:
    window, welcome = first_run.window, welcome_of(first_run)
    assert window.welcoming and window.pages.currentWidget() is welcome
    assert welcome.isVisible() and not window.query.isVisible()
    assert welcome.add_folder.isVisible() and welcome.use_home.isVisible()
    assert not welcome.index.isVisible()  # nothing to index before a folder is chosen


def test_the_welcome_is_not_shown_with_roots(memex: MemexApp) -> None:
    assert not memex.window.welcoming and memex.welcome is None
    assert memex.window.query.isVisible()


def test_a_chosen_folder_lists_what_was_recognised_per_export(
    qtbot: Any, first_run: MemexApp, layer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = surveyed(qtbot, first_run, monkeypatch, layer)
    welcome = welcome_of(first_run)
    assert Path(calls[0][2]) == Path.home().resolve()  # the picker starts in the home folder
    lines = welcome.lines()
    slack = next(line for line in lines if line.startswith(f"Slack export · {SLACK} — "))
    assert "1 channel(s)" in slack and "2 DM(s)" in slack and "3 day file(s)" in slack
    assert "Obsidian vault · Obsidian/vault — 2 note(s)" in lines  # the type first
    assert any(line.endswith(" · Downloads/WhatsApp Chat with Raj Patel.txt") for line in lines)
    exports = welcome.exports
    tips = [exports.item(i).toolTip() for i in range(exports.count())]
    assert tips == lines  # the whole line, where the list elides it in the middle
    assert exports.textElideMode() == Qt.TextElideMode.ElideMiddle and not exports.wordWrap()
    assert len(lines) == 5  # no decoy became an export
    assert "no known format" in welcome.skipped.text() and "node_modules" in welcome.skipped.text()
    assert welcome.index.isVisible() and welcome.index.isEnabled()
    assert welcome.heading.text().endswith("found 5 exports:")


def test_the_export_list_takes_the_height_the_window_leaves(
    qtbot: Any, first_run: MemexApp, layer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    surveyed(qtbot, first_run, monkeypatch, layer)
    window, exports = first_run.window, welcome_of(first_run).exports
    rows = exports.sizeHintForRow(0)
    assert exports.height() >= 6 * rows  # more than the 5 lines it holds, not cramped
    before = exports.height()
    window.resize(window.width(), window.height() + 200)
    qtbot.waitUntil(lambda: exports.height() > before + 150)  # the list grows with it
    window.resize(window.width(), window.height() - 200)
    qtbot.waitUntil(lambda: exports.height() == before)


def test_looking_shows_a_busy_bar_and_holds_the_buttons(
    qtbot: Any, first_run: MemexApp, layer: Path
) -> None:
    welcome = welcome_of(first_run)
    welcome.look_at(layer)  # the answer comes back through the event loop, not before
    assert welcome.busy.isVisible() and welcome.heading.text() == f"Looking through {layer}…"
    assert not welcome.add_folder.isEnabled() and not welcome.index.isVisible()
    wait_for(qtbot, lambda: welcome.survey is not None)
    assert not welcome.busy.isVisible() and welcome.add_folder.isEnabled()
    assert len(welcome.lines()) == 5


def test_a_folder_with_nothing_known_offers_no_index(
    qtbot: Any, first_run: MemexApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "Pictures"
    empty.mkdir()
    (empty / "IMG_0001.jpg").write_bytes(b"\xff\xd8\xff")
    surveyed(qtbot, first_run, monkeypatch, empty)
    welcome = welcome_of(first_run)
    assert welcome.lines() == [] and not welcome.index.isVisible()
    assert welcome.heading.text().startswith("Nothing Memex reads was found")
    assert welcome.error.isVisible() and "another folder" in welcome.error.text()


def test_index_saves_the_root_indexes_it_and_a_search_finds_it(
    qtbot: Any, first_run: MemexApp, layer: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    surveyed(qtbot, first_run, monkeypatch, layer)
    qtbot.mouseClick(welcome_of(first_run).index, Qt.MouseButton.LeftButton)
    assert tomllib.loads(config.read_text())["roots"] == [str(layer.resolve())]
    assert not first_run.window.welcoming and first_run.window.query.isVisible()
    assert first_run.settings.roots == (layer.resolve(),)
    wait_for(qtbot, lambda: first_run.last_status is not None and first_run.last_status.chunks > 0)
    type_query(qtbot, first_run, "benchmark")
    hits = first_run.window.model.results
    assert hits and hits[0].source_file.startswith(str(layer / SLACK))


def test_the_data_tab_lists_only_the_types_found(
    qtbot: Any, first_run: MemexApp, layer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    surveyed(qtbot, first_run, monkeypatch, layer)
    dialog = first_run.open_settings()
    qtbot.addWidget(dialog)
    labels = [dialog.types.item(i).text() for i in range(dialog.types.count())]
    assert labels == sorted(labels, key=str.lower)
    assert {"Slack", "WhatsApp", "Meeting"} <= set(labels) and len(labels) == 5
    assert not {"Board", "Glucose", "Checkin", "Garmin"} & set(labels)
    dialog.reject()


def test_the_data_tab_keeps_switched_off_types_and_hides_profiles(
    qtbot: Any, settings_factory: Any
) -> None:
    settings: Settings = settings_factory(desktop__disabled_types=["garmin"])
    dialog = SettingsDialog(settings, found_types=["slack", "profile", "whatsapp"])
    qtbot.addWidget(dialog)
    shown = {
        dialog.types.item(i).data(Qt.ItemDataRole.UserRole): dialog.types.item(i)
        for i in range(dialog.types.count())
    }
    assert set(shown) == {"slack", "whatsapp", "garmin"}
    assert shown["garmin"].checkState() == Qt.CheckState.Unchecked
    assert shown["slack"].text() == "Slack" and shown["whatsapp"].text() == "WhatsApp"
    assert dialog.values()["desktop.disabled_types"] == ["garmin"]

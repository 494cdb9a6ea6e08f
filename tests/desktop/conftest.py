"""Desktop fixtures: the real app on a private copy of the demo index, offscreen."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("PySide6")

from desktop_helpers import RecordingOpener, start_app, wait_for  # noqa: E402

from desktop.controller import MemexApp  # noqa: E402
from engine.search import Searcher  # noqa: E402
from engine.settings import Settings  # noqa: E402


@pytest.fixture(autouse=True)
def collected_on_the_gui_thread() -> Iterator[None]:
    """What a test leaves (its app's widgets, held in reference cycles) is collected here,
    on the GUI thread, after its fixtures end: left to a later automatic collection, it may
    be collected on a read-pool thread of the next test's app, which deletes Qt objects off
    their thread and can crash the process (a segfault while "Garbage-collecting")."""
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def app_look_restored(qapp: Any) -> Iterator[None]:
    """Each test starts with the application's look as Qt made it: an app a test started
    sets the style, palette, style sheet and font for the whole QApplication
    (desktop/theme.py `apply`), and a later test measuring its widgets would measure them
    in that look."""
    style, palette = qapp.style().name(), qapp.palette()
    sheet, font = qapp.styleSheet(), qapp.font()
    yield
    qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    qapp.setFont(font)


@pytest.fixture
def opener() -> RecordingOpener:
    return RecordingOpener()


@pytest.fixture
def memex(
    qapp: Any, qtbot: Any, demo_index: Settings, opener: RecordingOpener
) -> Iterator[MemexApp]:
    """The app on the demo index, without watcher, tray or hotkey; the window shown."""
    app = start_app(qapp, demo_index.with_values(desktop__watching=False), opener)
    qtbot.addWidget(app.window)
    app.window.summon()
    wait_for(qtbot, lambda: app.last_status is not None)
    yield app
    app.shutdown()
    qapp.setQuitOnLastWindowClosed(True)


@pytest.fixture
def searcher(demo_index: Settings) -> Iterator[Searcher]:
    """The engine, directly, to compare the window's answers against."""
    s = Searcher(demo_index)
    yield s
    s.close()

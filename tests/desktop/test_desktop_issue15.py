"""The window and the ranking stages: the person first, related hits marked, opens recorded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from desktop_helpers import RecordingOpener, start_app, type_query, wait_for
from PySide6.QtCore import Qt

from desktop.controller import MemexApp
from desktop.results import RELATED_LABEL, meta_text
from engine.settings import Settings
from engine.store import db, opens


def test_a_name_shows_the_person_card_first(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "Priya")
    window = memex.window
    assert window.last_answer is not None and window.last_answer.response is not None
    first = window.last_answer.response.results[0]
    assert first.id == "profile:priya-raman"  # the engine's first result is the profile
    assert window.card.isVisible() and window.card.name.text() == "Priya Raman"
    card, hits = window.card.geometry(), window.body.geometry()
    assert window.card.parentWidget() is window.body.parentWidget()
    assert card.bottom() < hits.top()  # the card above the hits
    assert all(r.source_type != "profile" for r in window.model.results)
    top = window.model.results[0]
    assert "Priya" in top.content or "Priya" in top.title  # then what names her


@pytest.fixture
def related_app(
    qapp: Any, qtbot: Any, demo_index: Settings, opener: RecordingOpener
) -> Iterator[MemexApp]:
    settings = demo_index.with_values(desktop__watching=False, search__related=True)
    app = start_app(qapp, settings, opener)
    qtbot.addWidget(app.window)
    app.window.summon()
    wait_for(qtbot, lambda: app.last_status is not None)
    yield app
    app.shutdown()
    qapp.setQuitOnLastWindowClosed(True)


def test_related_hits_are_listed_last_and_marked(qtbot: Any, related_app: MemexApp) -> None:
    type_query(qtbot, related_app, "Modbus register map")
    window = related_app.window
    results = window.model.results
    flags = [r.related for r in results]
    assert any(flags) and flags == sorted(flags)  # the related ones after every direct hit
    related = [r for r in results if r.related]
    assert all(meta_text(r).startswith(f"{RELATED_LABEL}  ·  ") for r in related)
    assert not any(meta_text(r).startswith(RELATED_LABEL) for r in results if not r.related)
    direct = len(results) - len(related)
    assert window.status.text().startswith(f"{direct} hits")
    window.list.scrollToBottom()
    assert not window.list.grab().isNull()  # the delegate paints them


def test_enter_records_the_open_for_frecency(
    qtbot: Any, memex: MemexApp, opener: RecordingOpener
) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    qtbot.keyClick(window.query, Qt.Key.Key_Down)
    hit = window.current()
    assert hit is not None
    qtbot.keyClick(window.query, Qt.Key.Key_Return)
    assert opener.opened and opener.opened[0][0] == hit.source_file

    def recorded() -> bool:
        conn = db.connect(memex.settings.db_path, create=False)
        try:
            return hit.id in opens.open_times(conn, [hit.id])
        finally:
            conn.close()

    wait_for(qtbot, recorded)

"""The search window against the real demo index: typing, staleness, keys, opening, copying."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from desktop_helpers import type_query, wait_for
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from desktop.controller import MemexApp
from desktop.formatting import split_header
from desktop.requests import SearchAnswer, SearchRequest
from engine.embedders import EmbedderError
from engine.parts import body_start
from engine.search import Searcher
from engine.search.present.neighbours import neighbours
from engine.store import db


def test_typing_searches_and_fills_the_list(
    qtbot: Any, memex: MemexApp, searcher: Searcher
) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    shown = [r.id for r in window.model.results]
    engine = searcher.search("standup", window.limit, prefix=True)
    assert shown == [r.id for r in engine.results if r.source_type != "profile"]
    assert shown, "the demo layer has standups"
    assert window.list.currentIndex().row() == 0
    assert window.preview.result is window.model.results[0]
    status = window.status.text()
    assert f"{len(shown)} hits" in status and "ms" in status and engine.mode in status
    assert any("**" in r.snippet for r in window.model.results)  # terms marked for bold


def test_a_slow_stale_answer_never_overwrites_a_newer_one(qtbot: Any, memex: MemexApp) -> None:
    tasks = memex.tasks
    real = tasks.search_fn
    release = threading.Event()

    def slow_for_old_query(request: SearchRequest) -> SearchAnswer:
        if request.query == "bonfire":
            release.wait(60)
        return real(request)

    delivered: list[str] = []
    finish = tasks._finish

    def counting_finish(future: Any, on_done: Any, on_error: Any, channel: Any, seq: int) -> None:
        if channel == "search":
            delivered.append(future.result().request.query)
        finish(future, on_done, on_error, channel, seq)

    tasks.search_fn = slow_for_old_query
    tasks._finish = counting_finish  # type: ignore[method-assign]
    window = memex.window
    window.query.setText("bonfire")
    window.search_now()
    type_query(qtbot, memex, "standup")
    fresh = [r.id for r in window.model.results]
    release.set()
    wait_for(qtbot, lambda: "bonfire" in delivered)  # the stale answer came back …
    assert window.last_answer is not None
    assert window.last_answer.request.query == "standup"  # … and was dropped
    assert [r.id for r in window.model.results] == fresh


def test_keyboard_moves_through_the_hits(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "the")
    window = memex.window
    rows = window.model.rowCount()
    assert rows >= 5

    def row() -> int:
        return window.list.currentIndex().row()

    qtbot.keyClick(window.query, Qt.Key.Key_Down)
    qtbot.keyClick(window.query, Qt.Key.Key_Down)
    assert row() == 2
    qtbot.keyClick(window.query, Qt.Key.Key_Up)
    assert row() == 1
    qtbot.keyClick(window.query, Qt.Key.Key_End)
    assert row() == rows - 1
    qtbot.keyClick(window.query, Qt.Key.Key_Home)
    assert row() == 0
    qtbot.keyClick(window.query, Qt.Key.Key_PageDown)
    assert 0 < row() < rows
    qtbot.keyClick(window.query, Qt.Key.Key_Up, Qt.KeyboardModifier.NoModifier)
    assert window.preview.result is window.model.results[row()]


def test_enter_opens_the_source_at_its_line(qtbot: Any, memex: MemexApp, opener: Any) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    window.can_hide = True  # as with a tray or a hotkey
    target = next(i for i, r in enumerate(window.model.results) if r.location.startswith("line:"))
    for _ in range(target):
        qtbot.keyClick(window.query, Qt.Key.Key_Down)
    hit = window.model.results[target]
    qtbot.keyClick(window.query, Qt.Key.Key_Return)
    line = int(hit.location.split(":")[1].split("#")[0])
    assert opener.opened == [(hit.source_file, line)]
    assert not window.isVisible()  # like Spotlight: opening dismisses the window
    window.summon()
    qtbot.keyClick(window.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert opener.revealed == [hit.source_file]


def test_ctrl_c_copies_the_hit_unless_text_is_selected(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    window.query.deselect()
    qtbot.keyClick(window.query, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == window.model.results[0].content
    window.query.selectAll()
    qtbot.keyClick(window.query, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "standup"


def test_preview_shows_the_neighbours(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    hit = window.model.results[0]
    reader = db.connect(memex.settings.db_path, create=False)
    around = neighbours(reader, hit.id)
    reader.close()
    context = [
        line.strip()
        for c in around
        if not c.is_hit
        for line in split_header(c.content)[1].splitlines()  # header lines are not shown
        if len(line.strip()) > 12 and line.strip() not in hit.content
    ]
    assert context, "the first hit's file has other chunks with their own lines"
    wait_for(qtbot, lambda: context[0] in window.preview.toPlainText())
    assert split_header(hit.content)[1].splitlines()[0] in window.preview.toPlainText()


def repeats_its_title(title: str) -> bool:
    """ "Pricing model › Pricing model" or "… › Pricing model > Current": said twice."""
    head, arrow, path = title.partition(" › ")
    return bool(arrow) and path.split(" > ")[0].casefold() == head.casefold()


def test_a_hit_title_says_the_note_and_its_section_once(qtbot: Any, memex: MemexApp) -> None:
    # pricing-model.md is titled "Pricing model" and starts with "# Pricing model".
    type_query(qtbot, memex, "pricing")
    model = memex.window.model
    titles = [model.data(model.index(row)) for row in range(model.rowCount())]
    pricing = [r.title for r in model.results if r.source_file.endswith("pricing-model.md")]
    assert pricing, "the demo's pricing note answers “pricing”"
    assert all(t.startswith("Pricing model › ") and not repeats_its_title(t) for t in pricing)
    assert not [t for t in titles if repeats_its_title(t)]


def test_an_older_index_repeated_title_is_shown_once(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "pricing")
    window = memex.window
    hit = window.model.results[0]
    old = replace(hit, title="Rajesh Kumar › Rajesh Kumar")  # as indexes before the fix hold
    deeper = replace(hit, title="Rajesh Kumar › Rajesh Kumar > Role")
    window.model.set_results([old, deeper])
    shown = [window.model.data(window.model.index(row)) for row in range(2)]
    assert shown == ["Rajesh Kumar", "Rajesh Kumar › Role"]
    window.list.setCurrentIndex(window.model.index(0))
    wait_for(qtbot, lambda: window.preview.result is old)
    text = window.preview.toPlainText()
    assert text.splitlines()[0] == "Rajesh Kumar" and "Rajesh Kumar ›" not in text


def test_the_preview_starts_with_the_notes_own_text(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "pricing")
    window = memex.window
    results = window.model.results
    row = next(i for i, r in enumerate(results) if r.source_file.endswith("pricing-model.md"))
    hit = window.model.results[row]
    header = hit.content[: body_start(hit.content)]
    assert header.startswith("Note: Pricing model\nAliases: ") and "\nTags: " in header
    reader = db.connect(memex.settings.db_path, create=False)
    others = [c for c in neighbours(reader, hit.id) if not c.is_hit]
    reader.close()
    assert others, "the pricing note has more than one section"
    window.list.setCurrentIndex(window.model.index(row))
    first_other = others[0].content[body_start(others[0].content) :].splitlines()[0]
    wait_for(qtbot, lambda: first_other in window.preview.toPlainText())  # neighbours in
    text = window.preview.toPlainText()
    generated = header + "".join(c.content[: body_start(c.content)] for c in others)
    for line in filter(str.strip, generated.splitlines()):
        assert line not in text, line  # no "Note: …", "Aliases: …", "Tags: …", "Section: …"
    assert hit.content[body_start(hit.content) :].splitlines()[0] in text
    lines = text.splitlines()
    assert lines[0] == window.model.data(window.model.index(row))  # the title first
    assert "#heliotrope #pricing #decisions · aka pricing, how we charge" in lines


def test_empty_no_results_and_keyword_only_states(qtbot: Any, memex: MemexApp) -> None:
    window = memex.window
    assert window.body.currentIndex() == 1 and "Type to search" in window.message.text()
    type_query(qtbot, memex, "zqxjkvw")
    if window.model.rowCount() == 0:
        assert "No results" in window.message.text() and window.body.currentIndex() == 1

    class DeadEmbedder:
        name, model_id, dim = "local", "missing-model", 384

        def embed(self, texts: Any) -> Any:
            raise EmbedderError("the model file is missing")

        embed_query = embed

    broken = Searcher(memex.settings, embedder=DeadEmbedder())  # type: ignore[arg-type]
    memex.tasks.search_fn = lambda r: SearchAnswer(
        r, broken.search(r.query, r.limit, prefix=r.prefix), {}
    )
    type_query(qtbot, memex, "standup")
    broken.close()
    assert window.last_answer is not None and window.last_answer.response is not None
    assert window.last_answer.response.mode == "bm25"
    assert window.banner.isVisible() and "Keyword results only" in window.banner.text()
    assert window.model.rowCount() > 0 and "bm25" in window.status.text()
    window.query.clear()
    window.search_now()
    assert window.model.rowCount() == 0 and not window.banner.isVisible()
    assert "Type to search" in window.message.text()


def test_escape_hides_and_toggle_brings_it_back(qtbot: Any, memex: MemexApp) -> None:
    window = memex.window
    window.can_hide = True  # as with a tray or a hotkey
    qtbot.keyClick(window.query, Qt.Key.Key_Escape)
    assert not window.isVisible()
    memex.command("toggle")
    assert window.isVisible()
    assert window.focusWidget() is window.query  # typing goes to the query at once


def test_without_tray_or_hotkey_escape_minimises_instead(qtbot: Any, memex: MemexApp) -> None:
    window = memex.window
    assert not window.can_hide  # the fixture's app has neither: hiding would lose it
    qtbot.keyClick(window.query, Qt.Key.Key_Escape)
    assert window.isVisible() and window.isMinimized()


def test_a_preview_deleted_before_its_scroll_raises_nothing(qtbot: Any, memex: MemexApp) -> None:
    """The scroll to the hit waits for layout; a window closed meanwhile drops it quietly."""
    import shiboken6
    from PySide6.QtWidgets import QApplication

    from desktop.preview import Preview

    type_query(qtbot, memex, "standup")
    hit = memex.window.model.results[0]
    reader = db.connect(memex.settings.db_path, create=False)
    around = neighbours(reader, hit.id)
    reader.close()
    assert any(not c.is_hit for c in around), "the scroll is deferred only with context"
    preview = Preview()
    preview.show_result(hit, around)
    shiboken6.delete(preview)
    QApplication.processEvents()  # pytest-qt fails the test on an exception raised here

"""Filters you can see and leave (desktop/scope.py): the query line shows them, a new
question starts without them, a near-empty filtered result offers the search without
them, the keys go on to the query after a chip; and a failed open says so with its path."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from desktop_helpers import RecordingOpener, type_query, wait_for, wait_request
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.controller import MemexApp


def turn_on_a_chip(qtbot: Any, memex: MemexApp) -> str:
    bar = memex.window.filters
    source_type = next(t for t, n in bar.counts.items() if n)
    qtbot.mouseClick(bar.chips[source_type], Qt.MouseButton.LeftButton)
    wait_request(qtbot, memex)
    return source_type


def test_a_chip_shows_in_the_query_line_and_its_cross_turns_it_off(
    qtbot: Any, memex: MemexApp
) -> None:
    window = memex.window
    type_query(qtbot, memex, "standup")
    assert not window.scope.button.isVisible()
    source_type = turn_on_a_chip(qtbot, memex)
    label = window.filters.chips[source_type].text().split("  ")[0]
    assert window.scope.button.isVisible() and window.scope.button.text().startswith(label)
    qtbot.mouseClick(window.scope.button, Qt.MouseButton.LeftButton)
    wait_request(qtbot, memex)
    assert window.filters.selected_types() == () and not window.scope.button.isVisible()


def test_keys_after_a_chip_go_to_the_query(qtbot: Any, memex: MemexApp) -> None:
    window = memex.window
    type_query(qtbot, memex, "standup")
    turn_on_a_chip(qtbot, memex)
    assert QApplication.focusWidget() is window.query  # a click does not keep the focus
    chip = window.filters.all_chip
    chip.setFocus(Qt.FocusReason.TabFocusReason)  # reached by Tab
    qtbot.keyClicks(chip, "s")
    assert window.query.text() == "standups" and QApplication.focusWidget() is window.query


def test_typing_over_the_query_starts_without_filters(qtbot: Any, memex: MemexApp) -> None:
    window = memex.window
    type_query(qtbot, memex, "standup")
    turn_on_a_chip(qtbot, memex)
    qtbot.keyClicks(window.query, "s")  # editing keeps the filter
    assert window.filters.selected_types()
    window.query.selectAll()  # as when the window opens
    qtbot.keyClicks(window.query, "N")
    assert window.filters.selected_types() == () and window.query.text() == "N"
    wait_request(qtbot, memex)
    assert not window.scope.button.isVisible()


def test_a_near_empty_filtered_result_offers_the_search_without_it(
    qtbot: Any, memex: MemexApp
) -> None:
    window = memex.window
    type_query(qtbot, memex, "standup")
    window.filters.set_person("Nobody Known")  # no chunk names them
    wait_request(qtbot, memex)
    assert window.scope.button.isVisible() and "Nobody Known" in window.scope.button.text()
    assert window.scope.widen.isVisible()
    assert "under Nobody Known. Search without filters:" in window.scope.widen.text()
    qtbot.mouseClick(window.scope.widen, Qt.MouseButton.LeftButton)
    wait_request(qtbot, memex)
    assert window.filters.person_name() is None and not window.scope.widen.isVisible()
    assert window.model.rowCount() > 0


def first_hit_that_will_not_open(qtbot: Any, memex: MemexApp, opener: RecordingOpener) -> Any:
    """The first hit of a search, with an opener that fails every open."""
    opener.open = lambda path, line: False  # type: ignore[method-assign]
    type_query(qtbot, memex, "standup")
    wait_for(qtbot, lambda: memex.window.current() is not None)
    hit = memex.window.current()
    assert hit is not None
    return hit


def test_a_failed_open_says_so_with_the_path(
    qtbot: Any, memex: MemexApp, opener: RecordingOpener
) -> None:
    window = memex.window
    result = first_hit_that_will_not_open(qtbot, memex, opener)
    assert not window.open_current()
    assert window.isVisible() and window.banner.isVisible()
    assert window.banner.text() == f"Memex could not open {result.source_file}."


def test_a_failed_open_names_an_archives_member_in_words(
    qtbot: Any, memex: MemexApp, opener: RecordingOpener
) -> None:
    window = memex.window
    hit = first_hit_that_will_not_open(qtbot, memex, opener)
    inside = replace(hit, source_file="/home/lena/Downloads/Skye Easter trip.zip!/_chat.txt")
    window.model.set_results([inside])
    window.list.setCurrentIndex(window.model.index(0))
    assert not window.open_current()
    said = "Memex could not open /home/lena/Downloads/Skye Easter trip.zip › _chat.txt."
    assert window.banner.isVisible() and window.banner.text() == said

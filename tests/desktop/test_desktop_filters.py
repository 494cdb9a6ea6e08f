"""The person card and the filters (chips, dates, person), checked against the engine."""

from __future__ import annotations

from typing import Any

from desktop_helpers import type_query, wait_for, wait_request
from PySide6.QtCore import QPoint, QRect, Qt

from desktop.controller import MemexApp
from engine.search import Searcher
from engine.search.present import facets
from engine.store import db


def test_person_query_shows_the_card_and_only_narrows_to_them(
    qtbot: Any, memex: MemexApp, searcher: Searcher
) -> None:
    type_query(qtbot, memex, "Jonas")
    window = memex.window
    card = window.card
    assert card.isVisible()
    assert card.name.text() == "Jonas Berg"
    assert card.relationship.text() == "partner"
    assert card.timeline.items, "milestones are drawn as a timeline"
    assert card.only.text().startswith("Only Jonas Berg · ")  # its keyword matches
    everyone = [r.id for r in window.model.results]
    qtbot.mouseClick(card.only, qtbot_button())
    wait_request(qtbot, memex)
    assert window.last_answer is not None
    assert window.last_answer.request.people == ("Jonas Berg",)
    assert window.filters.person_name() == "Jonas Berg" and card.only.isChecked()
    narrowed = [r.id for r in window.model.results]
    engine = searcher.search("Jonas", window.limit, people=["Jonas Berg"], prefix=True)
    assert narrowed == [r.id for r in engine.results if r.source_type != "profile"]
    assert narrowed and narrowed != everyone
    conn = db.connect(memex.settings.db_path, create=False)
    for hit in window.model.results:
        people = conn.execute("SELECT people FROM chunks WHERE id = ?", (hit.id,)).fetchone()[0]
        text = (hit.content + " " + people).lower()
        assert "jonas" in text or "jonte" in text, hit.title
    conn.close()


def test_all_mentions_searches_for_the_name(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "Jonas")
    memex.window.card.mentions.click()
    wait_request(qtbot, memex)
    assert memex.window.query.text() == "Jonas Berg"
    assert memex.window.last_answer.request.people == ("Jonas Berg",)  # every hit names him


def test_chip_counts_match_the_engine(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    bar = memex.window.filters
    conn = db.connect(memex.settings.db_path, create=False)
    expected = facets.type_counts(conn, "standup", prefix=True)
    conn.close()
    assert bar.counts == expected
    assert len(expected) >= 2, "the demo layer has standups in several source types"
    for source_type, count in expected.items():
        chip = bar.chips[source_type]
        assert chip.isVisible() and chip.text().endswith(f" {count}")
    assert bar.all_chip.text().endswith(f" {sum(expected.values())}")


def test_the_all_chip_and_the_footer_count_the_same_matches(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    bar = window.filters
    total = sum(bar.counts.values())
    assert total > 0 and bar.all_chip.text() == f"All  {total}"
    assert "chunks with the query's words" in bar.all_chip.toolTip()
    shown = window.model.rowCount()  # what is on the page: the floor may leave fewer
    assert 0 < shown <= window.limit
    footer = window.status.text()
    assert footer.startswith(f"{counted(shown, 'hit')} shown · {matches(total)} · "), footer
    source_type = min(bar.counts, key=lambda t: bar.counts[t])  # one chip on: its count
    bar.chips[source_type].click()
    wait_request(qtbot, memex)
    count, shown = bar.counts[source_type], window.model.rowCount()
    footer = window.status.text()
    assert footer.startswith(f"{counted(shown, 'hit')} shown · {matches(count)} · "), footer
    assert bar.chips[source_type].text().endswith(f" {count}")


def counted(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def matches(count: int) -> str:
    return f"{count} keyword match" + ("" if count == 1 else "es")


def test_every_chip_stays_in_view_in_a_narrow_window(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "the")  # matches in many source types: more chips than a row
    window = memex.window
    bar = window.filters
    chips = [bar.all_chip, *(bar.chips[t] for t, n in bar.counts.items() if n)]
    assert len(chips) >= 6

    def in_view(chip: Any) -> bool:  # shown whole: not clipped by the row around it
        return bool(chip.isVisible()) and chip.visibleRegion().boundingRect() == chip.rect()

    window.resize(600, window.height())
    wait_for(
        qtbot,
        lambda: window.width() <= max(600, window.minimumWidth()) and all(map(in_view, chips)),
    )
    needed = sum(c.sizeHint().width() for c in chips) + 6 * (len(chips) - 1)
    assert needed > bar.date.x(), "the chips cannot all fit on one row left of the date"
    taken = [bar.date.geometry(), bar.person.geometry()]
    for chip in chips:
        box = QRect(chip.mapTo(bar, QPoint(0, 0)), chip.size())
        assert chip.width() >= chip.sizeHint().width(), chip.text()  # not squeezed
        assert bar.rect().contains(box), chip.text()
        assert not any(box.intersects(other) for other in taken), chip.text()
        taken.append(box)


def test_tab_reaches_the_filters_in_order(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    window = memex.window
    bar = window.filters
    order = sorted(bar.counts, key=lambda t: (-bar.counts[t], t))  # most hits first
    shown = [bar.chips[t] for t in order]
    window.query.setFocus()
    expected = [bar.all_chip, *shown, bar.date, bar.person]
    for widget in expected:
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        assert window.focusWidget() is widget


def test_toggling_a_chip_requeries_with_the_filter(
    qtbot: Any, memex: MemexApp, searcher: Searcher
) -> None:
    type_query(qtbot, memex, "standup")
    bar = memex.window.filters
    source_type = min(bar.counts, key=lambda t: bar.counts[t])  # the rarer type narrows most
    bar.chips[source_type].click()
    wait_request(qtbot, memex)
    window = memex.window
    assert window.last_answer.request.source_types == (source_type,)
    assert not bar.all_chip.isChecked()
    assert {r.source_type for r in window.model.results} == {source_type}
    engine = searcher.search("standup", window.limit, [source_type], prefix=True)
    assert [r.id for r in window.model.results] == [r.id for r in engine.results]
    bar.all_chip.click()
    wait_request(qtbot, memex)
    assert window.last_answer.request.source_types == ()
    assert len({r.source_type for r in window.model.results}) > 1


def test_date_quick_pick_pushes_the_range_into_the_engine(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    bar = memex.window.filters
    bar.date.setCurrentText("Last 30 days")
    bar.date.activated.emit(bar.date.currentIndex())
    wait_request(qtbot, memex)
    request = memex.window.last_answer.request
    assert (request.since, request.until) == (
        "2026-06-01",
        "2026-06-30",
    )  # 30 days up to the demo's today
    dates = [r.content_date for r in memex.window.model.results]
    assert dates and all(d and "2026-06-01" <= d[:10] <= "2026-06-30" for d in dates)


def test_custom_range_uses_the_dialog_answer(qtbot: Any, memex: MemexApp) -> None:
    type_query(qtbot, memex, "standup")
    bar = memex.window.filters
    bar.ask_range = lambda: ("2026-06-01", "2026-06-10")
    bar.date.setCurrentIndex(bar.date.count() - 1)
    bar.date.activated.emit(bar.date.currentIndex())
    wait_request(qtbot, memex)
    request = memex.window.last_answer.request
    assert (request.since, request.until) == ("2026-06-01", "2026-06-10")
    assert bar.date.currentText() == "2026-06-01 – 2026-06-10"


def test_person_filter_lists_the_known_people(qtbot: Any, memex: MemexApp) -> None:
    bar = memex.window.filters
    qtbot.waitUntil(lambda: bar.person.count() > 5, timeout=60_000)
    names = [bar.person.itemText(i) for i in range(bar.person.count())]
    assert names[0] == "Anyone" and "Priya Raman" in names
    type_query(qtbot, memex, "standup")
    bar.set_person("Priya Raman")
    wait_request(qtbot, memex)
    assert memex.window.last_answer.request.people == ("Priya Raman",)


def qtbot_button() -> Any:
    return Qt.MouseButton.LeftButton

"""The search window: frameless, centred, keyboard first, results while typing.

Layout, top to bottom: the query field, the filter row (chips, date, person), a banner for
keyword-only results, the person card, the hits beside a preview, and a status line.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QMenu,
    QWidget,
)

from desktop import theme
from desktop.formatting import keyword_matches, line_of, shown_path, status_text
from desktop.opener import Opener
from desktop.progress import WorkState, progress_words
from desktop.requests import SearchAnswer, SearchRequest
from desktop.tasks import Tasks
from desktop.window_layout import WindowLayout
from engine.records import SearchResult
from engine.search.present.neighbours import Neighbour
from engine.sources import PROFILE_TYPE

DEBOUNCE_MS = 120
SIZE = QSize(920, 700)
MOVE_KEYS = {
    Qt.Key.Key_Up,
    Qt.Key.Key_Down,
    Qt.Key.Key_PageUp,
    Qt.Key.Key_PageDown,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
}


class SearchWindow(WindowLayout, QWidget):
    """The window; `tasks` runs every search, `opener` opens hits (injected in tests)."""

    answered = Signal(object)  # SearchAnswer, after the window has shown it
    this_is_me = Signal(str)  # a card's "This is me": the controller notes it

    def __init__(
        self,
        tasks: Tasks,
        now: Callable[[], datetime],
        opener: Opener,
        menu: QMenu | None = None,
        tool: bool = True,
        limit: int = 30,
    ) -> None:
        super().__init__()
        self.tasks = tasks
        self.now = now
        self.opener = opener
        self.limit = limit
        self.can_hide = True  # False without tray and hotkey: Escape minimises instead
        self.hide_on_blur = True
        self._was_active = False
        self.last_answer: SearchAnswer | None = None
        self._typed_over = False  # the next text change replaces the whole query
        self.people: list[str] = []
        flags = Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        self.setWindowFlags(flags | (Qt.WindowType.Tool if tool else Qt.WindowType.Window))
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setWindowTitle("Memex")
        self.setWindowIcon(theme.app_icon())
        self.resize(SIZE)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.search_now)
        self._build(menu)
        tasks.work_changed.connect(self.show_work)
        tasks.index_changed.connect(self._index_changed)
        self.show_message("Type to search your notes, chats, meetings, mail and people.")

    # -- showing and hiding ----------------------------------------------------------------------

    def summon(self) -> None:
        """Centre on the screen under the mouse, show, focus the query (text selected)."""
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        if screen is not None:
            area = screen.availableGeometry()
            self.move(
                area.x() + (area.width() - self.width()) // 2,
                area.y() + max(0, (area.height() - self.height()) // 3),
            )
        self.showNormal()
        self.raise_()
        self.activateWindow()
        if self.welcoming:
            self.pages.currentWidget().setFocus(Qt.FocusReason.ActiveWindowFocusReason)
            return
        self.query.setFocus(Qt.FocusReason.ActiveWindowFocusReason)
        self.query.selectAll()

    @property
    def welcoming(self) -> bool:
        """The welcome is shown instead of the search (no data folder yet)."""
        return self.pages.currentIndex() != 0

    def show_welcome(self, page: QWidget) -> None:
        if self.pages.indexOf(page) < 0:
            self.pages.addWidget(page)
        self.pages.setCurrentWidget(page)

    def show_search(self) -> None:
        """Leave the welcome for the search panel, the query focused."""
        self.pages.setCurrentIndex(0)
        self.query.setFocus(Qt.FocusReason.OtherFocusReason)

    def toggle(self) -> None:
        if self.isVisible() and self.isActiveWindow() and not self.isMinimized():
            self.dismiss()
        else:
            self.summon()

    def dismiss(self) -> None:
        if self.can_hide:
            self.hide()
        else:
            self.showMinimized()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() != QEvent.Type.ActivationChange:
            return
        if self.isActiveWindow():
            self._was_active = True
        elif self._was_active and self.hide_on_blur and self.can_hide:
            self._was_active = False  # hide only when focus goes from us to elsewhere
            QTimer.singleShot(0, self, self._maybe_hide_on_blur)

    def _maybe_hide_on_blur(self) -> None:
        active = QApplication.activeWindow()
        # The welcome stays: the native folder picker is no Qt window of ours.
        if not self.isVisible() or active is self or self.welcoming:
            return
        widget = active
        while widget is not None:  # our own dialogs (date range, settings) keep it open
            if widget is self:
                return
            widget = widget.parentWidget()
        if active is None and QApplication.activePopupWidget() is not None:
            return
        self.hide()

    # -- searching -------------------------------------------------------------------------------

    def request(self) -> SearchRequest:
        since, until = self.filters.date_range()
        person = self.filters.person_name()
        return SearchRequest(
            self.query.text().strip(),
            self.filters.selected_types(),
            since,
            until,
            (person,) if person else (),
            self.limit,
            prefix=True,
        )

    def _typed(self, text: str) -> None:
        if self._typed_over or not text.strip():  # a new question starts unfiltered
            self.filters.reset()
        self._typed_over = False
        self._debounce.start()

    def _filters_changed(self) -> None:
        """A chip, date or person changed: search again; the keys go on to the query."""
        self.search_now()
        if self.isVisible():
            self.query.setFocus(Qt.FocusReason.OtherFocusReason)

    def clear_filters(self) -> None:
        """Every filter off, the search again, the query focused."""
        self.filters.reset()
        self._filters_changed()

    def search_now(self) -> None:
        self._debounce.stop()
        self.scope.show_state()
        request = self.request()
        if not request.query:
            self.last_answer = None
            self.model.set_results([])
            self.card.clear()
            self.banner.hide()
            self.scope.widen.hide()
            self.filters.set_counts({})
            self.status.setText("")
            self.show_message("Type to search your notes, chats, meetings, mail and people.")
            return
        self.tasks.search(request, self.show_answer)

    def show_answer(self, answer: SearchAnswer) -> None:
        """Show a (fresh) answer: card, hits, chips, banner, status line."""
        self.last_answer = answer
        if answer.response is None:
            self._show_failure(answer)
            self.answered.emit(answer)
            return
        response = answer.response
        hits = [r for r in response.results if r.source_type != PROFILE_TYPE]
        if answer.person:
            name = answer.person.get("name")
            only_on = self.filters.person_name() == name
            self.card.show_profile(answer.person, only_on, answer.card_counts)
        else:
            self.card.clear()
        self.filters.set_counts(answer.counts)
        # From the outcome's fields: a warning (a filter suggestion) is no fallback.
        said = " ".join(response.warnings)
        if response.outcome.fell_back:
            said = f"Keyword results only. {said}".strip()
        self.banner.setVisible(bool(said))
        self.banner.setText(said)
        self.model.set_results(hits)
        # The hits on the page, and the keyword matches the chip(s) that are on count.
        matches = keyword_matches(answer.counts, answer.request.source_types)
        direct = sum(not r.related for r in hits)  # related context is not a hit
        self.status.setText(status_text(direct, matches, response.took_ms, response.mode))
        self.scope.show_outcome(response.outcome.filters, direct, matches)
        if hits:
            self.body.setCurrentIndex(0)
            self.list.setCurrentIndex(self.model.index(0))
        else:
            self.preview.clear_result()
            self.show_message(self._no_results_text(answer.request))
        self.answered.emit(answer)

    def _no_results_text(self, request: SearchRequest) -> str:
        narrowed = request.source_types or request.since or request.people
        text = f"No results for “{request.query}”."
        return text + ("\nTry removing a filter." if narrowed else "\nTry other words.")

    def _show_failure(self, answer: SearchAnswer) -> None:
        """A search that raised: no index yet (from the answer's field, never the error's
        words) while the first indexing runs or before it, else the error's sentence."""
        self.model.set_results([])
        self.card.clear()
        self.status.setText("")
        if answer.no_index and self.tasks.busy:  # the first run's indexing
            self.show_message("Indexing… the first results appear as soon as files are read.")
        elif answer.no_index:
            self.show_message(
                "There is no index yet.\nChoose “Reindex now” in the Memex menu, "
                "or set your data folders in Settings."
            )
        else:
            self.show_message(f"The search failed: {answer.error or 'an unknown error'}")

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.body.setCurrentIndex(1)

    def _index_changed(self) -> None:
        if self.isVisible() and self.query.text().strip():
            self.search_now()

    def _only_person(self, name: str, on: bool) -> None:
        self.filters.set_person(name if on else None)

    def _all_mentions(self, name: str) -> None:
        """Every chunk that names them: their name, the person filter on, no chip, any
        time (desktop/card_counts.py, `all_mentions_request`, counted it on the card)."""
        self.filters.blockSignals(True)  # one search, below
        self.filters.reset()
        self.filters.set_person(name, notify=False)
        self.filters.blockSignals(False)
        self.query.setText(name)
        self.search_now()
        if self.isVisible():
            self.query.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- the selected hit ------------------------------------------------------------------------

    def current(self) -> SearchResult | None:
        index = self.list.currentIndex()
        return self.model.results[index.row()] if index.isValid() else None

    def _selected(self) -> None:
        result = self.current()
        if result is None:
            self.preview.clear_result()
            return
        self.preview.show_result(result)
        self.tasks.neighbours(result.id, lambda around: self._show_neighbours(result, around))

    def _show_neighbours(self, result: SearchResult, around: list[Neighbour]) -> None:
        if self.current() is result:
            self.preview.show_result(result, around)

    def open_current(self, reveal: bool = False) -> bool:
        result = self.current()
        if result is None:
            return False
        if reveal:
            done = self.opener.reveal(result.source_file)
        else:
            done = self.opener.open(result.source_file, line_of(result.location))
        if done:
            self.tasks.record_open(result)  # frecency: lifted a little next time
            self.dismiss()
        else:  # said in the window, not only on stderr; an archive's member in words
            verb = "show" if reveal else "open"
            self.banner.setText(f"Memex could not {verb} {shown_path(result.source_file)}.")
            self.banner.show()
        return done

    def copy_current(self) -> bool:
        result = self.current()
        if result is None:
            return False
        QGuiApplication.clipboard().setText(result.content)
        self.status.setText("Copied the hit's text")
        return True

    def move_selection(self, key: Qt.Key) -> None:
        rows = self.model.rowCount()
        if not rows:
            return
        row = max(0, self.list.currentIndex().row())
        page = max(1, self.list.viewport().height() // 86)
        target = {
            Qt.Key.Key_Up: row - 1,
            Qt.Key.Key_Down: row + 1,
            Qt.Key.Key_PageUp: row - page,
            Qt.Key.Key_PageDown: row + page,
            Qt.Key.Key_Home: 0,
            Qt.Key.Key_End: rows - 1,
        }[key]
        index = self.model.index(min(rows - 1, max(0, target)))
        self.list.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        self.list.scrollTo(index)

    # -- keys ------------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(watched, event)
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)

    def _key(self, watched: QObject, event: QKeyEvent) -> bool:
        key = Qt.Key(event.key())
        if watched is self.query:
            self._typed_over = self._types_over(event)
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if key in MOVE_KEYS and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.move_selection(key)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.open_current(reveal=ctrl)
            return True
        if key == Qt.Key.Key_Escape:
            self.dismiss()
            return True
        if event.matches(QKeySequence.StandardKey.Copy):
            if watched is self.query and self.query.hasSelectedText():
                return False
            return self.copy_current()
        if watched is self.list and event.text().isprintable() and event.text().strip():
            self.type_into_query(event.text())
            return True
        return False

    def type_into_query(self, text: str) -> None:
        """Keys typed on the hits or a chip: on into the query."""
        self.query.setFocus(Qt.FocusReason.OtherFocusReason)
        self.query.insert(text)

    def _types_over(self, event: QKeyEvent) -> bool:
        """This key replaces the whole query: typed, pasted or deleted over a selection of
        all of it."""
        text = self.query.text()
        if not text or self.query.selectedText() != text:
            return False
        erase = event.key() in (Qt.Key.Key_Backspace, Qt.Key.Key_Delete)
        typed = bool(event.text()) and event.text().isprintable()
        return typed or erase or event.matches(QKeySequence.StandardKey.Paste)

    # -- background work -------------------------------------------------------------------------

    def show_work(self, state: WorkState) -> None:
        self.progress.setVisible(bool(state.label))
        if state.label:
            self.progress.setRange(0, state.total or 0)
            self.progress.setValue(state.done)
            self.progress.setToolTip(state.describe())
        # In words beside the bar: the files read, then the vectors filling in behind (keyword
        # search works meanwhile) with the time left.
        self.progress_words.setText(progress_words(state))
        self.progress_words.setVisible(bool(self.progress_words.text()))

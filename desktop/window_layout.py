"""The search window's widgets and their layout; `desktop.window` gives them behaviour.

Top to bottom: the query field with the menu button, the filter row (chips, date, person), a
banner for keyword-only results, the person card, the hits beside a preview, and a footer
with the status line, the work progress bar and the key hints.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QProgressBar,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop import theme
from desktop.card import ProfileCard
from desktop.filters import FilterBar
from desktop.preview import Preview
from desktop.results import ResultDelegate, ResultModel
from desktop.scope import FilterScope

HINTS = "↵ open   ⌃↵ reveal   ⌃C copy   ⇥ filters   esc close"


class WindowLayout:
    """Builds the window's widgets as attributes; mixed into `SearchWindow` (a QWidget)
    whose slots (`_typed`, `search_now`, `open_current`, …) the widgets are wired to."""

    def _build(self, menu: QMenu | None) -> None:
        self.filters = FilterBar(self.now)
        self.filters.changed.connect(self._filters_changed)
        self.filters.typed.connect(self.type_into_query)
        self.scope = FilterScope(self.filters, self.clear_filters)
        header = self._header(menu)
        self.banner = QLabel(objectName="banner", wordWrap=True)
        self.banner.hide()
        self.card = ProfileCard()
        self.card.only_person.connect(self._only_person)
        self.card.all_mentions.connect(self._all_mentions)
        self.card.this_is_me.connect(self.this_is_me)
        self.body = QStackedWidget()
        self.body.addWidget(self._results_pane())
        self.message = QLabel(
            objectName="emptyState", wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter
        )
        self.body.addWidget(self.message)
        panel = QFrame(objectName="panel")
        inner = QVBoxLayout(panel)
        inner.setContentsMargins(16, 10, 16, 10)
        inner.setSpacing(8)
        inner.addLayout(header)
        inner.addWidget(QFrame(objectName="separator"))
        inner.addWidget(self.filters)
        inner.addWidget(self.banner)
        inner.addWidget(self.scope.widen)
        inner.addWidget(self.card)
        inner.addWidget(self.body, 1)
        inner.addLayout(self._footer())
        self.pages = QStackedWidget()  # the search panel; the welcome on a first run
        self.pages.addWidget(panel)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.pages)
        QWidget.setTabOrder(self.query, self.filters.all_chip)
        QWidget.setTabOrder(self.filters.person, self.list)
        self.setFocusProxy(self.query)

    def _header(self, menu: QMenu | None) -> QHBoxLayout:
        """The search field with its icon, and the menu button."""
        self.query = QLineEdit()
        self.query.setObjectName("query")
        self.query.setPlaceholderText("Search everything…")
        self.query.textChanged.connect(self._typed)
        self.query.installEventFilter(self)
        icon = QLabel()
        icon.setPixmap(theme.ui_icon("search", 22).pixmap(22, 22))
        self.menu_button = QToolButton()
        self.menu_button.setObjectName("headerButton")
        self.menu_button.setIcon(theme.ui_icon("more", 20))
        self.menu_button.setToolTip("Memex menu")
        self.menu_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        if menu is not None:
            self.menu_button.setMenu(menu)
            self.menu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        header = QHBoxLayout()
        header.addWidget(icon)
        header.addWidget(self.query, 1)
        header.addWidget(self.scope.button)  # the filters that are on, in the query line
        header.addWidget(self.menu_button)
        return header

    def _footer(self) -> QHBoxLayout:
        """The status line, the work progress bar and the key hints."""
        self.status = QLabel(objectName="statusLine")
        self.progress = QProgressBar(objectName="workProgress", textVisible=False)
        self.progress.setFixedWidth(120)
        self.progress.hide()
        self.progress_words = QLabel(objectName="statusLine")  # the bar is too thin for them
        self.progress_words.hide()
        footer = QHBoxLayout()
        footer.addWidget(self.status)
        footer.addWidget(self.progress)
        footer.addWidget(self.progress_words)
        footer.addStretch(1)
        footer.addWidget(QLabel(HINTS, objectName="keyHints"))
        return footer

    def _results_pane(self) -> QSplitter:
        self.model = ResultModel()
        self.list = QListView(objectName="results")
        self.list.setModel(self.model)
        self.list.setItemDelegate(ResultDelegate(self.now))
        self.list.setMouseTracking(True)
        self.list.setUniformItemSizes(True)
        self.list.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.list.installEventFilter(self)
        self.list.doubleClicked.connect(lambda _index: self.open_current())
        self.list.selectionModel().currentChanged.connect(lambda *_: self._selected())
        self.preview = Preview()
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(self.preview)
        splitter.setSizes([500, 400])
        splitter.setChildrenCollapsible(False)
        splitter.setHandleWidth(1)
        return splitter

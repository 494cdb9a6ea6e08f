"""The filter row: source-type chips with counts, a date range and a person."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta

from PySide6.QtCore import QDate, QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QToolButton,
    QWidget,
)

from desktop import theme
from desktop.flow import FlowLayout
from desktop.formatting import plural, type_label

DATE_CHOICES = ("Any time", "Today", "Last 7 days", "Last 30 days", "This year", "Custom range…")
ANYONE = "Anyone"
WORDS = "with the query's words"  # what a chip counts: FTS5 matches (engine.search.present.facets)


def quick_range(choice: str, today: date) -> tuple[str | None, str | None]:
    """(since, until) ISO dates for a date quick pick; (None, None) for any time."""
    if choice == "Today":
        return today.isoformat(), today.isoformat()
    if choice == "Last 7 days":
        return (today - timedelta(days=6)).isoformat(), today.isoformat()
    if choice == "Last 30 days":
        return (today - timedelta(days=29)).isoformat(), today.isoformat()
    if choice == "This year":
        return date(today.year, 1, 1).isoformat(), date(today.year, 12, 31).isoformat()
    return None, None


class RangeDialog(QDialog):
    """A custom date range: two dates with calendar pop-ups."""

    def __init__(self, parent: QWidget | None, since: date, until: date) -> None:
        super().__init__(parent)
        self.setWindowTitle("Date range")
        self.since = QDateEdit(QDate(since.year, since.month, since.day))
        self.until = QDateEdit(QDate(until.year, until.month, until.day))
        for edit in (self.since, self.until):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("From", self.since)
        form.addRow("To", self.until)
        form.addRow(buttons)

    def range(self) -> tuple[str, str]:
        a, b = self.since.date().toString("yyyy-MM-dd"), self.until.date().toString("yyyy-MM-dd")
        return (a, b) if a <= b else (b, a)


class FilterBar(QWidget):
    """Chips, date and person; `changed` fires when the user changes any of them."""

    changed = Signal()
    typed = Signal(str)  # a key typed on a chip, for the query

    def __init__(self, today: Callable[[], datetime]) -> None:
        super().__init__()
        self.today = today
        self.counts: dict[str, int] = {}
        self.chips: dict[str, QToolButton] = {}
        self.custom_range: tuple[str, str] | None = None
        self.ask_range: Callable[[], tuple[str, str] | None] = self._ask_range
        self.all_chip = self._chip("all", "All")
        self.all_chip.setChecked(True)
        # The chips wrap onto more rows rather than run out of sight (a scroll area with its
        # bar hidden cut the last chips off).
        self.chip_box = QWidget()
        self.chip_row = FlowLayout(self.chip_box, spacing=6)
        self.date = self._combo(DATE_CHOICES, "Date range", "calendar")
        self.date.activated.connect(self._date_picked)
        self.person = self._combo((ANYONE,), "Person", "person")
        self.person.activated.connect(lambda _i: self.changed.emit())
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addWidget(self.chip_box, 1)
        row.addWidget(self.date, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.person, 0, Qt.AlignmentFlag.AlignTop)
        self._layout_chips()

    # -- building --------------------------------------------------------------------------------

    def _chip(self, source_type: str, text: str) -> QToolButton:
        chip = QToolButton()
        chip.setObjectName("chip")
        chip.setCheckable(True)
        # Reached by Tab, never taken by a click: the query keeps the keys after a click.
        chip.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        chip.setText(text)
        chip.setProperty("source_type", source_type)
        chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        if source_type != "all":
            chip.setIcon(theme.type_icon(source_type))
            chip.setIconSize(QSize(14, 14))
        chip.toggled.connect(lambda on, t=source_type: self._chip_toggled(t, on))
        chip.installEventFilter(self)
        return chip

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """A letter typed on a chip (reached by Tab) goes on to the query; Space still
        toggles the chip and Tab moves on."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            text = event.text()
            if text.isprintable() and text.strip():
                self.typed.emit(text)
                return True
        return super().eventFilter(watched, event)

    def _combo(self, items: Sequence[str], tip: str, icon: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName("filterCombo")
        combo.addItems(list(items))
        combo.setToolTip(tip)
        combo.setAccessibleName(tip)
        combo.setIconSize(QSize(14, 14))
        combo.setItemIcon(0, theme.ui_icon(icon, 14))
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        return combo

    def _layout_chips(self) -> None:
        while self.chip_row.count():
            self.chip_row.takeAt(0)
        self.chip_row.addWidget(self.all_chip)
        selected = set(self.selected_types())
        order = sorted(self.chips, key=lambda t: (-self.counts.get(t, 0), t))
        for source_type in order:
            chip = self.chips[source_type]
            self.chip_row.addWidget(chip)  # parent it first: a parentless show is a window
            chip.setVisible(self.counts.get(source_type, 0) > 0 or source_type in selected)
        chain = [self.all_chip, *(self.chips[t] for t in order), self.date, self.person]
        for before, after in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(before, after)  # Tab walks the chips in the order shown

    # -- state -----------------------------------------------------------------------------------

    def set_counts(self, counts: dict[str, int]) -> None:
        """Show one chip per source type with keyword matches for the query, with its count;
        "All" counts them over every type (the footer shows the same number, beside the hits
        on the page)."""
        self.counts = dict(counts)
        for source_type in counts:
            if source_type not in self.chips:
                self.chips[source_type] = self._chip(source_type, "")
        for source_type, chip in self.chips.items():
            count = self.counts.get(source_type, 0)
            chip.setText(f"{type_label(source_type)}  {count}")
            chip.setToolTip(f"{type_label(source_type)}: {plural(count, 'chunk')} {WORDS}")
        total = sum(self.counts.values())
        self.all_chip.setText(f"All  {total}" if total else "All")
        self.all_chip.setToolTip(
            f"Every type: {plural(total, 'chunk')} {WORDS} (hits found by meaning are shown too)"
            if total
            else "Every source type"
        )
        self._layout_chips()

    def selected_types(self) -> tuple[str, ...]:
        return tuple(sorted(t for t, chip in self.chips.items() if chip.isChecked()))

    def set_people(self, names: Sequence[str]) -> None:
        current = self.person_name()
        self.person.blockSignals(True)
        self.person.clear()
        self.person.addItems([ANYONE, *sorted(names)])
        self.person.setItemIcon(0, theme.ui_icon("person", 14))
        self.person.blockSignals(False)
        self.set_person(current, notify=False)

    def person_name(self) -> str | None:
        text = self.person.currentText()
        return None if text == ANYONE or not text else text

    def set_person(self, name: str | None, notify: bool = True) -> None:
        if name and self.person.findText(name) < 0:
            self.person.addItem(name)
        self.person.setCurrentIndex(self.person.findText(name) if name else 0)
        if notify:
            self.changed.emit()

    def date_range(self) -> tuple[str | None, str | None]:
        choice = self.date.currentText()
        if self.date.currentIndex() == len(DATE_CHOICES) - 1 and self.custom_range:
            return self.custom_range
        return quick_range(choice, self.today().date())

    # -- reactions -------------------------------------------------------------------------------

    def _chip_toggled(self, source_type: str, on: bool) -> None:
        if source_type == "all":
            if on:
                for chip in self.chips.values():
                    chip.blockSignals(True)
                    chip.setChecked(False)
                    chip.blockSignals(False)
                self.changed.emit()
            elif not self.selected_types():
                self.all_chip.blockSignals(True)
                self.all_chip.setChecked(True)  # "All" cannot be switched off by itself
                self.all_chip.blockSignals(False)
            return
        self.all_chip.blockSignals(True)
        self.all_chip.setChecked(not self.selected_types())
        self.all_chip.blockSignals(False)
        self.changed.emit()

    def _date_picked(self, index: int) -> None:
        if index == len(DATE_CHOICES) - 1:
            picked = self.ask_range()
            if picked is None:
                self.date.setCurrentIndex(0)
                self.custom_range = None
            else:
                self.custom_range = picked
                self.date.setItemText(index, f"{picked[0]} – {picked[1]}")
        self.changed.emit()

    def _ask_range(self) -> tuple[str, str] | None:
        today = self.today().date()
        dialog = RangeDialog(self.window(), today - timedelta(days=30), today)
        return dialog.range() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def describe(self) -> str:
        """The filters that are on, in words: "Signal, Slack · Last 7 days · Ngozi"; "" for
        none (the query line shows this)."""
        parts = [", ".join(type_label(t) for t in self.selected_types())]
        parts.append(self.date.currentText() if self.date.currentIndex() else "")
        parts.append(self.person_name() or "")
        return " · ".join(p for p in parts if p)

    def reset(self) -> None:
        """No type, any time, anyone (the window calls this when it is shown empty)."""
        for chip in self.chips.values():
            chip.blockSignals(True)
            chip.setChecked(False)
            chip.blockSignals(False)
        self.all_chip.setChecked(True)
        self.date.setCurrentIndex(0)
        self.custom_range = None
        self.person.setCurrentIndex(0)

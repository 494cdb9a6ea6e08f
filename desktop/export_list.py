"""The lists of exports (the welcome's and Settings › Data's): one line per export, its
type first, elided in the middle with the whole line as the tooltip, as tall as the window
lets them be (the lists beside them capped: `capped_list`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QSizePolicy

from desktop import theme
from desktop.survey import FoundExport


def export_list(rows: int = 6) -> QListWidget:
    """A list of exports: one line each, elided in the middle (the whole line in its
    tooltip), tall enough for `rows` lines and growing with the window."""
    exports = QListWidget()
    exports.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    exports.setWordWrap(False)
    exports.setUniformItemSizes(True)
    exports.setMinimumHeight(rows * exports.fontMetrics().height() * 3 // 2)
    exports.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    return exports


def capped_list(widget: QListWidget, rows: int) -> QListWidget:
    """A list beside an export list, at most `rows` lines tall (it scrolls beyond), so the
    height the window has beyond them goes to the exports."""
    widget.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    line = widget.fontMetrics().height() * 3 // 2
    widget.setMaximumHeight(rows * line + 2 * widget.frameWidth())
    return widget


def export_item(found: FoundExport, text: str | None = None) -> QListWidgetItem:
    """One export's row: its type's icon, its line, and the whole line as the tooltip."""
    item = QListWidgetItem(theme.type_icon(found.source_type), text or found.text)
    item.setToolTip(text or found.text)
    return item

"""The hit list: a model of SearchResults and a delegate that paints one hit.

Each hit: the source-type tile, the title, the date (relative; absolute in the tooltip),
two lines of snippet with the matched terms in bold, and a muted line with type and file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from desktop import theme
from desktop.formatting import (
    absolute_date,
    hit_title,
    relative_date,
    shown_file,
    shown_path,
    snippet_html,
    split_header,
    type_label,
)
from engine.records import SearchResult

ResultRole = Qt.ItemDataRole.UserRole + 1
ROW_HEIGHT = 86
ICON = 30
RELATED_LABEL = "Related"  # the badge of a result linked to a hit (engine/search/rank/related.py)
AnyIndex = QModelIndex | QPersistentModelIndex


class ResultModel(QAbstractListModel):
    """The current hits (the profile result is shown as a card, not here)."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[SearchResult] = []

    def set_results(self, results: Sequence[SearchResult]) -> None:
        self.beginResetModel()
        self.results = list(results)
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.results)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.results):
            return None
        result = self.results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return hit_title(result.title, result.source_file)
        if role == Qt.ItemDataRole.ToolTipRole:
            when = absolute_date(result.content_date)
            where = shown_path(result.source_file)
            where += f" ({result.location})" if result.location else ""
            return "\n".join(x for x in (when, where) if x)
        if role == ResultRole:
            return result
        return None


class ResultDelegate(QStyledItemDelegate):
    """Paints one hit; `now` gives "today" for relative dates."""

    def __init__(self, now: Callable[[], datetime]) -> None:
        super().__init__()
        self.now = now

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:  # noqa: N802
        return QSize(option.rect.width(), ROW_HEIGHT)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        result: SearchResult | None = index.data(ResultRole)
        if result is None:
            return
        t = theme.current()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = option.rect.adjusted(6, 2, -6, -2)  # type: ignore[attr-defined]
        if option.state & QStyle.StateFlag.State_Selected:  # type: ignore[attr-defined]
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(t["selection"]))
            painter.drawRoundedRect(QRectF(rect), 9, 9)
        elif option.state & QStyle.StateFlag.State_MouseOver:  # type: ignore[attr-defined]
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(t["hover"]))
            painter.drawRoundedRect(QRectF(rect), 9, 9)
        painter.drawPixmap(
            rect.left() + 10, rect.top() + 11, theme.type_pixmap(result.source_type, ICON)
        )
        left = rect.left() + 10 + ICON + 12
        width = rect.right() - 12 - left
        self._paint_head(painter, result, QRect(left, rect.top() + 8, width, 20))
        self._paint_snippet(painter, result, QRect(left, rect.top() + 28, width, 36))
        self._paint_meta(painter, result, QRect(left, rect.top() + 63, width, 16))
        painter.restore()

    def _paint_head(self, painter: QPainter, result: SearchResult, box: QRect) -> None:
        t = theme.current()
        small = QFont(painter.font())
        small.setPixelSize(12)
        when = relative_date(result.content_date, self.now())
        when_width = QFontMetrics(small).horizontalAdvance(when) + 8 if when else 0
        title_font = QFont(painter.font())
        title_font.setPixelSize(14)
        title_font.setWeight(QFont.Weight.DemiBold)
        title = hit_title(result.title, result.source_file)
        elided = QFontMetrics(title_font).elidedText(
            title, Qt.TextElideMode.ElideRight, box.width() - when_width
        )
        painter.setFont(title_font)
        painter.setPen(QColor(t["text"]))
        painter.drawText(
            box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), elided
        )
        if when:
            painter.setFont(small)
            painter.setPen(QColor(t["muted"]))
            painter.drawText(
                box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), when
            )

    def _paint_snippet(self, painter: QPainter, result: SearchResult, box: QRect) -> None:
        t = theme.current()
        doc = QTextDocument()
        font = QFont(painter.font())
        font.setPixelSize(13)
        font.setWeight(QFont.Weight.Normal)
        doc.setDefaultFont(font)
        doc.setDocumentMargin(0)
        doc.setTextWidth(box.width())
        text = result.snippet or split_header(result.content)[1][:220]  # not "Note: …" lines
        body = snippet_html(text, t["accent_text"])
        doc.setHtml(f'<div style="color:{t["snippet"]}">{body}</div>')
        height = min(box.height(), 2 * QFontMetrics(font).lineSpacing() + 1)
        painter.save()
        painter.translate(box.topLeft())
        painter.setClipRect(QRect(0, 0, box.width(), height))
        doc.drawContents(painter, QRectF(0, 0, box.width(), height))
        painter.restore()

    def _paint_meta(self, painter: QPainter, result: SearchResult, box: QRect) -> None:
        t = theme.current()
        font = QFont(painter.font())
        font.setPixelSize(11)
        font.setWeight(QFont.Weight.Normal)
        painter.setFont(font)
        painter.setPen(QColor(t["accent_text" if result.related else "muted"]))
        text = meta_text(result)
        elided = QFontMetrics(font).elidedText(text, Qt.TextElideMode.ElideMiddle, box.width())
        painter.drawText(
            box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), elided
        )


def meta_text(result: SearchResult) -> str:
    """The muted line under a hit: "Related ·" for context linked to a hit, the type, the
    file and place, and how many sections of a note matched."""
    where = shown_file(result.source_file) + (f" · {result.location}" if result.location else "")
    text = f"{type_label(result.source_type)}  ·  {where}"
    if result.sections > 1:
        text += f"  ·  {result.sections} sections match"
    return f"{RELATED_LABEL}  ·  {text}" if result.related else text

"""The preview pane: the selected hit in full, with the chunks before and after it."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTextBrowser

from desktop import theme
from desktop.formatting import absolute_date, highlight_terms, type_label
from engine.records import SearchResult
from engine.search.neighbours import Neighbour


def preview_html(result: SearchResult, around: Sequence[Neighbour]) -> str:
    """The hit (terms highlighted) between its neighbours (muted), with a small header."""
    t = theme.current()
    title = html.escape(result.title or result.source_file.rsplit("/", 1)[-1])
    meta = " · ".join(
        x
        for x in (
            type_label(result.source_type),
            absolute_date(result.content_date),
            result.location,
        )
        if x
    )
    parts = [
        f'<div style="font-size:15px;font-weight:600;color:{t["text"]}">{title}</div>',
        f'<div style="font-size:12px;color:{t["muted"]};margin-top:2px">{html.escape(meta)}</div>',
        f'<div style="font-size:11px;color:{t["muted"]};margin-bottom:10px">'
        f"{html.escape(result.source_file)}</div>",
    ]
    hit_seen = False
    for chunk in around or ():
        if chunk.is_hit:
            hit_seen = True
            parts.append(_hit_block(result))
        else:
            parts.append(_context_block(chunk))
    if not hit_seen:
        parts.append(_hit_block(result))
    return "".join(parts)


def _hit_block(result: SearchResult) -> str:
    t = theme.current()
    body = highlight_terms(result.content, result.matched_terms, t["accent_text"], t["mark_bg"])
    return (
        f'<a name="hit"></a><table width="100%" cellspacing="0" cellpadding="8" style="margin:6px 0">'
        f'<tr><td style="background-color:{t["bg"]};border-left:3px solid {t["accent"]};'
        f'color:{t["text"]};font-size:13px;white-space:pre-wrap">{body}</td></tr></table>'
    )


def _context_block(chunk: Neighbour) -> str:
    t = theme.current()
    body = html.escape(chunk.content).replace("\n", "<br>")
    return (
        f'<div style="color:{t["muted"]};font-size:12px;margin:6px 0 6px 11px;'
        f'white-space:pre-wrap">{body}</div>'
    )


class Preview(QTextBrowser):
    """Read-only rich text; links are not followed (files open with Enter)."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("preview")
        self.setOpenLinks(False)
        self.result: SearchResult | None = None

    def show_result(self, result: SearchResult, around: Sequence[Neighbour] = ()) -> None:
        self.result = result
        self.setHtml(preview_html(result, around))
        self.verticalScrollBar().setValue(0)
        if any(not c.is_hit for c in around):
            QTimer.singleShot(0, self._scroll_to_hit)  # once the new text is laid out

    def _scroll_to_hit(self) -> None:
        """The hit a quarter of the way down, its preceding context above it."""
        self.scrollToAnchor("hit")
        bar = self.verticalScrollBar()
        if bar.value():
            bar.setValue(max(0, bar.value() - self.viewport().height() // 4))

    def clear_result(self) -> None:
        self.result = None
        self.clear()

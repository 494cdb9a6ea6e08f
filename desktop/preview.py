"""The preview pane: the selected hit in full, with the chunks before and after it."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTextBrowser

from desktop import theme
from desktop.formatting import (
    absolute_date,
    highlight_terms,
    hit_title,
    shown_path,
    split_header,
    type_label,
)
from engine.records import SearchResult
from engine.search.present.neighbours import Neighbour


def preview_html(result: SearchResult, around: Sequence[Neighbour]) -> str:
    """The hit (terms highlighted) between its neighbours (muted), under a small header.

    Each chunk is shown from its own text on: the header lines the extractors write in front
    of it ("Note: …", "Aliases: …", "Tags: …", "Section: …") are for the index; the title
    above says the note and section, and a muted line gives the tags and aliases."""
    fields, body = split_header(result.content)
    parts = _head(result, fields)
    hit_seen = False
    for chunk in around or ():
        if chunk.is_hit:
            hit_seen = True
            parts.append(_hit_block(result, body))
        else:
            parts.append(_context_block(chunk))
    if not hit_seen:
        parts.append(_hit_block(result, body))
    return "".join(parts)


def labels_text(fields: Mapping[str, str]) -> str:
    """The tags and aliases of a header as one line: "#pricing #decisions · aka pricing"."""
    tags = " ".join(f"#{tag.strip()}" for tag in fields.get("Tags", "").split(",") if tag.strip())
    aliases = fields.get("Aliases", "").strip()
    return " · ".join(x for x in (tags, f"aka {aliases}" if aliases else "") if x)


def _head(result: SearchResult, fields: Mapping[str, str]) -> list[str]:
    """Title, type · date · location, the tags and aliases, the file."""
    t = theme.current()
    title = html.escape(hit_title(result.title, result.source_file))
    labels = labels_text(fields)
    meta = " · ".join(
        x
        for x in (
            type_label(result.source_type),
            absolute_date(result.content_date),
            result.location,
        )
        if x
    )
    small = f"font-size:11px;color:{t['muted']}"
    return [
        f'<div style="font-size:15px;font-weight:600;color:{t["text"]}">{title}</div>',
        f'<div style="font-size:12px;color:{t["muted"]};margin-top:2px">{html.escape(meta)}</div>',
        *([f'<div style="{small}">{html.escape(labels)}</div>'] if labels else []),
        f'<div style="{small};margin-bottom:10px">{html.escape(shown_path(result.source_file))}</div>',
    ]


def _hit_block(result: SearchResult, text: str) -> str:
    t = theme.current()
    body = highlight_terms(text, result.matched_terms, t["accent_text"], t["mark_bg"])
    return (
        f'<a name="hit"></a><table width="100%" cellspacing="0" cellpadding="8" style="margin:6px 0">'
        f'<tr><td style="background-color:{t["bg"]};border-left:3px solid {t["accent"]};'
        f'color:{t["text"]};font-size:13px;white-space:pre-wrap">{body}</td></tr></table>'
    )


def _context_block(chunk: Neighbour) -> str:
    t = theme.current()
    body = html.escape(split_header(chunk.content)[1]).replace("\n", "<br>")
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
            QTimer.singleShot(0, self, self._scroll_to_hit)  # after layout; dropped if self is gone

    def _scroll_to_hit(self) -> None:
        """The hit a quarter of the way down, its preceding context above it."""
        self.scrollToAnchor("hit")
        bar = self.verticalScrollBar()
        if bar.value():
            bar.setValue(max(0, bar.value() - self.viewport().height() // 4))

    def clear_result(self) -> None:
        self.result = None
        self.clear()

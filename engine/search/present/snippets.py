"""Snippets: the passage of a chunk with most matched terms, the terms marked with **…**."""

from __future__ import annotations

import re

from engine.parts import body_start

START, END = "\x02", "\x03"
_MARKED = re.compile(f"{START}(.*?){END}", re.DOTALL)
_EMPTY = re.compile(f"{START}(\\s*){END}")


def has_marks(highlighted: str | None) -> bool:
    """Whether a marked text marks anything but spaces (else a snippet starts at its focus)."""
    return bool(highlighted) and START in _EMPTY.sub(r"\1", highlighted or "")


def _visible_offset(highlighted: str, count: int) -> int:
    """Where, in a marked text, its first `count` characters of the text itself end (a
    mark open there stays open: the caller's marks are balanced again)."""
    seen = 0
    for position, char in enumerate(highlighted):
        if seen == count:
            return position
        if char not in (START, END):
            seen += 1
    return len(highlighted)


def make_snippet(
    content: str, highlighted: str | None, width: int, focus: tuple[int, int] | None = None
) -> tuple[str, tuple[str, ...]]:
    """(snippet, matched terms). `highlighted` is FTS5 highlight() output, or None; `focus`
    the span of the part nearest the query: without marked terms the snippet starts there,
    so a long window shows the message that matched rather than its first lines. The
    header lines the extractors write for the index ("Section: …", "Meeting: …") are never
    part of it: the title says those."""
    skip = body_start(content)
    if highlighted:
        highlighted = _EMPTY.sub(r"\1", highlighted)  # a mark around nothing but spaces
        highlighted = highlighted[_visible_offset(highlighted, skip) :]
    if not highlighted or START not in highlighted:
        start = max(focus[0] if focus else 0, skip)
        text = " ".join(content[start:].split())
        lead = "…" if content[skip:start].strip() else ""
        return lead + (text[:width].rstrip() + ("…" if len(text) > width else "")), ()
    flat = " ".join(highlighted.split())
    matched = tuple(dict.fromkeys(m.lower() for m in _MARKED.findall(flat) if m.strip()))
    starts = [m.start() for m in _MARKED.finditer(flat)]
    best_start, best_count = starts[0], 0
    for s in starts:
        count = sum(1 for t in starts if s <= t < s + width)
        if count > best_count:
            best_start, best_count = s, count
    begin = max(0, best_start - width // 4)
    begin = flat.rfind(" ", 0, begin) + 1 if begin else 0
    end = min(len(flat), begin + width + 4 * best_count)
    piece = flat[begin:end]
    if piece.count(START) != piece.count(END):
        piece += END
    piece = piece.replace(START, "**").replace(END, "**")
    return ("…" if begin else "") + piece.strip() + ("…" if end < len(flat) else ""), matched

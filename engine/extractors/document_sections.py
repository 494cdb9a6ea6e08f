"""A document as its format's reader finds it (`Document`, its `Section`s) and the cutting
of a run of blocks at its headings: what the document reader (`documents`) and the readers
of each format (`docx`, `pdf`, `web_pages`) share. It imports none of them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_ANCHOR = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class Section:
    """A run of a document's text under one heading (or on one page)."""

    text: str
    location: str
    heading: str = ""


@dataclass(frozen=True)
class Document:
    """A document as its format's reader found it."""

    title: str
    sections: list[Section]
    date: str | None = None


def anchor(heading: str) -> str:
    return "#" + "-".join(_ANCHOR.sub("", heading).lower().split())


def headed_sections(blocks: Iterable[tuple[bool, str]]) -> list[Section]:
    """Blocks `(is_heading, text)` in document order, as sections cut at the headings: each
    holds the texts after its heading (located at the heading's anchor), joined by blank
    lines; the texts before the first heading form one without a heading, and a heading
    with no text after it makes none."""
    found: list[Section] = []
    heading, texts = "", list[str]()
    for is_heading, text in (*blocks, (True, "")):
        if not is_heading:
            texts.append(text)
            continue
        if texts:
            found.append(Section("\n\n".join(texts), anchor(heading) if heading else "", heading))
        heading, texts = text, []
    return found

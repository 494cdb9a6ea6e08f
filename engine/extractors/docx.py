"""A Word `.docx`, read with python-docx (a default dependency): its paragraphs and tables
in order, cut into sections at its headings (`Heading 1`…, `Title`)."""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePath
from typing import Any

from engine.extractors.base import ExtractError
from engine.extractors.chunking import date_from_name
from engine.extractors.document_sections import Document, Section, headed_sections

MISSING = "reading .docx needs python-docx: pip install 'memex[documents]'"


def _load(data: bytes) -> Any:
    try:
        import docx  # a default dependency; absent only from a broken install
    except ImportError:
        raise ExtractError(MISSING) from None
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as exc:  # zipfile's, lxml's and python-docx's own errors, in words
        raise ExtractError(f"not a readable .docx: {_why(exc)}") from None


def _why(exc: Exception) -> str:
    """Why python-docx could not open a file, in the user's words."""
    if isinstance(exc, zipfile.BadZipFile | EOFError | OSError):
        return "it is not a zip archive as Word writes one (damaged, cut short, or renamed)"
    if isinstance(exc, KeyError):
        return "a part every Word document holds is missing"
    if isinstance(exc, ValueError):
        return "it is another kind of Office file (a template, a macro document) or renamed"
    return "its XML is damaged"


def _blocks(document: Any) -> list[tuple[str, str]]:
    """(style, text) of each paragraph and table row, in document order."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    blocks = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            blocks.append((str(item.style.name if item.style else ""), item.text.strip()))
        elif isinstance(item, Table):
            for row in item.rows:
                cells = dict.fromkeys(c.text.strip() for c in row.cells)
                blocks.append(("", " | ".join(c for c in cells if c)))
    return [(style, text) for style, text in blocks if text]


def _is_heading(style: str) -> bool:
    return style.startswith("Heading") or style == "Title"


def sections(blocks: list[tuple[str, str]]) -> list[Section]:
    return headed_sections((_is_heading(style), text) for style, text in blocks)


def docx_document(data: bytes, path: PurePath) -> Document:
    document = _load(data)
    core = document.core_properties
    title = (core.title or "").strip() or path.stem
    moment = core.created or core.modified
    date = moment.replace(tzinfo=None).isoformat() if moment else date_from_name(path.stem)
    found = sections(_blocks(document))
    if not found:
        raise ExtractError("a .docx without text")
    return Document(title, found, date)

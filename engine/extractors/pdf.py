"""A PDF's text layer, page by page, read with pypdf (pure Python, no dependency of its own).

A PDF protected by a password (one that is not empty: many PDFs are encrypted only to hold
their permissions), or too broken to open even with pypdf's repair of a damaged
cross-reference table, is one clear error. A page whose text cannot be read, or that has
none (a scanned page: it needs OCR), is a problem; the other pages are indexed.
"""

from __future__ import annotations

import io
import logging
from pathlib import PurePath

import pypdf
from pypdf.errors import PdfReadError, PyPdfError

from engine.extractors.base import ExtractError, Extraction
from engine.extractors.chunking import date_from_name, parse_date
from engine.extractors.document_sections import Document, Section

# pypdf logs every repair it makes of a damaged file; the problems say what was lost.
logging.getLogger("pypdf").setLevel(logging.ERROR)
PAGE_ERRORS = (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError)


def open_pdf(data: bytes) -> pypdf.PdfReader:
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractError("encrypted PDF: it needs a password to be read")
        _ = len(reader.pages)
    except ExtractError:
        raise
    except (PdfReadError, *PAGE_ERRORS, OSError) as exc:
        raise ExtractError(_unreadable(str(exc).lower())) from None
    return reader


def _unreadable(said: str) -> str:
    """Why pypdf could not open a file, in words (pypdf's own message is never shown)."""
    if "cryptography" in said:  # AES, which pypdf reads only with the cryptography package
        return (
            "encrypted PDF that cannot be opened: its AES encryption needs the cryptography package"
        )
    if "decrypt" in said:
        return "encrypted PDF that cannot be opened"
    return "not a readable PDF: damaged, cut short or not a PDF at all (pypdf could not repair it)"


def _title(reader: pypdf.PdfReader, path: PurePath) -> tuple[str, str | None]:
    try:
        meta = reader.metadata
        title = str(meta.title or "").strip() if meta else ""
        created = meta.get("/CreationDate") if meta else None
    except PAGE_ERRORS:
        return path.stem, date_from_name(path.stem)
    return title or path.stem, _pdf_date(created) or date_from_name(path.stem)


def _pdf_date(value: object) -> str | None:
    """A PDF date (`D:20240311093000+01'00'`) as ISO text, or None."""
    text = str(value or "").removeprefix("D:")
    if len(text) < 8 or not text[:8].isdigit():
        return None
    day = f"{text[:4]}-{text[4:6]}-{text[6:8]}"
    if len(text) >= 14 and text[8:14].isdigit():
        return parse_date(f"{day}T{text[8:10]}:{text[10:12]}:{text[12:14]}")
    return parse_date(day)


def pdf_document(data: bytes, path: PurePath, result: Extraction) -> Document:
    reader = open_pdf(data)
    title, date = _title(reader, path)
    sections = []
    for number in range(1, len(reader.pages) + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except PAGE_ERRORS:
            result.problems.append(f"page {number}: its text could not be read (a damaged page)")
            continue
        if not text.strip():
            result.problems.append(f"page {number}: no text layer (a scanned page needs OCR)")
            continue
        sections.append(Section(text.strip(), f"page:{number}", f"page {number}"))
    if not sections:
        raise ExtractError("PDF without a text layer (scanned pages need OCR)")
    return Document(title, sections, date)

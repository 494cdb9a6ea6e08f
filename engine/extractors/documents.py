"""Documents: PDF (its text layer, with pypdf), Word `.docx` (python-docx, the `documents`
extra), saved web pages (`.html`, their readable text) and plain `.txt`.

Each document becomes sections, and each section one or more chunks of at most
`SECTION_MAX_CHARS`, split on paragraphs: a PDF page is a section (location `page:N`), a
`.docx` or web page is cut at its headings (location `#heading-anchor`), a `.txt` at blank
lines (location `line:N`). Every chunk starts `Document: <title>`; the title is the file's
own (a PDF's `/Title`, the `.docx` core title, the page's `<title>`), else the file name.
A PDF that is encrypted with a password, or too broken to open, is one clear error; a page
without a text layer (a scan) is a problem, the other pages are indexed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import PurePath

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import SECTION_MAX_CHARS, date_from_name, decode
from engine.extractors.document_sections import Document, Section
from engine.extractors.sniffing import Recogniser, SiblingCheck
from engine.records import Draft

LABEL = "Document"
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def split_paragraphs(text: str, limit: int = SECTION_MAX_CHARS) -> Iterator[str]:
    """The text in parts of at most `limit` characters, cut between paragraphs (a paragraph
    longer than the limit is cut between words)."""
    part = ""
    for paragraph in (p.strip() for p in _PARAGRAPH_BREAK.split(text)):
        while len(paragraph) > limit:
            cut = paragraph.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            if part:
                yield part
                part = ""
            yield paragraph[:cut].strip()
            paragraph = paragraph[cut:].strip()
        if part and len(part) + len(paragraph) + 2 > limit:
            yield part
            part = ""
        if paragraph:
            part = f"{part}\n\n{paragraph}" if part else paragraph
    if part:
        yield part


def drafts(document: Document) -> list[Draft]:
    result = []
    for section in document.sections:
        own = section.heading and section.heading.casefold() != document.title.casefold()
        title = f"{document.title} › {section.heading}" if own else document.title
        for part in split_paragraphs(section.text):
            result.append(
                Draft(
                    content=f"{LABEL}: {title}\n{part}",
                    title=title,
                    content_date=document.date,
                    location=section.location,
                )
            )
    return result


def _text_sections(text: str) -> list[Section]:
    """A plain text's paragraphs as sections, each located at its first line."""
    sections, line = [], 1
    for block in re.split(r"(\n\s*\n)", text):
        if block.strip() and not _PARAGRAPH_BREAK.fullmatch(block):
            first = line + len(block) - len(block.lstrip("\n"))
            sections.append(Section(block.strip(), f"line:{first}"))
        line += block.count("\n")
    return _merged(sections)


def _merged(sections: Iterable[Section]) -> list[Section]:
    """Consecutive untitled paragraphs joined up to the chunk size, at the first's location."""
    merged: list[Section] = []
    for section in sections:
        last = merged[-1] if merged else None
        if last and not section.heading and len(last.text) + len(section.text) < SECTION_MAX_CHARS:
            merged[-1] = Section(f"{last.text}\n\n{section.text}", last.location, last.heading)
        else:
            merged.append(section)
    return merged


def read_txt(data: bytes, path: PurePath, result: Extraction) -> Document:
    return Document(path.stem, _text_sections(decode(data)), date_from_name(path.stem))


def read_html(data: bytes, path: PurePath, result: Extraction) -> Document:
    from engine.extractors.web_pages import page_document

    return page_document(decode(data), path)


def read_pdf(data: bytes, path: PurePath, result: Extraction) -> Document:
    from engine.extractors.pdf import pdf_document

    return pdf_document(data, path, result)


def read_docx(data: bytes, path: PurePath, result: Extraction) -> Document:
    from engine.extractors.docx import docx_document

    return docx_document(data, path)


READERS = {".txt": read_txt, ".html": read_html, ".htm": read_html, ".pdf": read_pdf}
READERS[".docx"] = read_docx


def extract_document(data: bytes, path: PurePath) -> Extraction:
    read = READERS.get(path.suffix.lower())
    if read is None:
        raise ExtractError(f"not a document this reader knows ({path.suffix or 'no extension'})")
    result = Extraction()
    document = read(data, path, result)
    result.drafts = drafts(document)
    return result


# What a plain `.txt` must look like to be claimed: prose, not a list, a log or a config.
PROSE_MIN_WORDS = 40
PROSE_MIN_WORDS_PER_LINE = 6
# A word of any script but no ASCII capitals (`ERROR.`) before a sentence's end, looked for
# only from a word's first letter: from each letter of a long word it was quadratic.
_SENTENCE_END = re.compile(r"(?<![^\W\d_A-Z])[^\W\d_A-Z]{3,}[.!?](?:\s|$)")
_LOG_LINE = re.compile(r"^\s*(\[?\d{1,4}[-/.:]\d{1,2}|[\w.-]+\s*[=:]\s*\S+$|[#;/]{1,2}\s)")
PROJECT_TEXTS = frozenset(
    f"{stem}.txt"
    for stem in ("readme", "license", "licence", "copying", "changelog", "authors", "notice")
    + ("requirements", "cmakelists", "robots", "third_party_notices", "credits", "install")
)


def is_prose(text: str) -> bool:
    """Sentences in paragraphs: enough words, long lines, few lines shaped as log entries,
    settings or comments."""
    lines = [line for line in text.splitlines() if line.strip()]
    words = sum(len(line.split()) for line in lines)
    if not lines or words < PROSE_MIN_WORDS or words / len(lines) < PROSE_MIN_WORDS_PER_LINE:
        return False
    shaped = sum(1 for line in lines if _LOG_LINE.match(line))
    return shaped / len(lines) < 0.2 and bool(_SENTENCE_END.search(text))


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A PDF (`%PDF-` first), a `.docx` (a zip), a saved web page, or a `.txt` of prose."""
    from engine.extractors.web_pages import is_saved_page

    lower = name.lower()
    if lower.endswith(".pdf"):
        return head.startswith(b"%PDF-")
    if lower.endswith(".docx"):
        return head.startswith(b"PK\x03\x04") and not name.startswith("~$")  # Word's lock file
    if lower.endswith((".html", ".htm")):
        return is_saved_page(decode_head(head))
    if lower in PROJECT_TEXTS or not lower.endswith(".txt") or b"\x00" in head:
        return False
    return is_prose(decode_head(head))


def decode_head(head: bytes) -> str:
    """A file's first bytes as text, in whatever encoding it was saved (a cp1251 note too)."""
    try:
        return decode(head, head=True)
    except ExtractError:  # binary: no text to judge
        return ""


READER = FileReader(extract_document)
RECOGNISER = Recogniser(
    (".pdf", ".docx", ".html", ".htm", ".txt"),
    recognise,
    about="a PDF (`%PDF-` first), a `.docx`, a saved web page, or a `.txt` of prose",
)

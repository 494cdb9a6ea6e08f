"""A web page saved from a browser (`.html`): its readable text (scripts, styles, navigation
and hidden elements removed, as mail bodies are read), cut at its headings, titled by its
`<title>`. Claimed only when it is a saved page, not a project's template."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePath

from bs4 import BeautifulSoup, Tag

from engine.extractors.chunking import date_from_name, parse_date
from engine.extractors.document_sections import Document, headed_sections
from engine.extractors.mail import html_to_text

# A tag's attributes are read up to the next `<` as well as `>`: from every `<link` of a
# head without `>` the scan would otherwise run to its end (quadratic). The comments before
# `<html` are matched possessively: a comment's end is never looked for past its first
# `-->`, where backtracking tried every way of grouping 40 empty comments (exponential).
_SAVED = re.compile(
    r"<!--\s*saved from url=|Page saved with SingleFile|<link[^<>]+rel=[\"']?canonical"
    r"|<meta[^<>]+property=[\"']?og:",
    re.IGNORECASE,
)
_HTML = re.compile(r"^\s*(?:<!--.*?-->\s*)*+(<!doctype html|<html)", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(r"<title[^<>]*>", re.IGNORECASE)
_HEADINGS = ("h1", "h2", "h3")
_DROPPED = ("nav", "header", "footer", "aside", "form")


def is_saved_page(head: str) -> bool:
    """An HTML document with a `<title>` and a mark of a page saved from the web (the
    browser's `saved from url` comment, SingleFile's, a canonical link or Open Graph tags)."""
    return bool(_HTML.match(head)) and bool(_TITLE.search(head)) and bool(_SAVED.search(head))


def _published(soup: BeautifulSoup) -> str | None:
    for key, value in (("property", "article:published_time"), ("name", "date")):
        tag = soup.find("meta", attrs={key: value})
        if tag is not None and tag.get("content"):
            return parse_date(str(tag.get("content")))
    return None


def _blocks(body: Tag | BeautifulSoup) -> Iterator[tuple[bool, str]]:
    """The page's readable blocks in order, each `(is_heading, text)`; empty ones skipped."""
    for element in body.find_all(["h1", "h2", "h3", "p", "li", "pre", "td", "blockquote"]):
        if element.find_parent(["p", "li", "pre", "td", "blockquote"]):
            continue  # read with its block
        text = html_to_text(str(element)).strip()
        if text:
            yield element.name in _HEADINGS, text


def page_document(markup: str, path: PurePath) -> Document:
    soup = BeautifulSoup(markup, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    date = _published(soup) or date_from_name(path.stem)
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    body = soup.body or soup
    return Document(title or path.stem, headed_sections(_blocks(body)), date)

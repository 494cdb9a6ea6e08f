"""Pure text helpers for the window: dates, snippets with highlights, titles, the footer's
counts, locations. No Qt."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from pathlib import PurePath

from engine.extractors.markdown import section_title
from engine.parts import body_start
from engine.sources import source_type as source_type_named

_MARK = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_LINE = re.compile(r"^line:(\d+)")


def type_label(source_type: str) -> str:
    """A short human name for a source type (chips, hits): its label, in lower case."""
    declared = source_type_named(source_type)
    return declared.label.lower() if declared else source_type.replace("_", " ")


def type_icon_name(source_type: str) -> str:
    """The tile under resources/icons/types/ (without .svg) of a source type; an undeclared
    type (`PROFILE_TYPE`, one only a config route names) looks for a tile of its own name."""
    declared = source_type_named(source_type)
    return declared.icon_name if declared else source_type


def parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        try:
            return datetime.combine(date.fromisoformat(value[:10]), datetime.min.time())
        except ValueError:
            return None


def relative_date(value: str | None, now: datetime) -> str:
    """ "today", "yesterday", "3 days ago", "2 weeks ago", "in 4 days", "Mar 2024"…"""
    when = parse_date(value)
    if when is None:
        return ""
    days = (now.date() - when.date()).days
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days == -1:
        return "tomorrow"
    if days < 0:
        return f"in {-days} days" if days > -14 else when.strftime("%b %-d, %Y")
    if days < 14:
        return f"{days} days ago"
    if days < 60:
        return f"{days // 7} weeks ago"
    if days < 365:
        return f"{days // 30} months ago"
    return when.strftime("%b %Y")


def absolute_date(value: str | None) -> str:
    """ "Tuesday 30 June 2026, 14:05" (time only when the value has one)."""
    when = parse_date(value)
    if when is None:
        return ""
    text = when.strftime("%A %-d %B %Y")
    if value and len(value) > 10 and (when.hour or when.minute):
        text += when.strftime(", %H:%M")
    return text


def snippet_html(snippet: str, colour: str, mark_bg: str | None = None) -> str:
    """The engine's `**term**` marks as bold, coloured HTML; everything else escaped."""
    style = f"color:{colour};font-weight:600"
    if mark_bg:
        style += f";background-color:{mark_bg}"
    escaped = html.escape(snippet.replace("\n", " "), quote=False)
    return _MARK.sub(lambda m: f'<span style="{style}">{m.group(1)}</span>', escaped)


def plain_snippet(snippet: str) -> str:
    return _MARK.sub(lambda m: m.group(1), snippet)


def highlight_terms(text: str, terms: Iterable[str], colour: str, mark_bg: str) -> str:
    """`text` as HTML with every word starting with a matched term highlighted."""
    escaped = html.escape(text, quote=False)
    words = sorted({t for t in terms if len(t) >= 2}, key=len, reverse=True)
    if not words:
        return escaped.replace("\n", "<br>")
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(re.escape(html.escape(w)) for w in words) + r")\w*", re.IGNORECASE
    )
    style = f"color:{colour};font-weight:600;background-color:{mark_bg}"
    marked = pattern.sub(lambda m: f'<span style="{style}">{m.group(0)}</span>', escaped)
    return marked.replace("\n", "<br>")


def plural(count: int, word: str, many: str | None = None) -> str:
    """ "1 hit", "29 hits", "1 keyword match", "9 keyword matches" (with `many`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def keyword_matches(counts: Mapping[str, int], source_types: Sequence[str]) -> int | None:
    """What the chips that are on count: the chosen types' keyword matches, or the "All"
    chip's (every type) when none is chosen; None when the query has no counts at all."""
    if not counts:
        return None
    chosen = source_types or tuple(counts)
    return sum(counts.get(t, 0) for t in chosen)


def status_text(shown: int, matches: int | None, took_ms: float, mode: str) -> str:
    """The footer: the hits on the page (the relevance floor may show fewer than the limit),
    then the keyword matches the chips count, so the two numbers are told apart:
    "29 hits shown · 9 keyword matches · 41 ms · hybrid"."""
    parts = [plural(shown, "hit") + " shown"]
    if matches is not None:
        parts.append(plural(matches, "keyword match", "keyword matches"))
    return " · ".join([*parts, f"{took_ms:.0f} ms", mode])


CRUMB = " › "  # the one breadcrumb separator the window shows
_ARCHIVE_MARK = re.compile(r"\.zip!(?=/|\s|$)", re.IGNORECASE)


def hit_title(title: str, source_file: str) -> str:
    """The title a hit is shown with (its file's name when it has none), a top heading that
    only repeats the note's title left out: an index written before the Markdown extractor
    did so (`section_title`) still holds "Rajesh Kumar › Rajesh Kumar". One separator,
    "›", between the parts (the index writes headings with ">"), and an archive's name
    without its `.zip!` marker ("Skye Easter trip · 2024-03-13")."""
    if not title:
        return shown_file(source_file)
    head, arrow, path = title.partition(" › ")
    title = section_title(head, path.split(" > ")) if arrow else title
    return _ARCHIVE_MARK.sub("", title.replace(" > ", CRUMB))


def shown_file(source_file: str) -> str:
    """A hit's file in words: its name, and an archive's member as "archive › member"
    (`Skye Easter trip.zip › _chat.txt`), never the index's `!/` marker."""
    archive, marker, member = source_file.partition("!/")
    if not marker:
        return PurePath(source_file).name
    return f"{PurePath(archive).name}{CRUMB}{member}"


def shown_path(source_file: str) -> str:
    """A hit's whole path, with an archive's member after "›" instead of `!/`."""
    archive, marker, member = source_file.partition("!/")
    return f"{archive}{CRUMB}{member}" if marker else source_file


def split_header(text: str) -> tuple[dict[str, str], str]:
    """A chunk's generated header lines ("Note: …", "Tags: …", "Section: …") as label →
    value, and the chunk's own text after them (`engine.parts.body_start`)."""
    start = body_start(text)
    fields: dict[str, str] = {}
    for line in text[:start].splitlines():
        label, colon, value = line.partition(": ")
        if colon:
            fields[label] = value.strip()
    return fields, text[start:]


def line_of(location: str) -> int | None:
    """The line number of a location (`line:12`, `line:12#anchor`), else None."""
    match = _LINE.match(location or "")
    return int(match.group(1)) if match else None


def human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"

"""Markdown: front matter, then section-aware chunks (every heading splits, fences do not).

Reads every source type whose reader is "markdown" in engine/sources.py (notes, journals,
entity files, code docs, …): Markdown that differs only in its route, heading and half-life.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import yaml

from engine.extractors.base import Extraction, FamilyReader
from engine.extractors.chunking import SECTION_MAX_CHARS, date_from_name, decode, parse_date
from engine.extractors.obsidian import render_links, strip_comments
from engine.extractors.sniffing import Recogniser, SiblingCheck
from engine.records import Draft, Mention
from engine.sources import SourceType

# The title's closing `#`s are cut by heading_title: as a regex tail after a lazy title
# (`(.+?)\s*#*\s*$`) a long run of spaces before the line's end cost cubic time.
_HEADING = re.compile(r"(#{1,6})\s+(.+)")  # fullmatch
_FENCE = re.compile(r"^\s*(```|~~~)")
# Limits checked on YAML's event stream before anything is built: a 274-byte alias bomb
# expands to gigabytes, and deep nesting overflows the recursive composer.
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_FRONT_MATTER_ALIASES = 16  # a bomb needs dozens; real front matter uses none or a few
MAX_FRONT_MATTER_DEPTH = 32
# What PyYAML raises on odd data besides YAMLError (`!!timestamp 99999-01-01`, 2024-02-30,
# an integer of 5,000 digits).
_YAML_FAILURES = (yaml.YAMLError, ValueError, TypeError, AttributeError, OverflowError)
UNREADABLE_FRONT_MATTER = "line 1: front matter is not readable YAML; read as text"
SKIPPED_FRONT_MATTER = "line 1: front matter is not readable YAML; skipped"
PEOPLE_FOLDER, PERSON_TAG = "people", "person"
_PERSON_TAG = re.compile(r"(?<![\w/#&])#person(?![\w-])")  # `#person`, `#person/friend`
_ORG_KEYS = ("organisation", "organization", "org", "company")


@dataclass(frozen=True)
class FrontMatter:
    """A note's front matter, its body and the body's first line; `problem` if refused."""

    data: dict[str, Any]
    body: str
    first_line: int
    problem: str = ""


def front_matter_refusal(source: str) -> str:
    """Why this front matter is not parsed (too large, too many aliases, too deep), or ""."""
    if len(source) > MAX_FRONT_MATTER_BYTES or len(source.encode()) > MAX_FRONT_MATTER_BYTES:
        return f"larger than {MAX_FRONT_MATTER_BYTES} bytes"
    aliases = depth = 0
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_FRONT_MATTER_ALIASES:
                return f"more than {MAX_FRONT_MATTER_ALIASES} YAML aliases"
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                return f"nested deeper than {MAX_FRONT_MATTER_DEPTH} levels"
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return ""


def _front_matter(text: str, lines: list[str], end: int) -> FrontMatter:
    """The front matter between line 1 and line `end`. Broken or refused YAML is skipped
    (the body after it is indexed); a block that holds no `key:` line, or parses to no
    mapping, is probably prose between two rules and is read as text."""
    source, body = "\n".join(lines[1:end]), "\n".join(lines[end + 1 :])
    try:
        refusal = front_matter_refusal(source)
        if refusal:
            return FrontMatter(
                {}, body, end + 2, f"line 1: front matter refused ({refusal}); skipped"
            )
        data = yaml.safe_load(source) or {}
    except _YAML_FAILURES:
        if any(":" in line for line in lines[1:end] if line.strip()[:1] not in ("", "#")):
            return FrontMatter({}, body, end + 2, SKIPPED_FRONT_MATTER)
        return FrontMatter({}, text, 1, UNREADABLE_FRONT_MATTER)
    if not isinstance(data, dict):
        return FrontMatter({}, text, 1, UNREADABLE_FRONT_MATTER)
    return FrontMatter(data, body, end + 2)


def read_front_matter(text: str) -> FrontMatter:
    """Split off a `---` front matter block, within the limits above."""
    if not text.startswith("---"):
        return FrontMatter({}, text, 1)
    lines = text.split("\n")
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            return _front_matter(text, lines, end)
    return FrontMatter({}, text, 1, UNREADABLE_FRONT_MATTER)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """(front matter, body, line number where the body starts). Bad YAML is treated as body."""
    front = read_front_matter(text)
    return front.data, front.body, front.first_line


@dataclass
class Section:
    breadcrumb: list[str]
    lines: list[str]
    start_line: int
    anchor: str


def slugify(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-")


def heading_title(text: str) -> str:
    """A heading's text without its closing `#`s and spaces (`## Plan ##` → "Plan"); a
    heading of `#`s only keeps its first."""
    return text.rstrip().rstrip("#").strip() or text[:1].strip()


def sections(body: str, first_line: int) -> list[Section]:
    """Split on every heading outside code fences; keep the heading path of each section."""
    found: list[Section] = [Section([], [], first_line, "")]
    path: list[tuple[int, str]] = []
    in_fence = False
    for offset, line in enumerate(body.split("\n")):
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.fullmatch(line)
        if heading:
            level, title = len(heading[1]), heading_title(heading[2])
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
            found.append(Section([t for _, t in path], [], first_line + offset, slugify(title)))
        else:
            found[-1].lines.append(line)
    return [s for s in found if "\n".join(s.lines).strip() or s.breadcrumb]


def _split_long(text: str, limit: int) -> list[str]:
    """Split an over-long section on blank lines, keeping paragraphs whole where possible."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text):
        if current and len(current) + len(paragraph) + 2 > limit:
            parts.append(current)
            current = paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        parts.append(current)
    return parts


def note_title(front: dict[str, Any], path: PurePath) -> str:
    """Front matter `title`, else the file name: `2024-03-11` stays a date, a dated
    `2023-09-17-lakes-loop` reads `lakes loop` (the date is the chunk's content_date)."""
    title = front.get("title")
    if title:
        return str(title)
    rest = re.sub(r"^\d{4}-\d{2}-\d{2}[ _-]*", "", path.stem)
    return rest.replace("_", " ").replace("-", " ").strip() if rest else path.stem


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


@dataclass(frozen=True)
class NoteHead:
    """What every chunk of one note shares: its title, date, header lines and metadata."""

    title: str
    date: str | None
    header_lines: list[str]
    tags: list[str]
    aliases: list[str]
    obsidian: bool  # render wikilinks and embeds (not in code docs, where `[[` is code)


def _note_head(front: dict[str, Any], path: PurePath, label: str, obsidian: bool) -> NoteHead:
    title = note_title(front, path)
    # `created:` is what Obsidian templates and plugins write when there is no `date:`.
    date = parse_date(front.get("date")) or parse_date(front.get("created"))
    aliases, tags = _as_list(front.get("aliases")), _as_list(front.get("tags"))
    header_lines = [f"{label}: {title}"]
    if aliases:
        header_lines.append("Aliases: " + ", ".join(aliases))
    if tags:
        header_lines.append("Tags: " + ", ".join(tags))
    return NoteHead(title, date or date_from_name(path.name), header_lines, tags, aliases, obsidian)


def section_title(title: str, crumbs: list[str]) -> str:
    """A chunk's title: the note's title, then its heading path, leaving out a top heading
    that only repeats the title (`# Pricing model` in "Pricing model" gives "Pricing model",
    not "Pricing model › Pricing model")."""
    if crumbs and _words(crumbs[0]) == _words(title):
        crumbs = crumbs[1:]
    return f"{title} › {' > '.join(crumbs)}" if crumbs else title


def _words(text: str) -> str:
    """`text` compared as words: case and spacing ignored."""
    return " ".join(text.split()).casefold()


def _section_drafts(head: NoteHead, section: Section) -> list[Draft]:
    crumbs = [render_links(c)[0] if head.obsidian else c for c in section.breadcrumb]
    crumb = " > ".join(crumbs)
    title = section_title(head.title, crumbs)
    drafts, in_fence = [], False
    for part in _split_long("\n".join(section.lines).strip(), SECTION_MAX_CHARS):
        links: list[str] = []
        if head.obsidian:
            part, links, in_fence = render_links(part, in_fence)
        metadata = {"breadcrumb": crumbs, "tags": head.tags, "aliases": head.aliases}
        lines = [*head.header_lines, *([f"Section: {crumb}"] if crumb else []), "", part]
        drafts.append(
            Draft(
                content="\n".join(lines),
                title=title,
                content_date=head.date,
                location=f"line:{section.start_line}"
                + (f"#{section.anchor}" if section.anchor else ""),
                metadata=metadata | ({"links": links} if links else {}),
            )
        )
    return drafts


def markdown_drafts(
    text: str, path: PurePath, label: str = "Note", obsidian: bool = True
) -> Extraction:
    front_matter = read_front_matter(text)
    head = _note_head(front_matter.data, path, label, obsidian)
    body = strip_comments(front_matter.body) if obsidian else front_matter.body
    result = Extraction()
    if front_matter.problem and text.startswith("---\n"):
        result.problems.append(front_matter.problem)
    for section in sections(body, front_matter.first_line):
        if "\n".join(section.lines).strip():
            result.drafts.extend(_section_drafts(head, section))
    if obsidian and is_person_note(front_matter.data, body, path):
        result.mentions.append(person_note_mention(front_matter.data, head))
    return result


def is_person_note(front: dict[str, Any], body: str, path: PurePath) -> bool:
    """A note about one person: in a folder named `People` (at any depth), tagged
    `person` (front matter `tags`, or `#person` in the text) or of `type: person`."""
    if any(folder.casefold() == PEOPLE_FOLDER for folder in path.parent.parts):
        return True
    tags = [t.lstrip("#").casefold() for t in _as_list(front.get("tags"))]
    if any(t == PERSON_TAG or t.startswith(f"{PERSON_TAG}/") for t in tags):
        return True
    return str(front.get("type") or "").casefold() == PERSON_TAG or bool(_PERSON_TAG.search(body))


def person_note_mention(front: dict[str, Any], head: NoteHead) -> Mention:
    """The person a person note is about: its title, its `aliases:`, and the emails,
    phones and organisation its front matter gives."""
    org = next((str(front[k]) for k in _ORG_KEYS if front.get(k)), "")
    return Mention(
        name=head.title,
        aliases=tuple(head.aliases),
        emails=tuple(v for k in ("email", "emails") for v in _as_list(front.get(k))),
        phones=tuple(v for k in ("phone", "phones", "mobile") for v in _as_list(front.get(k))),
        org=org,
        role="note",
        first=head.date,
        last=head.date,
    )


def extract_markdown(source: SourceType, data: bytes, path: PurePath) -> Extraction:
    """A Markdown type's file; its heading starts every chunk ("Journal: 2024-03-11")."""
    return markdown_drafts(decode(data), path, source.chunk_heading, source.obsidian_syntax)


# A repository's own documents, not anyone's notes: never recognised as notes by content.
REPOSITORY_DOCS = frozenset(
    f"{stem}.md"
    for stem in ("readme", "changelog", "changes", "history", "license", "licence", "contributing")
    + ("code_of_conduct", "security", "authors", "notice", "support", "funding")
)


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A Markdown note anywhere (an Obsidian vault's too), by its name alone; a project's
    README, CHANGELOG, LICENSE and the like are not notes."""
    return name.lower() not in REPOSITORY_DOCS


READER = FamilyReader(extract_markdown)
RECOGNISER = Recogniser(
    (".md",),
    recognise,
    reads_head=False,
    about="any `.md` (an Obsidian vault's too) but a project's README, CHANGELOG, LICENSE…",
)

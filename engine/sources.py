"""Every source type, declared once: how its files are found, read, named, shown and ranked.

A source type is the kind of file a chunk came from (`chunks.source_type`, the `--type`
filter, the desktop's chips). Each is one `SourceType` row in `SOURCE_TYPES`; every other
table that knows about source types is derived from these rows: the default routes
(`engine.index.routes`), the extractor registry (`engine.extractors.registry`), the default
half-lives and grouped types (`engine.settings.table`), the desktop's labels and icons, how
`memex discover` groups exports (`engine.index.exports`), the databases read from a copy
(`READ_DATABASES`) and the address books (`NOT_CONVERSATIONS`, engine.people).

This module sits below every other layer and holds plain data only, so the settings table
can read it. The function that reads a type is named by `reader`: a module of
`engine/extractors/` that declares it as `READER`, imported by that name in
`engine.extractors.registry`. A hook that knows a file by its content rather than its path is
named the same way (`recogniser`, a module declaring `RECOGNISER`). So a new format is one
row here and one module there (docs/architecture.md, "Adding a format"). What a reader
needs from files beside the one it reads is named by `siblings`; the indexer reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SourceType:
    """One kind of file Memex reads, and everything the rest of Memex needs to know of it."""

    name: str  # stored in chunks.source_type; what config, filters and fixture folders use
    label: str  # the user's word for it ("Slack", "Health"); the desktop's chips and hits
    reader: str  # the extractor module under engine/extractors/ that reads its files
    half_life_days: float  # default recency half-life (`search.half_lives`)
    routes: tuple[str, ...] = ()  # default path patterns, relative to a root
    groups_sections: bool = False  # a document: its sections are one result when grouped
    heading: str = ""  # what starts each chunk, where the reader writes one; empty: the label
    icon: str = ""  # the tile under resources/icons/types/ (without .svg); empty: the name
    title_keys: tuple[str, ...] = ()  # record fields a title is taken from (structured reader)
    obsidian_syntax: bool = True  # Markdown reader: `[[links]]` and `%%` are syntax, not code
    # Files beside each file that its reader needs too, relative to the file's folder
    # ("../users.json"): read by the indexer and handed in; a change to one reindexes the file.
    siblings: tuple[str, ...] = ()
    # How its files are known by their content anywhere under a root: a module of
    # engine/extractors/ that declares `RECOGNISER`; empty: only its routes find its files.
    recogniser: str = ""
    # The names of its files that are SQLite databases (Messages' `chat.db`): read from a
    # consistent copy with their WAL (engine.index.databases), never an index's own, never
    # bounded by `max_file_bytes`.
    databases: tuple[str, ...] = ()
    # False: an address book. It lists the people the user keeps (its mentions seed the
    # people directory as curated ones) and is no conversation with them.
    conversation: bool = True
    # How `memex discover` tells its files. `export_files`: the files of one export,
    # relative to the export's root (`*/*.json`: a channel folder's day files), told as one
    # "<label> export" at that root. `in_vaults`: by the Obsidian vault holding them (the
    # folder with `.obsidian/`), else by the root's top folder. Neither: each folder's files
    # of the type together.
    export_files: str = ""
    in_vaults: bool = False

    @property
    def chunk_heading(self) -> str:
        return self.heading or self.label

    @property
    def icon_name(self) -> str:
        return self.icon or self.name


def _chat(
    name: str, label: str, routes: tuple[str, ...], *siblings: str, recogniser: str = ""
) -> SourceType:
    return SourceType(name, label, name, 35, routes, siblings=siblings, recogniser=recogniser)


# The pseudo-type of a search hit that is a person's card, not a chunk (no file, no reader).
PROFILE_TYPE = "profile"


def _document(name: str, label: str, routes: tuple[str, ...], half_life: float) -> SourceType:
    return SourceType(name, label, "markdown", half_life, routes, groups_sections=True)


def _structured(name: str, label: str, route: str, half_life: float, *titles: str) -> SourceType:
    return SourceType(name, label, "structured", half_life, (route,), title_keys=titles)


def _identity(name: str, label: str, route: str) -> SourceType:
    return SourceType(name, label, "records", 365, (route,))


_MEETINGS = "data/meetings/processed/"
# Where Instagram's threads lie: its download folder (`instagram-<user>-<date>-…`), the
# current layout's `your_instagram_activity/`, and the seed layout's folder.
_INSTAGRAM = ("**/instagram-*", "**/your_instagram_activity", "data/instagram")
_ENTITIES = "memory/entities/"

# In route order: a path takes the first route that matches it.
SOURCE_TYPES: tuple[SourceType, ...] = (
    replace(
        _chat(
            "slack",
            "Slack",
            ("data/slack/*.jsonl", "data/slack/*/*/*.json"),
            *("../users.json", "../dms.json", "../mpims.json"),  # an export's root listings
            recogniser="slack_export",
        ),
        export_files="*/*.json",
    ),
    _chat(
        "telegram",
        "Telegram",
        ("data/telegram/*.jsonl", "data/telegram/**/result.json"),
        recogniser="telegram",
    ),
    _chat("signal", "Signal", ("data/signal/*.jsonl",), recogniser="signal"),
    _chat("whatsapp", "WhatsApp", ("data/whatsapp/*.txt",), recogniser="whatsapp"),
    replace(
        _chat(
            "imessage",
            "iMessage",
            ("data/imessage/chat.db", "Library/Messages/chat.db"),
            recogniser="imessage",
        ),
        databases=("chat.db",),
    ),
    SourceType(
        "meeting",
        "Meeting",
        "meeting",
        60,
        (f"{_MEETINGS}*.md", f"{_MEETINGS}*.vtt", f"{_MEETINGS}*.srt"),
        groups_sections=True,
        recogniser="subtitles",
    ),
    SourceType(
        "email_catalog",
        "Email",
        "mail",
        90,
        ("data/email/*.jsonl", "data/email/*.mbox", "data/email/*.eml"),
        recogniser="mail",
    ),
    SourceType("event", "Event", "event", 60, ("data/events/*.jsonl",)),
    SourceType("garmin", "Health", "garmin", 14, ("data/garmin/*.json",), recogniser="garmin"),
    SourceType("cgm", "Glucose", "cgm", 14, ("data/cgm/*.csv",), recogniser="cgm"),
    _identity("observation", "Observation", "data/identity/observations.jsonl"),
    _identity("quote", "Quote", "data/identity/quotes.jsonl"),
    _identity("story", "Story", "data/identity/stories.jsonl"),
    _document("transcript", "Transcript", ("data/identity/transcripts/*.md",), 120),
    SourceType("voice", "Voice", "voice", 60, ("data/voice/*.json",)),
    _structured("checkin", "Check-in", "data/checkins/*.jsonl", 30, "title"),
    _structured(
        "experiment",
        "Experiment",
        "data/experiments/*.jsonl",
        60,
        *("title", "name", "hypothesis", "question"),
    ),
    _structured(
        "interview",
        "Interview",
        "data/interviews/*.jsonl",
        365,
        *("question", "title", "topic", "prompt"),
    ),
    SourceType(
        "interview_meta",
        "Interview meta",
        "structured",
        365,
        ("data/interviews/meta/*.json",),
        heading="Interview",
        title_keys=("title", "name", "subject", "person", "topic"),
    ),
    _document("journal", "Journal", ("data/journal/*.md",), 60),
    _document("scratch", "Scratch", ("data/scratch/*.md",), 14),
    SourceType(
        "board_summary",
        "Board",
        "markdown",
        60,
        ("data/board/*.md",),
        groups_sections=True,
        heading="Board summary",
    ),
    _document("rwgps_memory", "Ride", ("data/rwgps/*.md",), 180),
    _structured(
        "podcast_digest",
        "Podcast",
        "data/podcasts/*.jsonl",
        30,
        *("title", "episode", "episode_title", "name"),
    ),
    _document(
        "entity_file",
        "Entity",
        tuple(f"{_ENTITIES}{kind}/*.md" for kind in ("people", "projects", "topics")),
        365,
    ),
    SourceType(
        "codebase_doc",
        "Code doc",
        "markdown",
        365,
        ("memory/codebase/*.md",),
        groups_sections=True,
        obsidian_syntax=False,  # `[[` and `%%` are code there
    ),
    replace(
        _document("note", "Note", ("notes/**/*.md",), 60), recogniser="markdown", in_vaults=True
    ),
    SourceType(
        "contact",
        "Contacts",
        "vcard",
        730,
        ("data/contacts/*.vcf",),
        recogniser="vcard",
        conversation=False,
    ),
    SourceType("calendar", "Calendar", "ical", 60, ("data/calendar/*.ics",), recogniser="ical"),
    _chat("discord", "Discord", ("data/discord/**/*.json",), recogniser="discord"),
    # Instagram's threads have Messenger's shape: known by the folders of its download.
    SourceType(
        "instagram",
        "Instagram",
        "meta_messages",
        35,
        tuple(f"{top}/messages/inbox/*/message_*.json" for top in _INSTAGRAM),
    ),
    SourceType(
        "messenger",
        "Messenger",
        "meta_messages",
        35,
        ("data/messenger/**/message_*.json",),
        recogniser="meta_messages",
    ),
    _chat(
        "google_chat",
        "Google Chat",
        ("data/google_chat/**/messages.json",),
        "group_info.json",
        recogniser="google_chat",
    ),
    SourceType(
        "document",
        "Document",
        "documents",
        365,
        tuple(f"data/documents/**/*.{ext}" for ext in ("pdf", "docx", "html", "txt")),
        groups_sections=True,
        recogniser="documents",
    ),
)

SOURCE_TYPES_BY_NAME: dict[str, SourceType] = {t.name: t for t in SOURCE_TYPES}
# The file names that are databases someone's data lives in, read as their type reads them.
READ_DATABASES: frozenset[str] = frozenset(n for t in SOURCE_TYPES for n in t.databases)
# The address books: types whose people are listed, not talked with.
NOT_CONVERSATIONS: frozenset[str] = frozenset(t.name for t in SOURCE_TYPES if not t.conversation)


def source_type(name: str) -> SourceType | None:
    """The declared source type of this name, or None (a type only a config route names)."""
    return SOURCE_TYPES_BY_NAME.get(name)

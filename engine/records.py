"""The records that flow through Memex: chunks, search results, index statistics, people."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NewType

ChunkId = NewType("ChunkId", str)


@dataclass(frozen=True)
class Draft:
    """One chunk as an extractor sees it, before it gets an id and a file."""

    content: str
    title: str = ""
    content_date: str | None = None  # ISO date or datetime
    location: str = ""  # "line:12", "ts:1717000000.123", "t:00:01:05", "#anchor"
    metadata: dict[str, Any] = field(default_factory=dict)
    people: tuple[str, ...] = ()  # names of the people who speak or appear in the chunk


@dataclass(frozen=True)
class Chunk:
    """One indexed unit of text, addressed by the hash of its file and content."""

    id: ChunkId
    source_file: str
    source_type: str
    content: str
    content_hash: str
    title: str = ""
    content_date: str | None = None
    location: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    people: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mention:
    """A person as one file names them: what the people directory is built from.

    An extractor reports one per person it meets (an author, a recipient, a vCard); the
    indexer sums equal mentions of one file (`count`, the span `first`..`last`) and keeps
    them with the file, so a changed file replaces only its own."""

    name: str = ""
    aliases: tuple[str, ...] = ()  # other names this file gives them (a display name, a nickname)
    emails: tuple[str, ...] = ()
    phones: tuple[str, ...] = ()  # as written; engine.people normalises them
    handles: tuple[str, ...] = ()  # "<service>:<id>": "slack:U024BE7LH", "telegram:user123"
    org: str = ""  # the organisation or workspace a name is unique within (a Slack team)
    role: str = "author"  # author | recipient | speaker | attendee | organiser | contact | note
    count: int = 1  # messages or chunks of this file that this mention stands for
    first: str | None = None  # ISO date or datetime of the first and last of them
    last: str | None = None

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two mentions of one file the same mention."""
        return (
            self.name,
            self.aliases,
            self.emails,
            self.phones,
            self.handles,
            self.org,
            self.role,
        )


@dataclass(frozen=True)
class Conversation:
    """A file a person took part in, as their card lists it (the latest first)."""

    title: str  # the chat's, channel's or mail's own name; else the file's stem or folder
    source_file: str
    source_type: str
    last: str | None = None  # ISO date or datetime of their last message there


OWNER_ME = "me"  # Person.owner: the people file's `me` names them
OWNER_SETTING = "setting"  # Person.owner: no people file's `me`, the `people.me` setting
OWNER_INFERRED = "inferred"  # Person.owner: the one person in most conversations


@dataclass(frozen=True)
class Person:
    """A known person: from the people directory (built from the data) and the curated
    people file (`profile/relationships.json`)."""

    name: str
    slug: str
    aliases: tuple[str, ...] = ()
    relationship: str = ""
    context: str = ""
    notes: tuple[str, ...] = ()
    interests: tuple[str, ...] = ()
    milestones: tuple[tuple[str, str], ...] = ()  # (date, event)
    emails: tuple[str, ...] = ()  # normalised (engine.people.normalise)
    phones: tuple[str, ...] = ()
    handles: tuple[str, ...] = ()  # "<service>:<id>"
    sources: tuple[tuple[str, int], ...] = ()  # (source type, files naming them), most first
    messages: int = 0  # messages or chunks of the data that name them
    first: str | None = None  # first and last contact, ISO
    last: str | None = None
    conversations: tuple[Conversation, ...] = ()
    seen_with: tuple[tuple[str, str], ...] = ()  # (slug, name) of whom they appear with most
    curated: bool = False  # in the people file
    hidden: bool = False  # the people file's `hidden: true`: never shown
    split: tuple[str, ...] = ()  # the people file's `not`: identifiers or names split off
    # The archive's owner: OWNER_ME (the people file's `me` names them), OWNER_SETTING
    # (else the `people.me` setting does), OWNER_INFERRED (in most conversations:
    # engine/people/directory.py), or "" for everyone else.
    owner: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "slug": self.slug,
            "aliases": list(self.aliases),
            "relationship": self.relationship,
            "context": self.context,
            "notes": list(self.notes),
            "interests": list(self.interests),
            "milestones": [{"date": d, "event": e} for d, e in self.milestones],
            "emails": list(self.emails),
            "phones": list(self.phones),
            "handles": list(self.handles),
            "sources": dict(self.sources),
            "messages": self.messages,
            "first": self.first,
            "last": self.last,
            "conversations": [
                {"title": c.title, "file": c.source_file, "type": c.source_type, "last": c.last}
                for c in self.conversations
            ],
            "seen_with": [{"slug": s, "name": n} for s, n in self.seen_with],
            "curated": self.curated,
            "hidden": self.hidden,
            "not": list(self.split),
            "owner": self.owner,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Person:
        """The person `as_dict` wrote (keys it did not write take their defaults)."""
        return cls(
            name=str(raw["name"]),
            slug=str(raw["slug"]),
            aliases=tuple(raw.get("aliases") or ()),
            relationship=str(raw.get("relationship") or ""),
            context=str(raw.get("context") or ""),
            notes=tuple(raw.get("notes") or ()),
            interests=tuple(raw.get("interests") or ()),
            milestones=tuple((m["date"], m["event"]) for m in raw.get("milestones") or ()),
            emails=tuple(raw.get("emails") or ()),
            phones=tuple(raw.get("phones") or ()),
            handles=tuple(raw.get("handles") or ()),
            sources=tuple((str(k), int(v)) for k, v in (raw.get("sources") or {}).items()),
            messages=int(raw.get("messages") or 0),
            first=raw.get("first"),
            last=raw.get("last"),
            conversations=tuple(
                Conversation(c["title"], c["file"], c.get("type", ""), c.get("last"))
                for c in raw.get("conversations") or ()
            ),
            seen_with=tuple((s["slug"], s["name"]) for s in raw.get("seen_with") or ()),
            curated=bool(raw.get("curated")),
            hidden=bool(raw.get("hidden")),
            split=tuple(raw.get("not") or ()),
            owner=str(raw.get("owner") or ""),
        )


@dataclass(frozen=True)
class SearchResult:
    """One hit as the user and the JSON output see it."""

    id: str
    content: str
    source_file: str
    source_type: str
    score: float
    matched_terms: tuple[str, ...] = ()
    content_date: str | None = None
    title: str = ""
    snippet: str = ""
    location: str = ""
    profile: dict[str, Any] | None = None
    explain: dict[str, Any] | None = None
    sections: int = 1  # sections of its note or meeting that matched (1: only this one)
    related: bool = False  # shown as context linked to a hit, not matched by the query
    language: str = ""  # the chunk's language, told at index time ("" for a profile)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "source_type": self.source_type,
            "source_file": self.source_file,
            "content_date": self.content_date,
            "score": round(self.score, 6),
            "title": self.title,
            "snippet": self.snippet,
            "content": self.content,
            "matched_terms": list(self.matched_terms),
            "location": self.location,
            "profile": self.profile,
        }
        # Only when they say something (absent: one section, a direct hit).
        if self.sections > 1:
            out["sections"] = self.sections
        if self.related:
            out["related"] = True
        if self.language:
            out["language"] = self.language
        return out


@dataclass(frozen=True)
class IndexStats:
    """What one reindex did."""

    files: int = 0
    chunks: int = 0  # chunks embedded or stored anew in this run
    skipped: int = 0  # files unchanged by mtime/size, or failed
    unchanged_chunks: int = 0
    deleted_chunks: int = 0
    errors: tuple[tuple[str, str], ...] = ()  # (path, message)
    seconds: float = 0.0
    embedded: int = 0  # chunks given a vector in this run
    deleted_files: int = 0
    empty_files: tuple[str, ...] = ()  # read whole, but no text to index (a heading alone)

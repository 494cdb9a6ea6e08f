"""What the MCP tools `get`, `person` and `status` return, as frozen records.

Each `as_json()` is the shape its `$defs` entry in engine/schemas/memex-v1.schema.json
describes (`search` returns `SearchResponse.as_json()`, the root of that schema).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from engine.records import Person, SearchResult
from engine.search.present.neighbours import Neighbour


@dataclass(frozen=True)
class ChunkView:
    """One chunk in full with the chunks around it in its file (or a person's card)."""

    id: str
    source_type: str
    source_file: str
    content: str
    content_date: str | None = None
    title: str = ""
    location: str = ""
    people: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    profile: Person | None = None
    neighbours: tuple[Neighbour, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source_type": self.source_type,
            "source_file": self.source_file,
            "content_date": self.content_date,
            "title": self.title,
            "location": self.location,
            "content": self.content,
            "people": list(self.people),
            "metadata": dict(self.metadata),
            "profile": None if self.profile is None else self.profile.as_dict(),
            "neighbours": [asdict(n) for n in self.neighbours],
        }


@dataclass(frozen=True)
class PersonMentions:
    """A known person's card and their most recent mentions, newest first."""

    query: str
    person: Person
    mentions: tuple[SearchResult, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "person": self.person.as_dict(),
            "mentions": [m.as_json() for m in self.mentions],
        }

"""Who has a card, and a card as text: the content of the profile result and the MCP card.

Read side only: a search imports this, never the directory's build (engine/people/directory.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.records import Person
from engine.settings import Settings
from engine.sources import source_type

SHOWN_IDENTIFIERS = 3


def has_card(person: Person, settings: Settings) -> bool:
    """Enough presence for a card: the people file names them, or they appear in enough
    source types, or in enough messages (the `people.card_*` settings)."""
    return (
        person.curated
        or len(person.sources) >= settings.people.card_min_sources
        or person.messages >= settings.people.card_min_messages
    )


def carded(people: Iterable[Person], settings: Settings) -> list[Person]:
    return [p for p in people if has_card(p, settings)]


def profile_text(person: Person) -> str:
    """A readable profile, as content of the injected result: the people file's fields, then
    what the data says (where they appear, first and last contact, the latest
    conversations, whom they are seen with)."""
    lines = [f"{person.name} — {person.relationship}".rstrip(" —")]
    if person.aliases:
        lines.append("Also: " + ", ".join(person.aliases))
    if person.context:
        lines.append(person.context)
    lines += [f"• {n}" for n in person.notes]
    if person.interests:
        lines.append("Interests: " + ", ".join(person.interests))
    lines += [f"{d}: {e}" for d, e in person.milestones]
    return "\n".join(lines + data_lines(person))


def data_lines(person: Person) -> list[str]:
    """What the directory found of them; [] for someone only the people file names."""
    lines = []
    if person.sources:
        where = ", ".join(f"{source_label(t)} {n}" for t, n in person.sources)
        lines.append(f"Appears in: {where} ({person.messages} messages)")
    if person.first or person.last:
        lines.append(f"First contact: {_day(person.first)} · last: {_day(person.last)}")
    contact = [*person.emails[:SHOWN_IDENTIFIERS], *person.phones[:SHOWN_IDENTIFIERS]]
    if contact:
        lines.append("Contact: " + ", ".join(contact))
    if person.conversations:
        latest = (
            f"{c.title} ({_day(c.last)})" if c.last else c.title for c in person.conversations
        )
        lines.append("Latest: " + "; ".join(latest))
    if person.seen_with:
        lines.append("Seen with: " + ", ".join(name for _, name in person.seen_with))
    return lines


def source_label(name: str) -> str:
    """The user's word for a source type ("Slack", "Mail"); the name when it is unknown."""
    declared = source_type(name)
    return declared.label if declared else name


def _day(when: str | None) -> str:
    return when[:10] if when else "?"

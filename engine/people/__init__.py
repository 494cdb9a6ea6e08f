"""Known people from `profile/relationships.json`, and matching names in text."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.records import Person
from engine.settings import Settings
from engine.text import clean_json, has_surrogate_escape


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _person(raw: dict[str, Any]) -> Person | None:
    name = str(raw.get("name") or "").strip()
    if not name:
        return None
    milestones = []
    for item in raw.get("milestones") or []:
        if isinstance(item, dict):
            milestones.append((str(item.get("date", "")), str(item.get("event", ""))))
    return Person(
        name=name,
        slug=slugify(name),
        aliases=tuple(str(a) for a in raw.get("aliases") or [] if str(a).strip()),
        relationship=str(raw.get("relationship") or ""),
        context=str(raw.get("context") or ""),
        notes=tuple(str(n) for n in raw.get("notes") or []),
        interests=tuple(str(i) for i in raw.get("interests") or []),
        milestones=tuple(milestones),
    )


def parse_people(data: bytes) -> list[Person]:
    text = data.decode("utf-8-sig")
    raw = json.loads(text)
    if has_surrogate_escape(text):  # "\ud800" in a name: U+FFFD, the rest is kept
        raw = clean_json(raw)
    items = raw.get("people", []) if isinstance(raw, dict) else raw
    return [p for p in (_person(r) for r in items if isinstance(r, dict)) if p is not None]


def load_people(settings: Settings) -> list[Person]:
    """People from every root's people file; a bad file is skipped (the indexer records it)."""
    people: dict[str, Person] = {}
    for root in settings.roots:
        path = Path(root) / settings.people_file
        try:
            for person in parse_people(path.read_bytes()):
                people.setdefault(person.slug, person)
        except (OSError, ValueError, RecursionError):  # nested past json's own limit
            continue
    return list(people.values())


class PeopleMatcher:
    """Finds the known person a text names: longest name or alias first, whole words only."""

    def __init__(self, people: Sequence[Person]) -> None:
        keys: list[tuple[str, Person]] = []
        for person in people:
            for name in person.names:
                if name.strip():
                    keys.append((name.strip().lower(), person))
        keys.sort(key=lambda kp: len(kp[0]), reverse=True)
        self._keys = keys
        self._patterns = [
            re.compile(rf"(?<!\w){re.escape(k)}(?!\w)", re.IGNORECASE) for k, _ in keys
        ]
        self.people = list(people)
        self.by_slug = {person.slug: person for person in self.people}

    def find(self, text: str) -> Person | None:
        for (_, person), pattern in zip(self._keys, self._patterns, strict=True):
            if pattern.search(text):
                return person
        return None

    def by_name(self, name: str) -> Person | None:
        """The person a filter names (name, alias or slug), case-insensitive."""
        wanted = name.strip().lower()
        for key, person in self._keys:
            if key == wanted or person.slug == slugify(name):
                return person
        return None


def profile_text(person: Person) -> str:
    """A readable profile, as content of the injected result."""
    lines = [f"{person.name} — {person.relationship}".rstrip(" —")]
    if person.aliases:
        lines.append("Also: " + ", ".join(person.aliases))
    if person.context:
        lines.append(person.context)
    lines += [f"• {n}" for n in person.notes]
    if person.interests:
        lines.append("Interests: " + ", ".join(person.interests))
    lines += [f"{d}: {e}" for d, e in person.milestones]
    return "\n".join(lines)

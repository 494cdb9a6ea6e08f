"""One resolved group of sightings as a `Person`: the names, identifiers, sources, contact
dates and latest conversations its card shows, with the people file's fields kept as written."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from pathlib import PurePath, PureWindowsPath

from engine.people.normalise import is_full_name, name_key
from engine.people.resolve import Sighting
from engine.records import Conversation, Person
from engine.sources import NOT_CONVERSATIONS as NOT_CONVERSATIONS

LATEST_CONVERSATIONS = 5
_DATE_STEM = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
# Stems that say nothing of the conversation: the export's own file names.
_GENERIC_STEMS = frozenset({"result", "messages", "message_1", "_chat", "chat", "index"})
_ARCHIVE_FOLDER = re.compile(r"\.zip!\Z", re.IGNORECASE)  # a member's: `<archive>!/<member>`


def person_of(
    group: Sequence[Sighting], curated: Sequence[Person], shared: AbstractSet[str] = frozenset()
) -> Person:
    """The person a group of sightings is (the slug is set later, over the whole directory);
    the identifiers others carry too (`shared`, a group's address) come after their own."""
    data = [s for s in group if s.curated < 0]
    entries = [curated[s.curated] for s in group if s.curated >= 0]
    name, aliases = _names(data, entries)
    ranked = _ranked((i, max(s.count, 1)) for s in data for i in (*s.ids, *s.held))
    kept = {i for s in group if s.curated >= 0 for i in s.ids}  # the people file's
    loose = {*shared, *(i for s in data for i in s.held)} - kept
    ids = [i for i in ranked if i not in loose] + [i for i in ranked if i in loose]
    ids += _ranked((i, 1) for s in group if s.curated >= 0 for i in s.ids)
    person = Person(
        name=name,
        slug="",
        aliases=aliases,
        emails=_of_kind(ids, "email:"),
        phones=_of_kind(ids, "phone:"),
        handles=_of_kind(ids, "handle:"),
        sources=_sources(data),
        messages=sum(s.count for s in data),
        first=min((d for s in data for d in (s.first, s.last) if d), default=None),
        last=max((d for s in data for d in (s.last, s.first) if d), default=None),
        conversations=latest_conversations(data),
    )
    if not entries:
        return person
    entry = entries[0]
    return replace(
        person,
        relationship=entry.relationship,
        context=entry.context,
        notes=entry.notes,
        interests=entry.interests,
        milestones=entry.milestones,
        curated=True,
    )


def _names(data: Sequence[Sighting], entries: Sequence[Person]) -> tuple[str, tuple[str, ...]]:
    """The name (the people file's, else the most used full name, else the most used name,
    else an identifier) and every other name seen, one spelling each."""
    uses: Counter[str] = Counter()
    spelling: dict[str, Counter[str]] = {}
    for s in data:
        for written in s.names:
            key = name_key(written)
            if key:
                uses[key] += max(s.count, 1)
                spelling.setdefault(key, Counter())[written.strip()] += max(s.count, 1)
    best = {key: _most_used(c) for key, c in spelling.items()}
    curated_names = [n for e in entries for n in e.names]
    full = [k for k in uses if is_full_name(best[k])]
    if curated_names:
        name = curated_names[0]
    elif uses:
        name = best[min(full or uses, key=lambda k: (-uses[k], k))]
    else:
        name = next((i.split(":", 1)[1] for s in data for i in s.ids), "unknown")
    others = [*curated_names[1:], *(best[k] for k in sorted(uses, key=lambda k: (-uses[k], k)))]
    return name, _distinct(others, exclude=name_key(name))


def _most_used(spellings: Counter[str]) -> str:
    return min(spellings.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _distinct(names: Iterable[str], exclude: str) -> tuple[str, ...]:
    seen = {exclude}
    out = []
    for name in names:
        key = name_key(name)
        if key and key not in seen:
            seen.add(key)
            out.append(name)
    return tuple(out)


def _ranked(weighted: Iterable[tuple[str, int]]) -> list[str]:
    """The items, most weight first."""
    counts: Counter[str] = Counter()
    for item, weight in weighted:
        counts[item] += weight
    return sorted(counts, key=lambda k: (-counts[k], k))


def _of_kind(ids: Sequence[str], prefix: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i[len(prefix) :] for i in ids if i.startswith(prefix)))


def _sources(data: Sequence[Sighting]) -> tuple[tuple[str, int], ...]:
    """(source type, files naming them), most files first."""
    files: dict[str, set[str]] = {}
    for s in data:
        files.setdefault(s.source_type, set()).add(s.source_file)
    return tuple(sorted(((t, len(f)) for t, f in files.items()), key=lambda tc: (-tc[1], tc[0])))


def latest_conversations(data: Sequence[Sighting]) -> tuple[Conversation, ...]:
    """The files they took part in (an address book aside), by their last message there,
    newest first (undated last); at most LATEST_CONVERSATIONS."""
    last: dict[str, tuple[str, str]] = {}
    # An address book lists people; it is no conversation with them (`SourceType.conversation`).
    for s in (s for s in data if s.source_type not in NOT_CONVERSATIONS):
        when = max((d for d in (s.last, s.first) if d), default="")
        seen = last.get(s.source_file)
        if seen is None or when > seen[1]:
            last[s.source_file] = (s.source_type, when)
    ranked = sorted(sorted(last.items()), key=lambda kv: kv[1][1], reverse=True)
    return tuple(
        Conversation(conversation_title(f), f, t, when or None)
        for f, (t, when) in ranked[:LATEST_CONVERSATIONS]
    )


def conversation_title(source_file: str) -> str:
    """A readable title for a file: its stem; for a day file of a chat export
    (`general/2024-05-01.json`) or an export's generic name (`result.json`), its folder; an
    archive's without `.zip!` (`Chat - Crew.zip!/_chat.txt` → `Chat - Crew`)."""
    path: PurePath = PureWindowsPath(source_file) if "\\" in source_file else PurePath(source_file)
    stem, folder = path.stem, _ARCHIVE_FOLDER.sub("", path.parent.name)
    if _DATE_STEM.match(stem) and folder:
        return f"{folder} {stem}"
    if stem.lower() in _GENERIC_STEMS and folder:
        return folder
    return stem or source_file

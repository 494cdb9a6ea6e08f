"""The people directory: who is who, resolved from every file's mentions and the people file.

`build_directory` runs at the end of an indexing run over all the mentions the index keeps
(engine/index/people.py stores the result); it is pure: mentions and curated people in,
people out. Normalising is engine/people/normalise.py, the join rules
engine/people/resolve.py, what a card holds engine/people/profile.py.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from engine.people.cards import has_card
from engine.people.normalise import (
    dominant_country_code,
    name_key,
    name_tokens,
    nickname_split,
    normalise_email,
    normalise_handle,
    normalise_phone,
    phone_digits,
    slugify,
    via_sender,
)
from engine.people.profile import NOT_CONVERSATIONS, person_of
from engine.people.resolve import Sighting, resolve
from engine.people.shared import shared_identifiers
from engine.records import OWNER_INFERRED, OWNER_ME, OWNER_SETTING, Mention, Person
from engine.settings import Settings

# A mention's names, identifiers, the people-file entries splitting it off, its name keys,
# the identifiers it holds without joining.
Shape = tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], tuple[str, ...], tuple[str, ...]]
SEEN_WITH = 5  # people a card lists as seen with most
CROWD = 50  # a file naming more people than this (a big channel) says little of who is close
OWNER_MIN_FILES = 3  # fewer conversations than this tell no owner apart


def build_directory(
    mentions: Sequence[tuple[str, str, Mention]],
    curated: Sequence[Person],
    settings: Settings,
    me: str = "",
) -> list[Person]:
    """One `Person` per resolved identity, hidden ones left out: the people file's people
    first (in its order), then the others by messages. `mentions` are `(source_file,
    source_type, mention)` as the store keeps them; `me`, the people file's (`load_me`),
    names the archive's owner, else the `people.me` setting does, else they are inferred."""
    code = "".join(c for c in settings.people.country_code if c.isdigit())
    code = code or dominant_country_code(_phones(mentions, curated))
    sightings = _sightings(mentions, curated, code)
    shared = shared_identifiers(sightings)
    groups = [g for g in resolve(sightings, shared) if not _hidden(g, sightings, curated)]
    people = [person_of([sightings[i] for i in g], curated, shared) for g in groups]
    people = _with_slugs(people)
    named, named_by = _named_owner_of(people, (me, settings.people.me), code)
    people = _with_seen_with(people, [[sightings[i] for i in g] for g in groups], named, named_by)
    return sorted(_with_first_names(people, settings), key=_directory_order)


# -- mentions as sightings ------------------------------------------------------------------


def _phones(mentions: Sequence[tuple[str, str, Mention]], curated: Sequence[Person]) -> list[str]:
    written = [p for _, _, m in mentions for p in (*m.phones, m.name)]
    return written + [p for c in curated for p in c.phones]


def _identifiers(
    emails: Iterable[str], phones: Iterable[str], handles: Iterable[str], code: str
) -> list[str]:
    ids = [f"email:{e}" for e in map(normalise_email, emails) if e]
    ids += [f"phone:{p}" for p in (normalise_phone(x, code) for x in phones) if p]
    ids += [f"handle:{h}" for h in map(normalise_handle, handles) if h]
    return list(dict.fromkeys(ids))


def _split_names(names: Iterable[str], code: str) -> tuple[list[str], list[str]]:
    """A mention's names, and the identifiers among them (a chat that names someone by
    their number or address): (names, identifier strings as written)."""
    kept, found = [], []
    for name in (part.strip() for n in names for part in nickname_split(n)):
        if not name:
            continue
        if normalise_email(name) or _is_phone(name):
            found.append(name)
        else:
            kept.append(name)
    return kept, found


def _is_phone(text: str) -> bool:
    return bool(phone_digits(text)) and not any(c.isalpha() for c in text)


def _mention_ids(m: Mention, extra: Iterable[str], code: str) -> list[str]:
    extra = list(extra)
    emails = [*m.emails, *(x for x in extra if normalise_email(x))]
    phones = [*m.phones, *(x for x in extra if not normalise_email(x))]
    return _identifiers(emails, phones, m.handles, code)


def _sightings(
    mentions: Sequence[tuple[str, str, Mention]], curated: Sequence[Person], code: str
) -> list[Sighting]:
    splits = _splits(curated, code)
    out = [_seed(i, person, code) for i, person in enumerate(curated)]
    # The same person is named the same way in many files: each way is normalised once.
    shapes: dict[tuple[object, ...], Shape] = {}
    for source_file, source_type, m in mentions:
        shape = (m.name, m.aliases, m.emails, m.phones, m.handles)
        if shape not in shapes:
            shapes[shape] = _normalised(m, splits, code)
        names, ids, split_of, keys, held = shapes[shape]
        out.append(
            Sighting(source_file, source_type, names, ids, m.org, m.role, max(m.count, 0),
                     m.first, m.last, -1, split_of, keys, held)
        )  # fmt: skip
    return out


def _normalised(m: Mention, splits: dict[str, set[int]], code: str) -> Shape:
    """A mention's names, identifiers, the people-file entries whose `not` names it, its
    names as compared, and the identifiers it holds without joining: a sender "via" a
    group (Google Groups' "'Ann Lee' via Oslo Runners") is Ann Lee at the group's address."""
    sender = via_sender(m.name)
    names, found = _split_names((sender or m.name, *m.aliases), code)
    ids = _mention_ids(replace(m, emails=()) if sender else m, found, code)
    held = _identifiers(m.emails, (), (), code) if sender else []
    held = [i for i in held if i not in ids]
    split_of = sorted({c for k in (*ids, *map(name_key, names)) for c in splits.get(k, ())})
    keys = tuple(k for k in map(name_key, names) if k)
    return tuple(names), tuple(ids), tuple(split_of), keys, tuple(held)


def _seed(index: int, person: Person, code: str) -> Sighting:
    ids = _identifiers(person.emails, person.phones, person.handles, code)
    names = (person.name, *person.aliases)
    return Sighting("", "", names, tuple(ids), role="curated", count=0, curated=index)


def _splits(curated: Sequence[Person], code: str) -> dict[str, set[int]]:
    """What each people-file entry's `not` lists, as identifiers and name keys."""
    splits: dict[str, set[int]] = defaultdict(set)
    for index, person in enumerate(curated):
        for item in person.split:
            names, found = _split_names([item], code)
            if ":" in item and not found:  # a handle, "<service>:<id>"
                names, found = [], [item]
            for key in _mention_ids(Mention(handles=tuple(found)), found, code) + [
                name_key(n) for n in names
            ]:
                splits[key].add(index)
    return splits


def _directory_order(person: Person) -> tuple[bool, int, str]:
    """The people file's people first (in its order: sorted() keeps it), then the others by
    messages, then name."""
    if person.curated:
        return (False, 0, "")
    return (True, -person.messages, name_key(person.name))


def _hidden(group: list[int], sightings: Sequence[Sighting], curated: Sequence[Person]) -> bool:
    return any(curated[sightings[i].curated].hidden for i in group if sightings[i].curated >= 0)


def _with_first_names(people: list[Person], settings: Settings) -> list[Person]:
    """A person of the data with a card is also called by the first word of their name
    when nobody else in the directory has it as a first word or a name ("Amara" is Amara
    Diallo). The people file's people are called what the file says."""
    firsts: Counter[str] = Counter()
    for person in people:
        firsts.update({t[0] for t in map(name_tokens, person.names) if t})
    out = []
    for person in people:
        first = _first_name(person.name)
        taken = {name_key(n) for n in person.names}
        unique = first and firsts[name_key(first)] == 1 and name_key(first) not in taken
        if unique and not person.curated and has_card(person, settings):
            person = replace(person, aliases=(*person.aliases, first))
        out.append(person)
    return out


def _first_name(name: str) -> str:
    """The first word of a full name when it reads as a given name ("Amara"; not "Dr.")."""
    words = name.split()
    first = words[0] if len(words) >= 2 else ""
    return first if len(first) >= 2 and first.isalpha() and first[0].isupper() else ""


# -- slugs and the people seen together -----------------------------------------------------


def _with_slugs(people: list[Person]) -> list[Person]:
    """Stable slugs: the people file's first (as they always were), then the others in
    order of their smallest identifier, so new data does not rename anyone; a repeated
    slug gets -2, -3, …"""
    taken: set[str] = set()
    order = sorted(range(len(people)), key=lambda i: _slug_order(people[i]))
    slugs: dict[int, str] = {}
    for i in order:
        base = slugify(people[i].name) or "person"
        slug, n = base, 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add(slug)
        slugs[i] = slug
    return [replace(p, slug=slugs[i]) for i, p in enumerate(people)]


def _slug_order(person: Person) -> tuple[int, str, str]:
    ids = sorted((*person.emails, *person.phones, *person.handles)) or [""]
    return (0 if person.curated else 1, ids[0], name_key(person.name))


def _owner(in_file: dict[str, set[int]]) -> int | None:
    """The archive's owner, inferred: the one person in at least half of the conversations
    (and in `OWNER_MIN_FILES` at least), more of them than anyone else; None when no one is."""
    counts = Counter(i for present in in_file.values() for i in present)
    ranked = counts.most_common(2)
    if not ranked or ranked[0][1] < max(OWNER_MIN_FILES, len(in_file) / 2):
        return None
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        return None  # two as present as each other: neither is told apart as the owner
    return ranked[0][0]


def _named_owner_of(
    people: Sequence[Person], mes: tuple[str, str], code: str
) -> tuple[int | None, str]:
    """The owner the people file's `me` names (OWNER_ME), else the one the `people.me`
    setting names (OWNER_SETTING); (None, "") when neither names anyone."""
    for me, named_by in zip(mes, (OWNER_ME, OWNER_SETTING), strict=True):
        named = _named_owner(people, me.strip(), code)
        if named is not None:
            return named, named_by
    return None, ""


def _named_owner(people: Sequence[Person], me: str, code: str) -> int | None:
    """The person `me` names (the people file's or the setting's): by slug, then by name, then by alias, then
    by an address, number or handle; among several, the first in the directory's order
    (the people file's people, then the most messages). None when `me` names no one."""
    if not me:
        return None
    key, ids = name_key(me), _me_identifiers(me, code)
    tests = (
        lambda p: p.slug == me.removeprefix("profile:"),
        lambda p: name_key(p.name) == key,
        lambda p: key in {name_key(a) for a in p.aliases},
        lambda p: bool(ids & {*p.emails, *p.phones, *p.handles}),
    )
    for matches in tests:
        found = [i for i, p in enumerate(people) if matches(p)]
        if found:
            return min(found, key=lambda i: _directory_order(people[i]))
    return None


def _me_identifiers(me: str, code: str) -> set[str]:
    """`me` as a person holds an identifier: normalised as an address, number or handle."""
    found = {normalise_email(me), normalise_handle(me) if ":" in me else ""}
    if _is_phone(me):
        found.add(normalise_phone(me, code))
    return {i for i in found if i}


def _with_seen_with(
    people: list[Person], groups: list[list[Sighting]], named: int | None, named_by: str
) -> list[Person]:
    """Whom each person shares the most conversations with, the owner left out (the
    `named` one, or else the inferred one: `_owner`), and the owner marked (`named_by`
    for the named one)."""
    in_file: dict[str, set[int]] = defaultdict(set)
    for index, group in enumerate(groups):
        for s in group:
            if s.source_file and s.source_type not in NOT_CONVERSATIONS:
                in_file[s.source_file].add(index)
    together: dict[int, Counter[int]] = defaultdict(Counter)
    # In every chat of theirs: "seen with" no one because of it.
    owner = named if named is not None else _owner(in_file)
    for present in in_file.values():
        if len(present) <= CROWD:
            for a in present:
                together[a].update(present - {a, owner})
    out = []
    for index, person in enumerate(people):
        counts = together[index]
        ranked = heapq.nsmallest(SEEN_WITH, counts, key=lambda j: (-counts[j], people[j].name))
        seen = tuple((people[j].slug, people[j].name) for j in ranked)
        role = "" if index != owner else named_by if index == named else OWNER_INFERRED
        out.append(replace(person, seen_with=seen, owner=role))
    return out

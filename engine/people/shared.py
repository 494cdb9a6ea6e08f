"""Identifiers several people carry: a mailing list, "X via Group", a family phone, a
support inbox signed by different agents. Such an identifier joins none of its carriers
(docs/people.md, "How mentions become one person"); it stays on each of them, listed last.

Two full names are one person's when each word of the shorter matches its own word of the
longer (in any order: "Okafor, Lena" is Lena Okafor), equal or one the start of the other
("L. Okafor", "Ben Okafor" for Benjamin), or named together by one mention (a contact's
nickname "Bob" beside "Robert Smith" makes "Bob Smith" his). "Anna Berg" and "Per Berg"
are not; one word alone ("Lena") never conflicts with anyone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Protocol

from engine.people.normalise import name_key
from engine.records import Person

Words = tuple[str, ...]
MAX_NAMES = 64  # more full names than this on one identifier: no one person's, unchecked


class Carrier(Protocol):
    """What a sighting tells of who carries its identifiers."""

    @property
    def ids(self) -> tuple[str, ...]: ...
    @property
    def held(self) -> tuple[str, ...]: ...
    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def curated(self) -> int: ...


def shared_identifiers(sightings: Sequence[Carrier]) -> frozenset[str]:
    """The identifiers carried by names of more than one person."""
    carriers: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for s in sightings:
        if s.curated < 0 and s.keys:
            for ident in (*s.ids, *s.held):
                carriers[ident].add(s.keys)
    return frozenset(
        ident for ident, named in carriers.items() if len(named) > 1 and names_conflict(named)
    )


def names_conflict(named: Iterable[tuple[str, ...]]) -> bool:
    """Whether the name keys of these mentions (each mention's names together) hold two
    full names that cannot be one person's."""
    together = [[tuple(k.split(" ")) for k in keys] for keys in named]
    fulls = sorted({words for names in together for words in names if len(words) >= 2})
    if len(fulls) < 2:
        return False
    if len(fulls) > MAX_NAMES:
        return True
    same_words = _same_words(together)
    met = {(a, b) for names in together for a in names for b in names}
    return any(
        (a, b) not in met and not names_agree(a, b, same_words)
        for i, a in enumerate(fulls)
        for b in fulls[i + 1 :]
    )


def _same_words(together: Iterable[list[Words]]) -> set[tuple[str, str]]:
    """Words one mention gives as one another: its one-word names and the first word of
    each of its full names (a nickname beside the full name)."""
    pairs = set()
    for names in together:
        singles = [w[0] for w in names if len(w) == 1]
        for full in (w for w in names if len(w) >= 2):
            for single in singles:
                pairs |= {(single, full[0]), (full[0], single)}
    return pairs


def names_agree(a: Words, b: Words, same_words: AbstractSet[tuple[str, str]] = frozenset()) -> bool:
    """Whether two names can be one person's: each word of the shorter matched by its own
    word of the longer, in any order (equal first, then a start or a known nickname)."""
    short, long = sorted((a, b), key=len)
    rest = list(long)
    pending = []
    for word in short:
        if word in rest:
            rest.remove(word)
        else:
            pending.append(word)
    for word in pending:
        match = next((w for w in rest if _words_agree(word, w, same_words)), None)
        if match is None:
            return False
        rest.remove(match)
    return True


def _words_agree(a: str, b: str, same_words: AbstractSet[tuple[str, str]]) -> bool:
    return a.startswith(b) or b.startswith(a) or (a, b) in same_words


def identifiers_on_several(people: Sequence[Person]) -> list[tuple[str, tuple[str, ...]]]:
    """(identifier, names) for every email, phone or handle more than one person of the
    directory holds: what `memex people --all` says was not used to join them."""
    holders: dict[str, list[str]] = defaultdict(list)
    for person in people:
        for ident in (*person.emails, *person.phones, *person.handles):
            holders[ident].append(person.name)
    out = []
    for ident, names in sorted(holders.items()):
        spelling: dict[str, str] = {}
        for name in names:
            spelling.setdefault(name_key(name), name)
        if len(spelling) > 1:
            out.append((ident, tuple(spelling.values())))
    return out

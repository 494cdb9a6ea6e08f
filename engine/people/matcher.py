"""Finding the known person a text names: whole words, the longest name first, case and
accents aside, in time that does not grow with the number of people.

The text is split into folded words (and punctuation marks) once; at each word, the names
of one word are one dict lookup and the longer names are looked up by their first two
words, so 10,000 people (a thousand of them called John) cost a few lookups per word of
the query, not 30,000 regular expressions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.people.normalise import name_key, name_tokens, slugify, text_tokens
from engine.records import Person

# (the name's words, -its length, its order): the smaller, the better a match
Entry = tuple[tuple[str, ...], int, int, Person]


class PeopleMatcher:
    """Finds the known person a text names: longest name or alias first, whole words only."""

    def __init__(self, people: Sequence[Person]) -> None:
        self.people = list(people)
        self.by_slug = {person.slug: person for person in self.people}
        self._by_key: dict[str, Person] = {}
        self._single: dict[str, Entry] = {}
        self._longer: dict[tuple[str, str], list[Entry]] = {}
        order = 0
        for person in self.people:
            for name in person.names:
                tokens = text_tokens(name)
                if tokens:
                    self._by_key.setdefault(name_key(name), person)
                    self._add((tokens, -len(name.strip()), order, person))
                    order += 1
        for entries in self._longer.values():
            entries.sort(key=lambda e: (e[1], e[2]))
        self._words = _by_rarest_word(self.people)

    def _add(self, entry: Entry) -> None:
        tokens = entry[0]
        if len(tokens) == 1:
            kept = self._single.get(tokens[0])
            if kept is None or entry[1:3] < kept[1:3]:
                self._single[tokens[0]] = entry
        else:
            self._longer.setdefault((tokens[0], tokens[1]), []).append(entry)

    def find(self, text: str) -> Person | None:
        """The person whose longest name or alias the text holds as whole words (of two
        people's names of one length, the one listed first); None when it names nobody."""
        words = text_tokens(text)
        best: tuple[int, int] = (0, 0)
        found: Person | None = None
        for start, word in enumerate(words):
            pair = (word, words[start + 1]) if start + 1 < len(words) else None
            for tokens, length, order, person in self._longer.get(pair, ()) if pair else ():
                if (length, order) >= best:
                    break  # the rest of this list is no better than what was found
                if words[start : start + len(tokens)] == tokens:
                    best, found = (length, order), person
                    break
            single = self._single.get(word)
            if single is not None and single[1:3] < best:
                best, found = single[1:3], single[3]
        return found

    def named_in(self, text: str) -> list[Person]:
        """The people with a name or alias all of whose words the text holds, in any order
        (case and accents aside), in the order of `people`: the few worth a closer look
        (engine/search/rank/entity.py) instead of everyone."""
        held = set(name_tokens(text))
        places = {
            place for word in held for place, words in self._words.get(word, ()) if words <= held
        }
        return [self.people[place] for place in sorted(places)]

    def by_name(self, name: str) -> Person | None:
        """The person a filter names (name, alias or slug), case and accents aside."""
        person = self._by_key.get(name_key(name))
        if person is not None:
            return person
        slug = slugify(name)
        return self.by_slug.get(slug) if slug else None


def _by_rarest_word(people: Sequence[Person]) -> dict[str, list[tuple[int, frozenset[str]]]]:
    """Each name under its rarest word: (person's place, all the words of the name). A
    text holding all of a name's words holds its rarest, and that word's list is short
    even when a thousand people share a first name."""
    names = [(place, name_tokens(n)) for place, p in enumerate(people) for n in p.names]
    counts = Counter(w for _, words in names for w in set(words))
    index: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for place, words in names:
        if words:
            rarest = min(words, key=lambda w: (counts[w], w))
            index.setdefault(rarest, []).append((place, frozenset(words)))
    return index

"""The PeopleMatcher (engine/people/matcher.py): the same answers as one regular expression
per name, longest first, over names and texts made to trip it, and over 10,000 people."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from engine.people import PeopleMatcher
from engine.records import Person
from engine.search.query.fts import STOP_WORDS
from engine.search.rank.entity import name_shaped, name_words


class RegexMatcher:
    """The reference: one whole-word, case-insensitive pattern per name, longest first."""

    def __init__(self, people: Sequence[Person]) -> None:
        keys = [(n.strip().lower(), p) for p in people for n in p.names if n.strip()]
        keys.sort(key=lambda kp: len(kp[0]), reverse=True)
        self.patterns = [
            (re.compile(rf"(?<!\w){re.escape(k)}(?!\w)", re.IGNORECASE), p) for k, p in keys
        ]

    def find(self, text: str) -> Person | None:
        return next((p for pattern, p in self.patterns if pattern.search(text)), None)


FIRST = ["Ann", "Priya", "Raj", "Mei", "Jonas", "Erik", "Ingrid", "Tomas", "Lee", "Kari"]
LAST = ["Lee", "Raman", "Patel", "Chen", "Berg", "Haugen", "Solberg", "Ruiz", "Nilsen", "Moe"]
WORDS = ["what", "did", "say", "about", "the", "ferry", "annual", "review", "with", "and"]


def people_of(rng: random.Random, n: int) -> list[Person]:
    people = []
    for i in range(n):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        aliases = (first,) if rng.random() < 0.3 else ()
        people.append(Person(f"{first} {last}", f"p{i}", aliases=aliases))
    return people


def texts_of(rng: random.Random, n: int) -> list[str]:
    pool = FIRST + LAST + WORDS + ["ann-lee", "Priya's", "RAJ", "leeward", "x", "Lee."]
    return [" ".join(rng.choice(pool) for _ in range(rng.randint(1, 9))) for _ in range(n)]


def test_the_existing_cases() -> None:
    ann = Person("Ann", "ann")
    ann_lee = Person("Ann Lee", "ann-lee", aliases=("Annie",))
    matcher = PeopleMatcher([ann, ann_lee])
    assert matcher.find("lunch with ann lee tomorrow") == ann_lee
    assert matcher.find("what did ANN say") == ann
    assert matcher.find("annual review") is None
    assert matcher.find("call Annie") == ann_lee
    assert matcher.by_name("annie") == ann_lee
    assert matcher.by_name("ANN-LEE") == ann_lee  # the slug
    assert matcher.by_name("nobody") is None
    assert matcher.people == [ann, ann_lee] and matcher.by_slug["ann"] == ann


def test_accents_case_and_punctuation() -> None:
    tomas = Person("Tomás Ruiz", "tomas-ruiz", aliases=("Tomás",))
    nilsen = Person("Dr. Kari Nilsen", "dr-kari-nilsen", aliases=("Dr. Nilsen",))
    matcher = PeopleMatcher([tomas, nilsen])
    assert matcher.find("what did tomas say") == tomas
    assert matcher.find("TOMÁS RUIZ's bike") == tomas
    assert matcher.find("appointment with Dr. Nilsen on Monday") == nilsen
    assert matcher.find("Nilsen") is None
    assert matcher.by_name("tomas ruiz") == tomas


def test_the_same_answers_as_one_pattern_per_name() -> None:
    rng = random.Random(7)
    for _ in range(20):
        people = people_of(rng, rng.randint(1, 30))
        fast, reference = PeopleMatcher(people), RegexMatcher(people)
        for text in texts_of(rng, 200):
            assert fast.find(text) == reference.find(text), text


def test_ten_thousand_people() -> None:
    rng = random.Random(11)
    people = [
        Person(f"Person{i} Surname{i % 997}", f"person{i}", aliases=(f"Nick{i}",))
        for i in range(10_000)
    ]
    matcher = PeopleMatcher(people)
    for _ in range(300):
        i = rng.randrange(10_000)
        assert matcher.find(f"what did person{i} surname{i % 997} say") == people[i]
        assert matcher.find(f"ask NICK{i} about it") == people[i]
        assert matcher.by_name(f"Nick{i}") == people[i]
    assert matcher.find("what did person surname say") is None
    assert matcher.find("Surname5 alone") is None


def name_shaped_by_scan(query: str, matcher: PeopleMatcher) -> Person | None:
    """entity.name_shaped as it reads every person: the reference for `named_in`."""
    asked = name_words(query)
    for person in matcher.people if asked else ():
        for name in person.names:
            wanted = name_words(name)
            kept = [w for w in asked.split() if w in wanted.split() or w not in STOP_WORDS]
            if wanted and " ".join(kept) == wanted:
                return person
    return None


def test_named_in_keeps_name_shaped_as_a_full_scan_would() -> None:
    rng = random.Random(5)
    people = people_of(rng, 2000) + [
        Person("Dr. Kari Nilsen", "nilsen", aliases=("Dr. Nilsen",)),
        Person("Jean-Luc Picard", "picard"),
        Person("José Núñez", "nunez"),
    ]
    matcher = PeopleMatcher(people)
    queries = texts_of(rng, 400) + [p.name for p in rng.sample(people, 100)]
    queries += ["about Dr. Nilsen", "Jean-Luc Picard?", "José Núñez's", "jose nunez", "the"]
    for query in queries:
        assert name_shaped(query, matcher) == name_shaped_by_scan(query, matcher), query
    assert name_shaped("about Dr. Nilsen", matcher) == people[-3]

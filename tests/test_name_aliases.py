"""Name-alias expansion: a query naming a known person also matches that person's other
names on the keyword side."""

from __future__ import annotations

import json
from collections.abc import Callable

from engine.core import Engine
from engine.people.matcher import PeopleMatcher
from engine.records import Person
from engine.search.query.aliases import alias_terms, expanded_terms
from engine.settings import Settings

RAJESH = Person(name="Rajesh Kumar", slug="rajesh-kumar", aliases=("Raj", "R. K."))


def test_the_aliases_of_the_person_named_join_the_terms_as_an_or_group() -> None:
    matcher = PeopleMatcher([RAJESH])
    assert alias_terms("what did Rajesh Kumar fix", matcher) == ["rajesh kumar", "raj", "r k"]
    terms = ["rajesh", "kumar", "fix"]
    assert expanded_terms(terms, "what did Rajesh Kumar fix", matcher) == [
        *terms,
        "rajesh kumar",
        "raj",
        "r k",
    ]


def test_a_query_naming_nobody_keeps_its_terms() -> None:
    matcher = PeopleMatcher([RAJESH])
    assert alias_terms("the boiler", matcher) == []
    assert expanded_terms(["boiler"], "the boiler", matcher) == ["boiler"]


def boiler_layer(settings: Settings) -> None:
    root = settings.roots[0]
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "boiler.md").write_text("# Tuesday\nRaj fixed the old boiler today.\n")
    (root / "profile").mkdir()
    people = {"people": [{"name": "Rajesh Kumar", "aliases": ["Raj"], "relationship": "friend"}]}
    (root / "profile" / "relationships.json").write_text(json.dumps(people))


def boiler_hits(settings: Settings) -> list[str]:
    boiler_layer(settings)
    with Engine(settings) as eng:
        eng.reindex()
        return [hit.source_file for hit in eng.search("Rajesh Kumar", mode="bm25").results]


def test_a_chunk_holding_only_the_alias_matches_with_name_aliases(
    settings_factory: Callable[..., Settings],
) -> None:
    on = settings_factory(embedder__name="hashing", search__name_aliases=True)
    assert any(path.endswith("boiler.md") for path in boiler_hits(on))


def test_without_name_aliases_the_alias_alone_does_not_match(
    settings_factory: Callable[..., Settings],
) -> None:
    off = settings_factory(embedder__name="hashing")
    assert not any(path.endswith("boiler.md") for path in boiler_hits(off))

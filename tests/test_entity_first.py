"""Entity-first (engine/search/rank/entity.py): a name-shaped query shows the person first."""

from __future__ import annotations

import io
import json

from engine.cli import run
from engine.people import PeopleMatcher
from engine.records import Person
from engine.search import Searcher
from engine.search.hits import ChunkRow, Hit
from engine.search.rank.entity import entity_first, mentioning, name_shaped
from engine.settings import Settings
from tests.conftest import cli_args

DANA = Person("Dana Okafor", "dana-okafor", aliases=("Dana",))
PRIYA = Person("Priya Raman", "priya-raman", aliases=("Priya",))
NILSEN = Person("Dr. Kari Nilsen", "dr-kari-nilsen", aliases=("Dr. Nilsen", "Kari Nilsen"))
MATCHER = PeopleMatcher([DANA, PRIYA, NILSEN])


def test_a_name_or_alias_alone_is_name_shaped() -> None:
    for query, person in [
        ("Priya", PRIYA),
        ("priya raman", PRIYA),
        ("Dana Okafor", DANA),
        ("  dana?", DANA),
        ("about Dana", DANA),  # stop words aside
        ("Dana's", DANA),
        ("Dr. Nilsen", NILSEN),
        ("Kari Nilsen", NILSEN),
    ]:
        assert name_shaped(query, MATCHER) == person, query


def test_a_longer_query_or_a_part_of_a_name_is_not() -> None:
    for query in ("what is Priya working on", "Okafor", "Priya Dana", "Pri", "", "the"):
        assert name_shaped(query, MATCHER) is None, query


def test_mentioning_matches_whole_names_in_title_or_text() -> None:
    texts = {
        1: ("#general", "Priya: the deploy is done"),
        2: ("1:1 Priya", "notes"),
        3: ("", "Priyanka said hello"),  # not a whole word
        4: ("", "Nobody at all"),
        5: ("", "Raman and PRIYA RAMAN"),
    }
    rows = [
        ChunkRow(s, f"id-{s}", "f", "chat", text, None, title, "", None)
        for s, (title, text) in texts.items()
    ]
    assert mentioning(PRIYA, rows) == {1, 2, 5}


def test_the_profile_goes_first_then_the_hits_naming_the_person() -> None:
    cands = [
        Hit.chunk(1, 0.5),
        Hit.chunk(2, 0.4),
        Hit.profile("priya-raman", 0.35),
        Hit.chunk(3, 0.3),
        Hit.chunk(4, 0.2),
    ]
    profile = cands[2]
    out = entity_first(cands, profile, mentioned={2, 4})
    assert [c.seq for c in out] == [None, 2, 4, 1, 3] and out[0].person == "priya-raman"
    assert out[0].score == 0.5 and out[0].notes["entity_first"] == "pinned"
    assert out[1].notes["names_person"] is True and "names_person" not in out[3].notes
    assert [c.score for c in out[1:]] == [0.4, 0.2, 0.5, 0.3]  # the others keep their scores


def top(settings: Settings, query: str, limit: int = 10, **kwargs: object) -> list:
    searcher = Searcher(settings)
    try:
        return searcher.search(query, limit, explain=True, **kwargs).results  # type: ignore[arg-type]
    finally:
        searcher.close()


def test_a_name_puts_the_profile_first_on_the_demo_index(demo_index: Settings) -> None:
    hits = top(demo_index, "Priya")
    assert hits[0].id == "profile:priya-raman" and hits[0].profile is not None
    assert hits[0].explain is not None and hits[0].explain["entity_first"] == "pinned"
    named = [("Priya" in h.content or "Priya" in h.title) for h in hits[1:]]
    assert named[0] and named == sorted(named, reverse=True)  # those naming her come first
    assert [h.id for h in top(demo_index, "Priya", limit=1)] == ["profile:priya-raman"]
    assert top(demo_index, "Dr. Nilsen", limit=3)[0].id == "profile:dr-kari-nilsen"
    assert top(demo_index, "jonte", limit=3)[0].id == "profile:jonas-berg"  # an alias


def test_a_longer_query_keeps_the_median_injection(demo_index: Settings) -> None:
    hits = top(demo_index, "what is Priya working on")
    ids = [h.id for h in hits]
    assert "profile:priya-raman" in ids and ids[0] != "profile:priya-raman"


def test_entity_first_off_or_a_type_filter_leaves_the_ranking_alone(demo_index: Settings) -> None:
    off = top(demo_index.with_values(search__entity_first=False), "Priya")
    assert off[0].id != "profile:priya-raman"
    filtered = top(demo_index, "Priya", source_types=["slack"])
    assert filtered and all(h.source_type == "slack" for h in filtered)


def test_the_cli_prints_the_profile_first(demo_index: Settings) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run([*cli_args(demo_index), "--search", "Priya", "--limit", "3"], out, err) == 0
    assert out.getvalue().splitlines()[0].startswith(" 1. [profile]")
    assert "Priya Raman" in out.getvalue().splitlines()[0]
    out = io.StringIO()
    argv = [*cli_args(demo_index), "--search", "Priya", "--limit", "1", "--json", "--explain"]
    assert run(argv, out, err) == 0
    results = json.loads(out.getvalue())["results"]
    assert [r["id"] for r in results] == ["profile:priya-raman"]
    assert results[0]["explain"]["entity_first"] == "pinned"

"""A one-shot search reads only the people its query can name (engine/store/directory.py,
`read_people_named`), and answers exactly as with the whole directory."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.people.cards import carded
from engine.people.curated import curated_signature
from engine.people.normalise import fold, text_tokens
from engine.records import Person
from engine.search import Searcher
from engine.search.query.inputs import safe_query
from engine.settings import Settings
from engine.store import db
from engine.store import people as people_store
from engine.store.directory import read_people, read_people_named

PLAIN_QUERIES = ("standup time", "Oslo", "board game night", "budget review", "?", "a")


def answer(settings: Settings, people: Sequence[Person], query: str) -> dict[str, Any]:
    searcher = Searcher(settings, vector_cache=False, keyword_index=False, people=people)
    try:
        response = searcher.search(query, explain=True)
    finally:
        searcher.close()
    payload = response.as_json()
    payload.pop("took_ms")
    payload["stages"] = [{**s, "ms": 0} for s in response.stages_json()]
    payload["explain"] = [r.explain for r in response.results]
    return payload


def queries_naming(people: Sequence[Person]) -> list[str]:
    """Each person's names as written, folded, first word alone, inside a sentence."""
    found: list[str] = []
    for person in people:
        for name in person.names:
            first = name.split()[0] if name.split() else name
            found += [name, fold(name), first, f"about {name}", f"{name}'s birthday"]
    return list(dict.fromkeys(found))


def test_a_search_answers_as_with_the_whole_directory(demo_index: Settings) -> None:
    everyone = carded(read_people(demo_index), demo_index)
    assert len(everyone) >= 5
    for query in [*queries_naming(everyone), *PLAIN_QUERIES]:
        named = carded(read_people_named(demo_index, safe_query(query)), demo_index)
        assert len(named) < len(everyone) or query in PLAIN_QUERIES
        whole = answer(demo_index, everyone, query)
        assert answer(demo_index, named, query) == whole, query


def test_only_the_named_people_are_read(demo_index: Settings) -> None:
    everyone = read_people(demo_index)
    named = read_people_named(demo_index, "what did Jonas say about the ferry")
    assert [p.name for p in named] == [p.name for p in everyone if "Jonas" in " ".join(p.names)]
    assert read_people_named(demo_index, "standup time") == []


@pytest.mark.parametrize("words", [None, text_tokens], ids=["records-scanned", "words-kept"])
def test_names_outside_ascii_are_found_folded(
    tmp_path: Path, settings_factory: Any, words: Any
) -> None:
    """Found alike through the names' words a run keeps (`people_words`) and, for a
    directory written without them, by reading every name."""
    settings = settings_factory()
    conn = db.connect(settings.db_path)
    db.migrate(conn)
    people = [
        Person(name="Jürgen Weiß", slug="jurgen-weiss", aliases=("Jü",)),
        Person(name="Ola Berg", slug="ola-berg", aliases=('Ola "OB" Berg',)),
        Person(name="Zoë", slug="zoe"),
        Person(name="Kari Nordmann", slug="ola-berg"),  # a slug seen before: not stored
    ]
    people_store.write_directory(conn, people, words)
    db.set_meta(conn, people_store.SIGNATURE_KEY, curated_signature(settings))  # as a run does
    kept = conn.execute("SELECT count(*) FROM people_words").fetchone()[0]
    assert (kept > 0) == (words is not None)
    conn.close()
    slugs = lambda text: [p.slug for p in read_people_named(settings, text)]  # noqa: E731
    assert slugs("jurgen") == ["jurgen-weiss"]
    assert slugs("JÜ") == ["jurgen-weiss"]
    assert slugs('"OB"') == ["ola-berg"]  # a mark of a name is a word of it too
    assert slugs("zoe and ola") == ["ola-berg", "zoe"]
    assert slugs("nobody here") == []
    assert slugs("kari nordmann") == []
    assert slugs("") == [] and slugs("   ") == []  # no word: no one, nothing read


def test_a_run_keeps_the_names_words_and_a_rewrite_without_them_drops_them(
    demo_index: Settings, tmp_path: Path
) -> None:
    conn = db.connect(demo_index.db_path, readonly=True, create=False)
    built = db.get_meta(conn, people_store.BUILT_KEY)
    assert built is not None and db.get_meta(conn, people_store.WORDS_KEY) == built
    everyone = people_store.read_directory(conn) or []
    conn.close()
    copy = db.connect(tmp_path / "copy.db")
    db.migrate(copy)
    people_store.write_directory(copy, everyone, text_tokens)
    assert copy.execute("SELECT count(*) FROM people_words").fetchone()[0] >= len(everyone)
    people_store.write_directory(copy, everyone[:1])  # written again without its words
    assert copy.execute("SELECT count(*) FROM people_words").fetchone()[0] == 0
    assert db.get_meta(copy, people_store.WORDS_KEY) is None
    copy.close()


@pytest.mark.parametrize("query", ["Jonas", "standup"])
def test_without_a_directory_the_people_file_answers(
    settings_factory: Any, query: str, tmp_path: Path
) -> None:
    settings = settings_factory()
    people_file = settings.roots[0] / settings.people_file
    people_file.parent.mkdir(parents=True)
    people_file.write_text(json.dumps({"people": [{"name": "Jonas Berg"}]}))
    found = [p.name for p in read_people_named(settings, query)]  # no index at all
    assert found == (["Jonas Berg"] if query == "Jonas" else [])

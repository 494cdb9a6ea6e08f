"""The person filter of the vector side through the FTS index, against the `instr` scan."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import numpy as np

from engine.embedders import create_embedder
from engine.index.runs import reindex
from engine.people import load_people
from engine.records import Person
from engine.search import Searcher
from engine.search.query.filters import Filters, chunk_filter_sql, people_match_expression
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunks


def person_seqs(settings: Settings, people: tuple[Person, ...], indexed: bool) -> set[int]:
    conn = db.connect(settings.db_path, create=False)
    try:
        where, params = chunk_filter_sql(Filters(people=people), people_index=indexed)
        return {r[0] for r in conn.execute(chunks.embedded_seqs_where_sql(where), params)}
    finally:
        conn.close()


def whole_word(name: str, text: str) -> bool:
    """`name` in `text` with no letter or digit on either side (a token boundary)."""
    pattern = r"(?<![^\W_])" + re.escape(name) + r"(?![^\W_])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def test_index_finds_the_same_chunks_but_substrings_inside_other_words(
    demo_index: Settings,
) -> None:
    conn = db.connect(demo_index.db_path, create=False)
    texts = dict(conn.execute("SELECT seq, content || char(10) || people FROM chunks"))
    conn.close()
    lost: dict[str, int] = {}
    for person in load_people(demo_index):
        before = person_seqs(demo_index, (person,), indexed=False)
        after = person_seqs(demo_index, (person,), indexed=True)
        assert after <= before, person.name  # nothing new on the demo index
        for seq in before - after:
            # Each chunk dropped named the person only inside a longer word.
            assert not any(whole_word(n, texts[seq]) for n in person.names), (person, seq)
        lost[person.name] = len(before - after)
    identical = [name for name, count in lost.items() if count == 0]
    assert len(identical) == 10 and "Priya Raman" in identical and "Jonas Berg" in identical
    # "Ama" inside "Raman", "Erik" inside "Eriksen" and "Romerike", "Mom" inside "moment",
    # "Fred" inside "Fredrik" (docs/benchmarks.md, "Vector side at scale").
    assert lost["Amara Diallo"] > 100 and lost["Erik Haugen"] > 50
    assert lost["Birgitta Lindqvist"] > 0 and lost["Fredrik Moe"] > 0


def test_one_shot_person_vector_search_matches_the_warm_path(demo_index: Settings) -> None:
    embedder = create_embedder(demo_index)
    plain = Searcher(demo_index, embedder=embedder, vector_cache=False)
    cached = Searcher(demo_index, embedder=embedder, vector_cache=True)
    for name in ("Sofie", "Amara Diallo", "Erik"):
        people = plain._people((name,))
        allowed = person_seqs(demo_index, people, indexed=True)
        filters = Filters(people=people)
        qvec = embedder.embed_query("what did we plan for the weekend")
        one_shot = plain.vector(qvec, 20, filters)
        warm = cached.vector(qvec, 20, filters)
        assert [s for s, _ in one_shot] == [s for s, _ in warm]
        assert np.allclose([c for _, c in one_shot], [c for _, c in warm], atol=1e-6)
        assert {s for s, _ in one_shot} <= allowed and len(one_shot) == min(20, len(allowed))
    plain.close(), cached.close()


def chat(lines: list[tuple[str, str]]) -> str:
    rows = [
        {
            "ts": f"{1_780_000_000 + i * 7 * 3600}.000100",
            "channel": "c",
            "user": f"U{u}",
            "user_name": u,
            "text": t,
        }
        for i, (u, t) in enumerate(lines)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_tokens_case_and_accents(settings_factory: Callable[..., Settings]) -> None:
    settings = settings_factory(embedder__name="hashing")
    folder = settings.roots[0] / "data" / "slack"
    folder.mkdir(parents=True)
    lines = [
        ("Ola", "JONAS will bring the tent"),  # 0: upper case: both match
        ("Ola", "Jonasson called about the car"),  # 1: inside a word: instr only
        ("Ola", "RENÉE is late again"),  # 2: non-ASCII case and accents folded: index only
        ("Ola", "meet at o'brien's pub"),  # 3: punctuation inside a name
        ("Jonas", "hello"),  # 4: the speaker
    ]
    (folder / "c.jsonl").write_text(chat(lines))
    reindex(settings=settings)
    conn = db.connect(settings.db_path, create=False)
    seq_of = {c.split(": ", 1)[1]: s for s, c in conn.execute("SELECT seq, content FROM chunks")}
    conn.close()
    assert len(seq_of) == len(lines), "one chunk a message (silences of 7 hours)"

    def found(name: str, indexed: bool) -> set[str]:
        seqs = person_seqs(settings, (Person(name, name.lower()),), indexed)
        return {text for text, seq in seq_of.items() if seq in seqs}

    assert found("Jonas", True) == {"JONAS will bring the tent", "hello"}
    assert found("Jonas", False) == found("Jonas", True) | {"Jonasson called about the car"}
    assert found("Renée", True) == found("Renee", True) == {"RENÉE is late again"}
    assert found("Renée", False) == found("Renee", False) == set()  # lower() folds ASCII only
    assert found("O'Brien", True) == found("O'Brien", False) == {"meet at o'brien's pub"}
    assert found("?!", True) == set()  # no letter: no phrase, nothing matches
    assert people_match_expression((Person('Say "Hi"', "x"),)) == 'content : ("Say ""Hi""")'

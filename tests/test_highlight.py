"""Terms marked in Python mark what FTS5's highlight() marks, row for row."""

from __future__ import annotations

import random
from pathlib import Path

import apsw

from engine.search.present.highlight import Highlighter, instances, merged
from engine.search.query import fts
from engine.store import db
from engine.store.sql import fts as fts_sql
from tests import conftest

START = "\x02"


def fts5_marked(conn: apsw.Connection, terms: list[str], seqs: list[int]) -> dict[int, str]:
    """FTS5's own highlight() of these rows (`fts_sql.highlight_sql`), keeping rows with a
    mark in content: the reference the Python marks must equal."""
    expression = fts.match_expression(terms)
    assert expression is not None
    rows = conn.execute(fts_sql.highlight_sql(len(seqs)), (expression, *seqs))
    return {seq: text for seq, text in rows if START in text}


def query_sets(texts: list[str], count: int) -> list[list[str]]:
    """Words as people type them, drawn from the texts: with punctuation inside (several
    tokens: a phrase), neighbours (adjacent marks), repeats, two-word phrases that
    overlap, accents and case, and a word no text holds."""
    rng = random.Random(5)
    words = [w for t in texts for w in t.split() if any(c.isalnum() for c in w)]
    sets = []
    for _ in range(count):
        picked = rng.sample(words, rng.randint(1, 5))
        text = rng.choice(texts).split()
        if len(text) > 3:
            at = rng.randrange(len(text) - 3)
            picked += [text[at], text[at + 1], " ".join(text[at : at + 2])]
            picked += [" ".join(text[at + 1 : at + 3]), text[at].upper()]
        sets.append(picked + rng.sample(["zzyzx", "Zürich", "it's", "o'clock"], 1))
    return sets


def test_the_marks_are_fts5s_for_every_query_and_row(demo_index: conftest.Settings) -> None:
    conn = db.connect(Path(demo_index.db_path), create=False)
    rows = dict(conn.execute("SELECT seq, content FROM chunks"))
    highlighter = Highlighter(conn)
    compared = marked_rows = 0
    for terms in query_sets(list(rows.values()), 150):
        expression = fts.match_expression(terms)
        assert expression is not None
        found = conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (expression,))
        seqs = [s for (s,) in found][:60]
        if not seqs:
            continue
        expected = fts5_marked(conn, terms, seqs)
        got = highlighter.marked({s: rows[s] for s in seqs}, highlighter.phrases(terms))
        assert got == expected, terms
        compared += len(seqs)
        marked_rows += len(expected)
    conn.close()
    assert compared > 1000 and marked_rows > 500  # the comparison was not vacuous


def test_overlapping_instances_merge_and_adjacent_ones_do_not() -> None:
    tokens = ["new", "york", "city", "new", "york", "new"]
    phrases = [("new", "york"), ("york", "city"), ("new",)]
    assert instances(tokens, phrases) == [(0, 0), (0, 1), (1, 2), (3, 3), (3, 4), (5, 5)]
    assert merged(instances(tokens, phrases)) == [(0, 2), (3, 4), (5, 5)]
    assert merged([(0, 0), (1, 1)]) == [(0, 0), (1, 1)]  # adjacent: two marks

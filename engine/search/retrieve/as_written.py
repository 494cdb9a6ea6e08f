"""In an index of several languages, the keyword hits that hold the query's words as written
come first.

A query word is searched by its stem in every language the index holds
(engine/search/query/forms.py), and stems of different languages meet: Spanish "invitado"
and English "invited" are both "invit", Norwegian "plante" and English "plants" both
"plant". BM25 cannot tell the message the user meant from the one that shares a stem by
chance. What can is the word as typed: "invitado" begins "invitados", not "invited";
"plante" begins "plantene", not "plants". So the keyword hits are ordered by the share of
the query's words each holds as the start of one of its own words (case folded, accents
kept; half a word when they differ in an ending of up to two letters, as "réserver" and
"réservé" do), BM25's order kept among equals: a search engine's "exact field" boost over the
stemmed field, done on the hits alone.

An index of English alone has no such collisions and keeps BM25's order (`written` is empty:
engine/search/query/forms.py `written_words`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence

from engine.language.codes import folded
from engine.search.hits import ChunkRow

_WORD = re.compile(r"\w+")
ENDING = 2  # letters of an inflection's ending a word as written may differ in
ENDING_FROM = 5  # ... when it is this long: "plan" is not "plante" less an ending


def reorder(seqs: Sequence[int], rows: Mapping[int, ChunkRow], written: Sequence[str]) -> list[int]:
    """`seqs` (BM25's order) by the share of `written` each holds as written, stable."""
    if not written or len(seqs) < 2:
        return list(seqs)
    shares = {seq: held_share(rows.get(seq), written) for seq in seqs}
    return sorted(seqs, key=lambda seq: -shares[seq])


def held_share(row: ChunkRow | None, written: Sequence[str]) -> float:
    """The share of the query's words that start a word of the chunk's title or text."""
    if row is None:
        return 0.0
    words = sorted(set(_WORD.findall(folded(f"{row.title}\n{row.content}"))))
    return sum(word_share(w, words) for w in written) / len(written)


def word_share(word: str, words: Sequence[str]) -> float:
    """1 when `word` begins one of `words` ("plante" in "plantene"), half when it does but for
    an ending of up to two letters ("réserver" in "réservé"; words of five letters or more),
    else 0 ("invitado" in "invited", "réserver" in "reserved")."""
    if begins_a_word(word, words):
        return 1.0
    if len(word) >= ENDING_FROM and begins_a_word(word[:-ENDING], words):
        return 0.5
    return 0.0


def begins_a_word(start: str, words: Sequence[str]) -> bool:
    """Whether a word of the sorted `words` begins with `start`: the first word not before
    it does, if any does."""
    at = bisect_left(words, start)
    return at < len(words) and words[at].startswith(start)

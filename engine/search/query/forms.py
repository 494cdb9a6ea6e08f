"""A query's keyword terms in every language the index holds, as Recoll stems a query.

A chunk's words are indexed in its own language's forms (engine/language/analyze.py), but a
query does not say its language, and a word is often a word in several ("gift", "hus"). So
each query term is written in each language the index's chunks are in (`meta.languages`,
engine/index/keyword_format.py): stemmed by that language's Snowball stemmer, a run of Han,
Kana or Hangul cut into its pairs (each pair one term, as a word is), a Nordic noun's other
stem beside its own ("nyckl" of "nycklarna" beside "nyckel", engine/language/syncope.py),
a listed noun's other stems ("kinder" of "kinderen" beside "kind", engine/language/irregular.py).
The forms of one word are OR-ed as terms of their own: a form the index does not hold is
dropped when another form of the word is there, since it matches nothing and would only
lower the share of the query a chunk holds (engine/search/retrieve/keyword_share.py); when
no form is there, the first stays, so a word absent from the index still counts as missing,
in every script.

An index of English only gets the query's terms as they were (English is stemmed by FTS5's
porter, over the text itself).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from engine.language import irregular, syncope
from engine.language.analyze import query_words
from engine.language.codes import ENGLISH, folded, has_cjk
from engine.search.query.fts import match_expression, query_terms
from engine.store import db
from engine.store.sql import fts as fts_sql
from engine.store.sql import meta as meta_sql
from engine.store.sql.schema import TOKENIZER

MAX_TERMS = 48  # terms after expansion, at most (a long pasted text stays cheap)
WRITTEN_WORDS = 2  # query words, at most, for the as-written order of the keyword hits


def keyword_terms(conn: apsw.Connection, query: str, drop_stop_words: bool = True) -> list[str]:
    """The query's terms in every language the index holds (`expand`)."""
    return expand(conn, query_terms(query, drop_stop_words), languages(conn))


def written_words(conn: apsw.Connection, query: str, drop_stop_words: bool = True) -> list[str]:
    """The query's words as typed, case folded, for the as-written order of the keyword hits
    (engine/search/retrieve/as_written.py); none in an index of English alone, and none for
    a run of Han, Kana or Hangul (its pairs are its words). A query of more than
    `WRITTEN_WORDS` words (stop words aside) gets none: its other words tell the messages
    apart, and BM25's weight for its rarer words decides (bench.languages measures both:
    the English queries of bench.personal keep their figures in its eleven-language index)."""
    if languages(conn) in ([], [ENGLISH]):
        return []
    terms = query_terms(query, drop_stop_words)
    words = [folded(t) for t in terms if " " not in t and not has_cjk(t) and len(t) > 1]
    return words if len(terms) <= WRITTEN_WORDS else []


def languages(conn: apsw.Connection) -> list[str]:
    """The languages the index's chunks are in, English first ([] before any is recorded)."""
    try:
        value = db.get_meta(conn, meta_sql.LANGUAGES_KEY) or ""
    except apsw.Error:
        return []
    found = [c for c in value.split(",") if c]
    return sorted(found, key=lambda c: c != ENGLISH)


def expand(conn: apsw.Connection, terms: Sequence[str], langs: Sequence[str]) -> list[str]:
    """Each term's forms in `langs`, deduplicated, the ones the index lacks dropped where
    the word has another."""
    out: list[str] = []
    for term in terms:
        for word in words_of(term, langs):
            out += held_forms(conn, word) if len(word) > 1 else word
    return list(dict.fromkeys(out))[:MAX_TERMS]


def words_of(term: str, langs: Sequence[str]) -> list[list[str]]:
    """The term's words, each as its forms in `langs`: one word, or (Han, Kana, Hangul) one
    per pair of characters of the term."""
    if not langs or (list(langs) == [ENGLISH] and not has_cjk(term)):
        return [[term]]
    if has_cjk(term):
        return [[w] for w in query_words(term, ENGLISH)]
    forms = []
    for lang in langs:
        stem = " ".join(query_words(term, lang)) or term
        forms += [stem, *syncope.variants(term, stem, lang), *irregular.variants(stem, lang)]
    if ENGLISH not in langs:
        forms.insert(0, term)  # as written: an index made before languages holds it so
    return [list(dict.fromkeys(forms))]


def held_forms(conn: apsw.Connection, forms: Sequence[str]) -> list[str]:
    """The forms the index holds (one query each, stopped at the first row), one per token
    FTS5 makes of them ("meetings" and "meeting" are both "meet"), or the first form when
    it holds none."""
    tokenize = conn.fts5_tokenizer(TOKENIZER[0], list(TOKENIZER[1]))
    held, seen = [], set()
    for form in forms:
        tokens = tuple(
            tokenize(
                form.encode("utf-8"),
                apsw.FTS5_TOKENIZE_QUERY,
                None,
                include_offsets=False,
                include_colocated=False,
            )
        )
        if tokens in seen:
            continue
        seen.add(tokens)
        expression = match_expression([form])
        try:
            found = conn.execute(fts_sql.capped_frequency_sql(), (expression, 1)).fetchone()[0]
        except apsw.Error:
            found = 0
        if found:
            held.append(form)
    return held or [forms[0]]

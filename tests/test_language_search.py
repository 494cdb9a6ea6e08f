"""Searching data written in many languages: inflections, compounds' parts, words inside runs
of Han, Kana and Hangul, the in-memory keyword index against FTS5, highlights, the floor, and
an index made before languages rebuilt on the next run without re-embedding."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.embedders import create_embedder
from engine.index import keyword_format
from engine.index.indexer import NullReporter
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.query import forms
from engine.search.query.filters import Filters
from engine.search.retrieve.keyword_index import KeywordIndex
from engine.settings import Settings
from engine.store import db
from engine.store.sql import schema
from tests.test_keyword_index import assert_same_ranking

FIXTURES = Path(__file__).resolve().parent / "language_layer"  # a data layer, not readers' fixtures

# (query, a file the top 3 must hold): inflected forms, words inside runs, one character.
FOUND = [
    ("billetter", "jobb.jsonl"),  # no: billettene
    ("ferje", "jobb.jsonl"),  # no: ferja
    ("biljett", "familjen.jsonl"),  # sv: biljetterna
    ("blomma", "familjen.jsonl"),  # sv: blommorna
    ("cykel", "familjen.jsonl"),  # sv: cykeln
    ("cyklarna", "familjen.jsonl"),  # sv: cykeln, the vowel "cykel" drops as it inflects
    ("mann", "jobb.jsonl"),  # no: mennene, a plural that changes the noun
    ("Rechnungen", "wg.jsonl"),  # de: Rechnung
    ("Fahrrad", "wg.jsonl"),  # de: Fahrräder
    ("réserver", "amis.jsonl"),  # fr: réservé
    ("comprar billete", "amigos.jsonl"),  # es: Compré los billetes
    ("билет", "druzya.jsonl"),  # ru: билеты
    ("北京", "tongshi.jsonl"),  # zh: inside 我们明天去北京开会
    ("预算", "tongshi.jsonl"),
    ("京都", "tomodachi.jsonl"),  # ja: 京都に
    ("切符", "tomodachi.jsonl"),
    ("부산", "chingu.jsonl"),  # ko: 부산에서
    ("예약", "chingu.jsonl"),  # ko: 예약했어요
    ("駅", "旅行メモ.md"),  # one character
    ("Apfelsaft", "Einkaufsliste.md"),
    ("ferry", "trip.md"),  # English as before
]
NONSENSE = [
    "紫色大象在月球上跳舞",
    "보라색 코끼리가 달에서 춤을 춘다",
    "Фиолетовый слон танцует на луне",
]


def copy_layer(root: Path) -> None:
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)


@pytest.fixture
def languages_index(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    copy_layer(settings.roots[0])
    stats = reindex(settings=settings)
    assert stats.chunks >= 12 and not stats.errors
    return settings


def top_files(searcher: Searcher, query: str, mode: str, limit: int = 3) -> list[str]:
    return [Path(r.source_file).name for r in searcher.search(query, limit, mode=mode).results]


def test_each_chunk_is_stored_with_its_language(languages_index: Settings) -> None:
    conn = db.connect(languages_index.db_path, create=False)
    rows = conn.execute(
        "SELECT source_file, json_extract(metadata, '$.language') FROM chunks"
    ).fetchall()
    found = {Path(f).name: lang for f, lang in rows}
    assert found["jobb.jsonl"] == "no" and found["familjen.jsonl"] == "sv"
    assert found["tongshi.jsonl"] == "zh" and found["chingu.jsonl"] == "ko"
    assert found["Einkaufsliste.md"] == "de" and found["trip.md"] == "en"
    present = keyword_format.present_languages(conn)
    assert {"de", "en", "es", "fr", "ja", "ko", "no", "ru", "sv", "zh"} <= set(present)
    assert db.fts_integrity_ok(conn)


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_inflected_and_cjk_queries_find_their_chats(languages_index: Settings, mode: str) -> None:
    searcher = Searcher(languages_index)
    for query, expected in FOUND:
        assert expected in top_files(searcher, query, mode), (query, mode)
    searcher.close()


def test_the_keyword_index_ranks_every_language_as_fts5(languages_index: Settings) -> None:
    index = KeywordIndex(languages_index.db_path)
    conn = db.connect(languages_index.db_path, create=False)
    queries = [q for q, _ in FOUND] + NONSENSE + ["billettene til Bergen", "北京 预算 会议"]
    for query in queries:
        terms = forms.keyword_terms(conn, query)
        assert_same_ranking(index, conn, terms, 10, Filters())
    # Rows added after the load are tokenized from their search text, as FTS5 indexed them.
    root = languages_index.roots[0]
    (root / "notes" / "møte.md").write_text(
        "# Møte\n\nVi kjøpte nye billetter til møtet i Tromsø.\n"
    )
    (root / "notes" / "会议.md").write_text("# 会议\n\n北京的会议改到下周三。\n")
    reindex(settings=languages_index)
    assert index.refresh()
    for query in ("billetten", "北京", "会议", "møter"):
        assert_same_ranking(index, conn, forms.keyword_terms(conn, query), 10, Filters())
    conn.close(), index.close()


def test_a_word_in_several_languages_is_searched_in_each(languages_index: Settings) -> None:
    conn = db.connect(languages_index.db_path, create=False)
    assert forms.keyword_terms(conn, "billettene") == ["billett"]  # only the form it holds
    assert forms.keyword_terms(conn, "北京开会") == ["北京", "京开", "开会"]
    assert forms.keyword_terms(conn, "zzzqqq") == ["zzzqqq"]  # absent: still a term
    conn.close()


def test_snippets_mark_the_word_as_written(languages_index: Settings) -> None:
    searcher = Searcher(languages_index)
    marked = {
        "billetter": "**billettene**",
        "Rechnungen": "**Rechnung**",
        "北京": "**北京**",
        "부산": "**부산**에서",
        "билет": "**билеты**",
    }
    for query, mark in marked.items():
        result = searcher.search(query, 1, mode="bm25").results[0]
        assert mark in result.snippet, (query, result.snippet)
        assert result.language and result.as_json()["language"] == result.language
    searcher.close()


def test_nonsense_in_other_scripts_shows_nothing_with_the_local_model(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory()  # the local model: it reads English
    copy_layer(settings.roots[0])
    reindex(settings=settings)
    searcher = Searcher(settings, embedder=create_embedder(settings))
    for query in NONSENSE:
        assert len(searcher.search(query, 10).results) <= 1, query
    assert "jobb.jsonl" in top_files(searcher, "billettene", "hybrid")
    explained = searcher.search(NONSENSE[0], 10, mode="hybrid", explain=True)
    assert not explained.results
    searcher.close()


def make_old(settings: Settings) -> None:
    """The index as a Memex before languages left it: FTS5 over the content itself."""
    conn = db.connect(settings.db_path, create=False)
    with db.transaction(conn):
        for _ in conn.execute(schema.drop_keyword_side_sql()):
            pass
        conn.execute("UPDATE chunks SET search_text = NULL, search_title = NULL")
        old = schema.KEYWORD_TABLE.replace("chunks_keywords", "chunks")
        for _ in conn.execute(old + schema.KEYWORD_TRIGGERS):
            pass
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
        for key in ("keyword_format", "keyword_languages", "languages"):
            db.delete_meta(conn, key)
    conn.close()


class Told(NullReporter):
    def __init__(self) -> None:
        self.progress: list[tuple[int, int, str]] = []

    def on_progress(self, done: int, total: int, path: str) -> None:
        self.progress.append((done, total, path))


def test_an_older_index_rebuilds_its_keyword_side_without_re_embedding(
    languages_index: Settings,
) -> None:
    make_old(languages_index)
    conn = db.connect(languages_index.db_path, create=False)
    before = conn.execute("SELECT seq, embedding FROM chunks ORDER BY seq").fetchall()
    assert not keyword_format.is_current(conn, languages_index)
    searcher = Searcher(languages_index)
    assert "jobb.jsonl" not in top_files(searcher, "billetter", "bm25")  # Porter only
    told = Told()
    assert keyword_format.ensure_current(conn, languages_index, told)
    assert told.progress[-1][:2] == (len(before), len(before))
    assert keyword_format.REBUILDING in told.progress[-1][2]
    assert conn.execute("SELECT seq, embedding FROM chunks ORDER BY seq").fetchall() == before
    assert keyword_format.is_current(conn, languages_index) and db.fts_integrity_ok(conn)
    assert "jobb.jsonl" in top_files(searcher, "billetter", "bm25")
    assert not keyword_format.ensure_current(conn, languages_index, told)  # once
    searcher.close(), conn.close()


def test_an_old_index_is_rebuilt_by_the_next_run(languages_index: Settings) -> None:
    make_old(languages_index)
    stats = reindex(settings=languages_index)
    assert stats.chunks == 0 and not stats.errors  # nothing re-read, nothing re-embedded
    conn = db.connect(languages_index.db_path, create=False)
    assert keyword_format.is_current(conn, languages_index)
    conn.close()


def test_pinning_the_languages_rebuilds_the_keyword_side(
    languages_index: Settings, settings_factory: Callable[..., Settings]
) -> None:
    pinned = settings_factory(embedder__name="hashing", languages=["nb"])
    conn = db.connect(pinned.db_path, create=False)
    assert not keyword_format.is_current(conn, pinned)
    assert keyword_format.ensure_current(conn, pinned, NullReporter())
    assert keyword_format.present_languages(conn) == ["no"]
    conn.close()


def test_a_stem_shared_by_chance_yields_to_the_word_as_written(
    languages_index: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spanish "invitado" and English "invited" are both "invit": the message holding the
    word as typed ("invitados") comes first, in every mode; BM25 alone puts the English
    note, which says "invit…" three times, first."""
    searcher = Searcher(languages_index)
    for mode in ("bm25", "hybrid"):
        assert top_files(searcher, "invitado", mode, limit=1) == ["amigos.jsonl"], mode
    assert forms.written_words(searcher.conn, "invitado") == ["invitado"]
    assert forms.written_words(searcher.conn, "invite the neighbours to the party") == []
    monkeypatch.setattr(forms, "written_words", lambda *args, **kwargs: [])
    assert top_files(searcher, "invitado", "bm25", limit=1) == ["party.md"]
    searcher.close()

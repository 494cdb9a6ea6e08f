"""The keyword side's format: each chunk's language and the search text FTS5 indexes for it,
written with every new chunk (`KeywordTexts`), and rebuilt, without re-embedding, for an index
made by an earlier Memex or under another `languages` setting (`ensure_current`).

The index records what its keyword side was made by (`meta`): `keyword_format` (bumped when
engine/language changes what the index holds for a text), `keyword_languages` (the setting)
and `languages` (the languages its chunks are in, which a query is stemmed for:
engine/search/query/forms.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import apsw

from engine.language.analyze import search_text
from engine.language.detect import Detector
from engine.records import Chunk
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunks as chunks_sql
from engine.store.sql import fts as fts_sql
from engine.store.sql import meta as meta_sql
from engine.store.sql import schema

KEYWORD_FORMAT = "4"  # 1: FTS5 over the content itself, Porter only; 3: Nordic definite
# forms; 4: Swedish "-eln" ("nyckeln" meets "nyckel")
FORMAT_KEY = meta_sql.KEYWORD_FORMAT_KEY
SETTING_KEY = meta_sql.KEYWORD_SETTING_KEY
PRESENT_KEY = meta_sql.LANGUAGES_KEY
BATCH = 2000  # chunks read and rewritten at a time while the keyword side is rebuilt
REBUILDING = "rebuilding the keyword index (the vectors are kept)"


class Progress(Protocol):
    def on_progress(self, done: int, total: int, path: str) -> None: ...


@dataclass(frozen=True)
class SearchText:
    """A chunk's language and what FTS5 indexes for it (None: its own content or title)."""

    language: str
    text: str | None
    title: str | None


def present_languages(conn: apsw.Connection) -> list[str]:
    """The languages the index's chunks are in, as the writer recorded them."""
    value = db.get_meta(conn, PRESENT_KEY) or ""
    return [c for c in value.split(",") if c]


class KeywordTexts:
    """Tells new chunks' languages and search texts, and records the languages met."""

    def __init__(self, settings: Settings, conn: apsw.Connection) -> None:
        self.conn = conn
        self.detector = Detector(settings.languages)
        self.present = set(present_languages(conn))

    def of(self, texts: Sequence[tuple[str, str]]) -> list[SearchText]:
        """Each (content, title) of one file's chunks, with its language and search text."""
        languages = self.detector.languages([content or title for content, title in texts])
        return [
            SearchText(lang, search_text(content, lang), search_text(title, lang))
            for (content, title), lang in zip(texts, languages, strict=True)
        ]

    def chunks(self, chunks: Sequence[Chunk]) -> list[SearchText]:
        """`of` for one file's chunks; the languages met are recorded (inside the caller's
        transaction)."""
        found = self.of([(c.content, c.title) for c in chunks])
        self.note(t.language for t in found)
        return found

    def note(self, languages: Iterable[str]) -> None:
        """Record languages not met before in `meta`."""
        new = set(languages) - self.present
        if new:
            self.present |= new
            db.set_meta(self.conn, PRESENT_KEY, ",".join(sorted(self.present)))


def setting_value(settings: Settings) -> str:
    return ",".join(settings.languages)


def is_current(conn: apsw.Connection, settings: Settings) -> bool:
    """Whether the keyword side was made by this format, under this `languages` setting."""
    row = conn.execute(schema.create_statement_sql(), ("chunks_fts",)).fetchone()
    return (
        row is not None
        and schema.KEYWORD_CONTENT in str(row[0])
        and db.get_meta(conn, FORMAT_KEY) == KEYWORD_FORMAT
        and db.get_meta(conn, SETTING_KEY) == setting_value(settings)
    )


def ensure_current(conn: apsw.Connection, settings: Settings, progress: Progress) -> bool:
    """Rebuild the keyword side if it is not current; True when it was rebuilt."""
    if is_current(conn, settings):
        return False
    rebuild(conn, settings, progress)
    return True


def rebuild(conn: apsw.Connection, settings: Settings, progress: Progress) -> None:
    """Every chunk's language and search text anew, then the FTS5 table, in one transaction
    (a stop leaves the old keyword side whole). The vectors are not touched."""
    with db.transaction(conn):
        columns = {str(r[1]) for r in conn.execute(schema.chunk_columns_sql())}
        if "search_text" not in columns:
            _run(conn, schema.add_search_columns_sql())
        _run(conn, schema.drop_keyword_side_sql())
        texts = KeywordTexts(settings, conn)
        texts.present = set()
        db.delete_meta(conn, PRESENT_KEY)
        _rewrite_all(conn, texts, progress)
        _run(conn, schema.keyword_schema_sql())
        conn.execute(fts_sql.rebuild_sql())
        db.set_meta(conn, FORMAT_KEY, KEYWORD_FORMAT)
        db.set_meta(conn, SETTING_KEY, setting_value(settings))
        db.set_meta(conn, meta_sql.KEYWORD_BUILT_KEY, repr(time.time()))


def _rewrite_all(conn: apsw.Connection, texts: KeywordTexts, progress: Progress) -> None:
    """Each chunk's language and search text, a batch at a time, with progress."""
    total = int(conn.execute(chunks_sql.count_sql()).fetchone()[0])
    done, after = 0, 0
    progress.on_progress(0, total, REBUILDING)
    while True:
        rows = conn.execute(chunks_sql.search_texts_sql(), (after, BATCH)).fetchall()
        if not rows:
            break
        for group in _by_file(rows):
            found = texts.of([(r[2], r[3]) for r in group])
            texts.note(t.language for t in found)
            conn.executemany(
                chunks_sql.set_search_text_sql(),
                [(t.language, t.text, t.title, r[0]) for r, t in zip(group, found, strict=True)],
            )
        done += len(rows)
        after = int(rows[-1][0]) + 1
        progress.on_progress(done, total, REBUILDING)


def _by_file(rows: Sequence[tuple[int, str, str, str]]) -> list[list[tuple[int, str, str, str]]]:
    """Consecutive rows of one file together (a file's chunks are stored together)."""
    groups: list[list[tuple[int, str, str, str]]] = []
    for row in rows:
        if groups and groups[-1][0][1] == row[1]:
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups


def _run(conn: apsw.Connection, script: str) -> None:
    """A script of several statements, every one of them run."""
    for _ in conn.execute(script):
        pass

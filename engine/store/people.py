"""Who each file names (`mentions`) and the people directory built from them (`people`).

Mentions are kept per file, replaced with the file's chunks in the same transaction and
deleted with the file. A change to any file's mentions marks the directory stale (meta
`people_stale`, in that same transaction), so the end of a run knows whether to rebuild it
without reading the mentions; `write_directory` clears the mark.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any

import apsw

from engine.records import Mention, Person
from engine.store.sql import meta as meta_sql
from engine.store.sql import people as people_sql
from engine.store.sql import schema as schema_sql

STALE_KEY = "people_stale"  # meta: some file's mentions changed since the last build
BUILT_KEY = "people_built"  # meta: when the directory was last written
WORDS_KEY = "people_words_built"  # meta: the build whose names' words people_words holds
SIGNATURE_KEY = "people_file_signature"  # meta: the people files as the last build saw them

Row = tuple[Any, ...]


def ensure_tables(conn: apsw.Connection) -> bool:
    """Create the tables where missing; True when the mentions table was new. Called by
    `migrate`, inside its transaction: an index that already holds files gets them marked
    for reading again, so its next run fills the mentions in."""
    if _exists(conn, "mentions"):
        conn.execute(people_sql.words_table_sql())  # an index made before the names' words
        return False
    for statement in people_sql.create_tables_sql():
        conn.execute(statement)
    conn.execute(people_sql.mark_files_for_mentions_sql())  # none in a new index
    return True


def _exists(conn: apsw.Connection, name: str) -> bool:
    return conn.execute(schema_sql.table_exists_sql(), (name,)).fetchone() is not None


def _row(source_file: str, source_type: str, mention: Mention) -> Row:
    return (
        source_file,
        source_type,
        mention.name,
        json.dumps(list(mention.aliases), ensure_ascii=False),
        json.dumps(list(mention.emails), ensure_ascii=False),
        json.dumps(list(mention.phones), ensure_ascii=False),
        json.dumps(list(mention.handles), ensure_ascii=False),
        mention.org,
        mention.role,
        mention.count,
        mention.first,
        mention.last,
    )


def _mention(row: Row) -> Mention:
    def listed(text: str) -> tuple[str, ...]:
        return tuple(str(v) for v in json.loads(text or "[]"))

    return Mention(
        name=str(row[2]),
        aliases=listed(row[3]),
        emails=listed(row[4]),
        phones=listed(row[5]),
        handles=listed(row[6]),
        org=str(row[7]),
        role=str(row[8]),
        count=int(row[9]),
        first=row[10],
        last=row[11],
    )


def replace_mentions(
    conn: apsw.Connection, source_file: str, source_type: str, mentions: Sequence[Mention]
) -> bool:
    """Make `mentions` the file's mentions (run inside the file's transaction); True when
    they differ from what was kept, which marks the directory stale."""
    rows = [_row(source_file, source_type, m) for m in mentions]
    kept = [tuple(r) for r in conn.execute(people_sql.mentions_by_file_sql(), (source_file,))]
    if kept == rows:
        return False
    with conn:  # a savepoint: whole or not at all, inside the caller's transaction too
        conn.execute(people_sql.delete_mentions_sql(), (source_file,))
        conn.executemany(people_sql.insert_mention_sql(), rows)
        conn.execute(meta_sql.upsert_sql(), (STALE_KEY, "1"))
    return True


def delete_mentions(conn: apsw.Connection, source_file: str) -> bool:
    """Forget the file's mentions (it is gone); True when it had any."""
    return replace_mentions(conn, source_file, "", [])


def all_mentions(conn: apsw.Connection) -> list[tuple[str, str, Mention]]:
    """Every file's mentions as (source_file, source_type, mention), file by file."""
    return [
        (str(r[0]), str(r[1]), _mention(r)) for r in conn.execute(people_sql.all_mentions_sql())
    ]


def is_stale(conn: apsw.Connection) -> bool:
    """Whether some file's mentions changed since the directory was last written, or it
    never was (two meta reads, no query over the mentions)."""
    return _meta(conn, STALE_KEY) is not None or _meta(conn, BUILT_KEY) is None


def _meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute(meta_sql.select_value_sql(), (key,)).fetchone()
    return None if row is None else str(row[0])


def write_directory(
    conn: apsw.Connection,
    people: Sequence[Person],
    words: Callable[[str], Iterable[str]] | None = None,
) -> None:
    """Replace the whole directory with `people` (a slug seen twice keeps the first) and
    clear the stale mark. With `words` (how a reader folds a name into words:
    engine/people/normalise.py `text_tokens`), each person's names' words are kept too,
    so that `read_directory_naming` looks them up rather than scanning every record."""
    built = repr(time.time())
    with conn:
        conn.execute(people_sql.clear_people_sql())
        conn.executemany(
            people_sql.insert_person_sql(),
            [(p.slug, p.name, json.dumps(p.as_dict(), ensure_ascii=False)) for p in people],
        )
        conn.execute(people_sql.clear_words_sql())
        conn.execute(meta_sql.delete_sql(), (WORDS_KEY,))
        if words is not None:
            rowids = {
                str(slug): int(rowid)
                for rowid, slug in conn.execute(people_sql.person_rowids_sql())
            }
            conn.executemany(people_sql.insert_word_sql(), _word_rows(people, rowids, words))
            conn.execute(meta_sql.upsert_sql(), (WORDS_KEY, built))
        conn.execute(meta_sql.upsert_sql(), (BUILT_KEY, built))
        conn.execute(meta_sql.delete_sql(), (STALE_KEY,))


def _word_rows(
    people: Sequence[Person], rowids: dict[str, int], words: Callable[[str], Iterable[str]]
) -> Iterator[tuple[str, int]]:
    """(word, rowid) of each word of each stored person's names (the first of a slug)."""
    seen: set[str] = set()
    for person in people:
        if person.slug in seen or person.slug not in rowids:
            continue
        seen.add(person.slug)
        for word in {w for name in person.names for w in words(name)}:
            yield word, rowids[person.slug]


def built_at(conn: apsw.Connection) -> float | None:
    """When the directory was last written (seconds since the epoch), or None."""
    value = _meta(conn, BUILT_KEY)
    return float(value) if value is not None else None


def read_directory(conn: apsw.Connection) -> list[Person] | None:
    """The directory as last written; None when this index has no directory yet (made
    before people were kept, or not built since)."""
    if not _exists(conn, "people"):
        return None
    if _meta(conn, BUILT_KEY) is None:
        return None
    return [Person.from_dict(json.loads(r[0])) for r in conn.execute(people_sql.people_sql())]


def read_directory_naming(
    conn: apsw.Connection,
    words: Sequence[str],
    names_hold: Callable[[Sequence[str], Collection[str]], bool],
) -> list[Person] | None:
    """The people of `read_directory` whose names `names_hold` one of `words`, in its
    order; only their records are read. None when there is no directory (as there)."""
    if not _exists(conn, "people") or _meta(conn, BUILT_KEY) is None:
        return None
    if not words:  # a query of no word names no one
        return []
    if _meta(conn, WORDS_KEY) == _meta(conn, BUILT_KEY):
        rows = conn.execute(people_sql.people_with_words_sql(len(words)), list(words))
        found = [int(r[0]) for r in rows]
    else:  # a directory written without its words: every name read and told apart here
        held = set(words)
        rows = conn.execute(people_sql.people_naming_sql(len(words)), list(words))
        found = [int(r[0]) for r in rows if names_hold([str(r[1]), *json.loads(r[2])], held)]
    if not found:
        return []
    records = conn.execute(people_sql.people_at_sql(len(found)), found)
    return [Person.from_dict(json.loads(r[0])) for r in records]

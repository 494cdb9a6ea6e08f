"""The people directory as a reader gets it: a search, a card, `memex people`.

The indexing run builds the directory and keeps it in the index (engine/index/people.py);
a reader reads it back as written. Only when a people file changed since that build is it
rebuilt here, in memory, from the kept mentions, so an edit shows before the next run:
the build's modules (engine/people/directory.py and below) load then, and only then. A
reader given no roots (`memex --search … --db FILE` alone) finds no people file to compare:
the kept directory stands, with the people file's corrections and hidden people as built.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import apsw

from engine.people.curated import curated_signature, load_me, load_people
from engine.people.normalise import text_tokens
from engine.records import Person
from engine.settings import Settings
from engine.store import db
from engine.store import people as people_store


def read_people(settings: Settings) -> list[Person]:
    """The people directory the index keeps; rebuilt in memory from the kept mentions when
    the people file changed since it was written (so an edit shows before the next run);
    the people file alone when the index has no directory (or no index is there)."""
    try:
        conn = db.connect(settings.db_path, readonly=True, create=False)
    except (db.IndexError_, apsw.Error, OSError):
        return load_people(settings)
    try:
        with db.read_snapshot(conn):
            built = people_store.read_directory(conn)
            if built is None:
                return load_people(settings)
            if kept_as_built(conn, settings):
                return built
            mentions = people_store.all_mentions(conn)
        from engine.people.directory import build_directory  # the build: rarely needed here

        return build_directory(mentions, load_people(settings), settings, load_me(settings))
    except apsw.Error:
        return load_people(settings)
    finally:
        conn.close()


def kept_as_built(conn: apsw.Connection, settings: Settings) -> bool:
    """Whether the kept directory is the answer: the people files are as its build saw
    them, or there is no root to find one in (`--db FILE` alone): it stands as built."""
    if not settings.roots:
        return True
    signature = db.get_meta(conn, people_store.SIGNATURE_KEY)
    return signature == curated_signature(settings)


def read_people_named(settings: Settings, text: str) -> list[Person]:
    """The people of `read_people` with a name or alias holding a word (or mark) of
    `text`, in the directory's order: everyone a search for `text` can find by name
    (`PeopleMatcher.find`, `named_in` and `by_name` match only names whose words the text
    holds, and rank them by their order among these alone). One query over the names and
    a record read per person found, not the whole directory: what a one-shot search
    reads, whatever the directory's size."""
    words = sorted(set(text_tokens(text)))
    try:
        conn = db.connect(settings.db_path, readonly=True, create=False)
    except (db.IndexError_, apsw.Error, OSError):
        return naming(load_people(settings), words)
    try:
        with db.read_snapshot(conn):
            kept = people_store.read_directory_naming(conn, words, names_hold)
            if kept is not None and kept_as_built(conn, settings):
                return kept
    except apsw.Error:
        pass
    finally:
        conn.close()
    return naming(read_people(settings), words)


def names_hold(names: Sequence[str], words: Collection[str]) -> bool:
    """Whether one of `names` holds one of `words` (folded words and marks)."""
    return any(token in words for name in names for token in text_tokens(name))


def naming(people: Iterable[Person], words: Collection[str]) -> list[Person]:
    return [p for p in people if names_hold(p.names, words)]

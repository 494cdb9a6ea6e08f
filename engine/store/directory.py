"""The people directory as a reader gets it: a search, a card, `memex people`.

The indexing run builds the directory and keeps it in the index (engine/index/people.py);
a reader reads it back as written. Only when a people file changed since that build is it
rebuilt here, in memory, from the kept mentions, so an edit shows before the next run:
the build's modules (engine/people/directory.py and below) load then, and only then. A
reader given no roots (`memex --search … --db FILE` alone) finds no people file to compare:
the kept directory stands, with the people file's corrections and hidden people as built.
"""

from __future__ import annotations

import apsw

from engine.people.curated import curated_signature, load_me, load_people
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
            if not settings.roots:  # no people file to read: the kept directory stands
                return built
            signature = curated_signature(settings)
            if db.get_meta(conn, people_store.SIGNATURE_KEY) == signature:
                return built
            mentions = people_store.all_mentions(conn)
        from engine.people.directory import build_directory  # the build: rarely needed here

        return build_directory(mentions, load_people(settings), settings, load_me(settings))
    except apsw.Error:
        return load_people(settings)
    finally:
        conn.close()

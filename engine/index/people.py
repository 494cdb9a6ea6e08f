"""The people directory, rebuilt at the end of an indexing run when what it is made of changed.

It is made of every file's mentions (`engine.store.people`) and the curated people file under
each root (`settings.people_file`, `engine.people.load_people`), resolved by
`engine.people.directory.build_directory`. A run rebuilds it only when some file's mentions
changed (the store's stale mark, set in the file's own transaction, so a stopped or killed
run leaves it for the next) or when a people file changed (its mtime and size, kept in meta);
otherwise the check costs two meta reads and a stat per root, and no query over the mentions.

A watched index changes a file at a time, and a directory of thousands of people takes
seconds to build, so a watch batch rebuilds it only when the last build is older than
`DUTY` times what that build took (a 0.1 s build: after a second; an 8 s one: after 80 s);
until then the stale mark waits for the next batch or reconcile, which every other run
honours at once. A changed people file is rebuilt at once by every run.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

import apsw

from engine.index.indexer import Indexer
from engine.people import directory, load_people
from engine.people.curated import curated_signature, load_me, people_file_errors
from engine.people.normalise import text_tokens
from engine.records import Person
from engine.settings import Settings
from engine.store import db
from engine.store import people as people_store
from engine.store.sql import chunks as chunks_sql

# A chat window's title ends with its day ("Raj Patel · 2024-03-14"): the conversation's
# title is the part before it.
_DATED = re.compile(r"\s*·\s*\d{4}-\d{2}-\d{2}[^·]*$")
_ARCHIVE_MARK = re.compile(r"\.zip!", re.IGNORECASE)

SIGNATURE_KEY = people_store.SIGNATURE_KEY  # meta: the people files as the last build saw them
SECONDS_KEY = "people_build_seconds"  # meta: what the last build took
DUTY = 10  # a watch batch spends at most about 1/DUTY of the time rebuilding the directory
ERROR_PATH = "<people>"  # where a failed build is reported, as a file's error would be


def needs_rebuild(conn: apsw.Connection, settings: Settings) -> str | None:
    """The people files' signature when the directory must be rebuilt, None when it is
    up to date."""
    signature = curated_signature(settings)
    if people_store.is_stale(conn) or db.get_meta(conn, SIGNATURE_KEY) != signature:
        return signature
    return None


def rebuild(conn: apsw.Connection, settings: Settings, signature: str) -> int:
    """Build the directory from every mention and the people files and write it, with
    the signature, in one transaction; how many people it holds."""
    started = time.perf_counter()
    with db.transaction(conn):
        mentions = people_store.all_mentions(conn)
        curated, me = load_people(settings), load_me(settings)
        built = directory.build_directory(mentions, curated, settings, me)
        people_store.write_directory(conn, with_data_titles(conn, built), text_tokens)
        db.set_meta(conn, SIGNATURE_KEY, signature)
        db.set_meta(conn, SECONDS_KEY, repr(time.perf_counter() - started))
    return len(built)


def with_data_titles(conn: apsw.Connection, people: list[Person]) -> list[Person]:
    """Each card's latest conversations titled from the data: the newest chunk's title of
    the file (the chat's or channel's name, the participants, the mail's subject), without
    the window's date or an archive's `.zip!`; the file's own name when it has none."""
    files = {c.source_file for p in people for c in p.conversations}
    titles = {f: title for f in sorted(files) if (title := _data_title(conn, f))}
    return [
        replace(
            p,
            conversations=tuple(
                replace(c, title=titles.get(c.source_file, c.title)) for c in p.conversations
            ),
        )
        if p.conversations
        else p
        for p in people
    ]


def _data_title(conn: apsw.Connection, source_file: str) -> str:
    row = conn.execute(chunks_sql.latest_title_sql(), (source_file,)).fetchone()
    title = _ARCHIVE_MARK.sub("", _DATED.sub("", str(row[0]) if row else "")).strip()
    return title


def recently_built(conn: apsw.Connection, now: float) -> bool:
    """Whether the last build is younger than DUTY times what it took."""
    built, took = people_store.built_at(conn), db.get_meta(conn, SECONDS_KEY)
    if built is None or took is None:
        return False
    return now - built < DUTY * float(took)


def refresh_directory(
    conn: apsw.Connection, settings: Settings, *, throttle: bool = False
) -> int | None:
    """Rebuild the directory if its mentions or people files changed since the last
    build; how many people it holds now, or None when it was up to date (or, with
    `throttle`, when only mentions changed and it was built too recently: it stays
    stale). Whatever the build raises is raised (the run reports it); the old directory
    is kept then."""
    signature = needs_rebuild(conn, settings)
    if signature is None:
        return None
    files_same = db.get_meta(conn, SIGNATURE_KEY) == signature
    if throttle and files_same and recently_built(conn, time.time()):
        return None
    return rebuild(conn, settings, signature)


def refresh_after_run(indexer: Indexer, *, throttle: bool = False) -> int | None:
    """`refresh_directory` at the end of a run (`throttle`: a watch batch's): a failure is
    one error of the run, never the end of it (the files are indexed); the time it took is
    the run's "people" stage."""
    started = time.perf_counter()
    try:
        built = refresh_directory(indexer.conn, indexer.settings, throttle=throttle)
        if built is not None:  # a people file changed, say: one that cannot be read is told
            for path, message in people_file_errors(indexer.settings):
                indexer.report(path, message)
        return built
    except Exception as exc:  # the directory's own failure: indexing itself has succeeded
        indexer.report(ERROR_PATH, f"the people directory was not rebuilt: {_reason(exc)}")
        return None
    finally:
        indexer.run.add_time("people", started)


def _reason(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

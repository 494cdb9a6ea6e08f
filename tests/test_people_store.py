"""Mentions in the index: kept per file with its chunks, replaced and deleted with it, filled in
for an index made before them; the people directory rebuilt only when they (or the people
file) changed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import apsw
import pytest

from engine.index import people as index_people
from engine.index.runs import reindex
from engine.people import directory
from engine.records import Mention, Person
from engine.settings import Settings
from engine.store import db
from engine.store import people as store
from tests.conftest import assert_consistent
from tests.test_siblings import rename_ana, slack_export


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


@pytest.fixture
def conn(tmp_path: Path) -> apsw.Connection:
    connection = db.connect(tmp_path / "index.db")
    db.migrate(connection)
    return connection


def mentions(settings: Settings) -> dict[str, list[tuple[str, Mention]]]:
    """Every stored mention by file name (channel/day), with its source type."""
    conn = db.connect(settings.db_path, create=False)
    try:
        found: dict[str, list[tuple[str, Mention]]] = {}
        for source_file, source_type, mention in store.all_mentions(conn):
            name = "/".join(Path(source_file).parts[-2:])
            found.setdefault(name, []).append((source_type, mention))
        return found
    finally:
        conn.close()


def names(settings: Settings, file: str) -> set[str]:
    return {m.name for _, m in mentions(settings).get(file, [])}


class BuildCounter:
    """build_directory, counted: what each call was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []  # (mentions, curated people) per call

    def __call__(
        self,
        found: Sequence[tuple[str, str, Mention]],
        curated: Sequence[Person],
        settings: Settings,
        me: str = "",
    ) -> list[Person]:
        self.calls.append((len(found), len(curated)))
        return [Person(name=m.name, slug=f"p{i}") for i, (_, _, m) in enumerate(found)]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> BuildCounter:
    counter = BuildCounter()
    monkeypatch.setattr(directory, "build_directory", counter)
    return counter


# -- the store -----------------------------------------------------------------------------


def test_mentions_round_trip_and_replace(conn: apsw.Connection) -> None:
    ana = Mention(
        name="Ana Lima",
        aliases=("ana", "Ána"),
        emails=("ana@example.com",),
        phones=("+44 7700 900123",),
        handles=("slack:U1",),
        org="T1",
        role="author",
        count=3,
        first="2024-03-11T08:00:00",
        last="2024-03-12",
    )
    ben = Mention(name="Ben", role="recipient")
    with db.transaction(conn):
        assert store.replace_mentions(conn, "/r/a.json", "slack", [ana, ben])
        assert store.replace_mentions(conn, "/r/b.md", "note", [Mention(name="Cy", role="note")])
    assert store.all_mentions(conn) == [
        ("/r/a.json", "slack", ana),
        ("/r/a.json", "slack", ben),
        ("/r/b.md", "note", Mention(name="Cy", role="note")),
    ]
    with db.transaction(conn):
        assert not store.replace_mentions(conn, "/r/a.json", "slack", [ana, ben])  # the same
        assert store.replace_mentions(conn, "/r/a.json", "slack", [ben])
        assert store.delete_mentions(conn, "/r/b.md")
        assert not store.delete_mentions(conn, "/r/b.md")
    assert store.all_mentions(conn) == [("/r/a.json", "slack", ben)]


def test_a_change_marks_the_directory_stale_and_writing_it_clears_the_mark(
    conn: apsw.Connection,
) -> None:
    assert store.is_stale(conn) and store.read_directory(conn) is None  # never built
    people = [
        Person(name="Ana Lima", slug="ana-lima", aliases=("Ana",), emails=("ana@example.com",)),
        Person(name="Ben", slug="ben", relationship="friend"),
        Person(name="Ana Other", slug="ana-lima"),  # a slug twice: the first is kept
    ]
    store.write_directory(conn, people)
    assert not store.is_stale(conn)
    assert store.read_directory(conn) == people[:2]
    with db.transaction(conn):
        store.replace_mentions(conn, "/r/a.json", "slack", [Mention(name="Ana")])
    assert store.is_stale(conn)
    store.write_directory(conn, [])
    assert store.read_directory(conn) == [] and not store.is_stale(conn)


def test_a_directory_is_none_on_an_index_without_the_table(tmp_path: Path) -> None:
    bare = apsw.Connection(str(tmp_path / "other.db"))
    bare.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    assert store.read_directory(bare) is None


# -- indexing keeps them with the file -------------------------------------------------------


def test_reindex_stores_replaces_and_deletes_a_files_mentions(hashing: Settings) -> None:
    chat = hashing.roots[0] / "data" / "whatsapp" / "WhatsApp Chat with Raj.txt"
    chat.parent.mkdir(parents=True)
    chat.write_text("12/03/2024, 09:14 - Raj: hi\n12/03/2024, 09:15 - Maya: hello\n")
    reindex(settings=hashing)
    stored = mentions(hashing)["whatsapp/WhatsApp Chat with Raj.txt"]
    assert [(t, m.name, m.count) for t, m in stored] == [
        ("whatsapp", "Raj", 1),
        ("whatsapp", "Maya", 1),
    ]

    chat.write_text(
        chat.read_text() + "12/03/2024, 09:20 - Raj: bye\n13/03/2024, 10:00 - Sam: hey\n"
    )
    reindex(settings=hashing)
    stored = mentions(hashing)["whatsapp/WhatsApp Chat with Raj.txt"]
    assert [(m.name, m.count, m.last) for _, m in stored] == [
        ("Raj", 2, "2024-03-12T09:20:00"),
        ("Maya", 1, "2024-03-12T09:15:00"),
        ("Sam", 1, "2024-03-13T10:00:00"),
    ]

    chat.unlink()
    assert reindex(settings=hashing).deleted_files == 1
    assert mentions(hashing) == {}
    assert_consistent(hashing.db_path)


def test_a_failed_file_keeps_its_mentions(hashing: Settings) -> None:
    chat = hashing.roots[0] / "data" / "whatsapp" / "WhatsApp Chat with Raj.txt"
    chat.parent.mkdir(parents=True)
    chat.write_text("12/03/2024, 09:14 - Raj: hi\n")
    reindex(settings=hashing)
    chat.write_text("no chat here at all\n")
    assert reindex(settings=hashing).errors
    assert names(hashing, "whatsapp/WhatsApp Chat with Raj.txt") == {"Raj"}  # as its chunks


def test_a_renamed_user_reaches_the_mentions_of_unchanged_day_files(hashing: Settings) -> None:
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)
    assert names(hashing, "general/2024-03-11.json") == {"Ana Lima", "Ben Okafor"}
    rename_ana(export)
    renamed = reindex(settings=hashing)
    assert renamed.files == 3  # the day files, read again through their siblings
    assert names(hashing, "general/2024-03-11.json") == {"Ana Castillo", "Ben Okafor"}
    assert names(hashing, "random/2024-03-11.json") == {"Ana Castillo"}
    assert names(hashing, "general/2024-03-12.json") == {"Ben Okafor"}
    ana = next(m for _, m in mentions(hashing)["random/2024-03-11.json"])
    assert ana.handles == ("slack:U1",) and ana.org == "acme"  # the export's folder


# -- an index made before mentions -----------------------------------------------------------


def _as_before_mentions(db_path: Path) -> None:
    """Turn an index back into one made before mentions and the directory existed."""
    conn = db.connect(db_path, create=False)
    try:
        with db.transaction(conn):
            conn.execute("DROP TABLE mentions")
            conn.execute("DROP TABLE people")
            conn.execute("DELETE FROM meta WHERE key LIKE 'people%'")
    finally:
        conn.close()


def test_an_old_index_gets_its_mentions_without_new_vectors(hashing: Settings) -> None:
    export = slack_export(hashing.roots[0])
    note = hashing.roots[0] / "notes" / "People" / "Raj Patel.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\naliases: [Raj]\n---\nMet at the ferry.\n")
    first = reindex(settings=hashing)
    assert first.embedded == first.chunks > 0
    _as_before_mentions(hashing.db_path)
    conn = db.connect(hashing.db_path, create=False)
    vectors_before = conn.execute("SELECT seq, embedding FROM chunks ORDER BY seq").fetchall()
    conn.close()

    again = reindex(settings=hashing)  # migrate marks every file; the run reads them again
    assert again.files == 4 and again.skipped == 0
    assert (again.chunks, again.embedded, again.deleted_chunks) == (0, 0, 0)
    conn = db.connect(hashing.db_path, create=False)
    try:
        kept = conn.execute("SELECT seq, embedding FROM chunks ORDER BY seq").fetchall()
    finally:
        conn.close()
    assert kept == vectors_before  # the same rows, the same vectors
    assert names(hashing, "People/Raj Patel.md") == {"Raj Patel"}
    assert names(hashing, "general/2024-03-11.json") == {"Ana Lima", "Ben Okafor"}
    assert reindex(settings=hashing).files == 0  # their keys are stored again
    assert export.exists()
    assert_consistent(hashing.db_path)


def test_migrating_a_new_index_twice_marks_nothing(conn: apsw.Connection) -> None:
    conn.execute(
        "INSERT INTO index_state(source_file, mtime, size, indexed_at, depends) "
        "VALUES ('/r/a.md', 1, 2, 3, NULL)"
    )
    db.migrate(conn)  # the tables exist: nothing is marked
    assert conn.execute("SELECT depends FROM index_state").fetchone()[0] is None


# -- the directory refresh -------------------------------------------------------------------


def _people_file(settings: Settings, people: list[dict[str, Any]]) -> Path:
    path = settings.roots[0] / settings.people_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"people": people}))
    return path


def test_the_directory_is_rebuilt_only_when_something_changed(
    hashing: Settings, builds: BuildCounter
) -> None:
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)
    assert len(builds.calls) == 1 and builds.calls[0][0] > 0  # the first run builds it
    conn = db.connect(hashing.db_path, create=False)
    directory_now = store.read_directory(conn)
    conn.close()
    assert directory_now and {p.name for p in directory_now} >= {"Ana Lima", "Ben Okafor"}

    reindex(settings=hashing)
    reindex(settings=hashing)
    assert len(builds.calls) == 1  # nothing changed: not rebuilt

    people_file = _people_file(hashing, [{"name": "Ana Lima", "relationship": "colleague"}])
    reindex(settings=hashing)
    assert len(builds.calls) == 2 and builds.calls[-1][1] == 1  # a new people file
    reindex(settings=hashing)
    assert len(builds.calls) == 2

    people_file.write_text(json.dumps({"people": [{"name": "Ana"}, {"name": "Ben"}]}))
    os.utime(people_file, ns=(1, 1))  # another mtime and size
    reindex(settings=hashing)
    assert len(builds.calls) == 3 and builds.calls[-1][1] == 2

    (export / "general" / "2024-03-12.json").write_text("[]")  # a file's mentions change
    reindex(settings=hashing)
    assert len(builds.calls) == 4

    rewritten = export / "random" / "2024-03-11.json"
    rewritten.write_text(rewritten.read_text() + " ")  # read again, the same mentions
    assert reindex(settings=hashing).files == 1
    assert len(builds.calls) == 4

    people_file.unlink()
    reindex(settings=hashing)
    assert len(builds.calls) == 5 and builds.calls[-1][1] == 0


def test_a_failing_build_is_one_error_of_the_run_and_keeps_the_old_directory(
    hashing: Settings, monkeypatch: pytest.MonkeyPatch, builds: BuildCounter
) -> None:
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)

    def broken(*_: object) -> list[Person]:
        raise ValueError("no such person")

    monkeypatch.setattr(directory, "build_directory", broken)
    rename_ana(export)
    stats = reindex(settings=hashing)
    assert stats.errors == (
        (
            index_people.ERROR_PATH,
            "the people directory was not rebuilt: ValueError: no such person",
        ),
    )
    conn = db.connect(hashing.db_path, create=False)
    try:
        assert "Ana Lima" in {p.name for p in store.read_directory(conn) or []}
        assert store.is_stale(conn)  # tried again by the next run
    finally:
        conn.close()
    monkeypatch.setattr(directory, "build_directory", builds)
    assert not reindex(settings=hashing).errors
    conn = db.connect(hashing.db_path, create=False)
    try:
        assert "Ana Castillo" in {p.name for p in store.read_directory(conn) or []}
    finally:
        conn.close()


def test_the_real_build_runs_at_the_end_of_a_run(hashing: Settings) -> None:
    """The run builds the directory and stores it."""
    slack_export(hashing.roots[0])
    _people_file(hashing, [{"name": "Ana Lima", "relationship": "colleague"}])
    stats = reindex(settings=hashing)
    assert not stats.errors
    conn = db.connect(hashing.db_path, create=False)
    try:
        built = store.read_directory(conn)
    finally:
        conn.close()
    assert built is not None and "Ana Lima" in {p.name for p in built}


def test_a_people_file_that_cannot_be_read_is_one_error_of_the_run(hashing: Settings) -> None:
    slack_export(hashing.roots[0])
    path = Path(hashing.roots[0]) / hashing.people_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    stats = reindex(settings=hashing)
    assert [p for p, _ in stats.errors] == [str(path)]
    again = reindex(settings=hashing)
    assert again.errors == ()  # told when it changed, not on every run


def test_a_watch_batch_leaves_a_directory_that_was_just_built_stale(
    hashing: Settings, builds: BuildCounter
) -> None:
    """A watched index rebuilds a slow directory at most every DUTY × its build time."""
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)
    assert len(builds.calls) == 1
    day = export / "general" / "2024-03-12.json"

    batches = [0]

    def watch_batch(took: float) -> None:  # each batch: another count of Ana's messages
        conn = db.connect(hashing.db_path)
        try:
            db.set_meta(conn, index_people.SECONDS_KEY, repr(took))
        finally:
            conn.close()
        batches[0] += 1
        said = [
            {"type": "message", "user": "U01ANA", "text": f"note {n}", "ts": f"{1710000000 + n}.0"}
            for n in range(batches[0])
        ]
        day.write_text(json.dumps(said))
        reindex([day], settings=hashing, kind="watch")

    watch_batch(took=3600.0)  # the last build took an hour: not again so soon
    assert len(builds.calls) == 1
    conn = db.connect(hashing.db_path, create=False)
    try:
        assert store.is_stale(conn)
    finally:
        conn.close()
    watch_batch(took=0.0)  # a quick build: every batch
    assert len(builds.calls) == 2
    watch_batch(took=3600.0)
    assert len(builds.calls) == 2
    reindex(settings=hashing)  # any other run honours the stale mark at once
    assert len(builds.calls) == 3

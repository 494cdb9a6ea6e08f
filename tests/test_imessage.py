"""iMessage's `chat.db`: read with its WAL from a private copy (or from memory), times from Apple's epoch, text from
`attributedBody` when `text` is empty, reactions skipped, chats named, handles as mentions.

The database is built here with the tables and columns of Messages' own schema that the
reader uses (macOS 13's names and types).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Extraction, imessage
from engine.extractors.imessage import apple_time, attributed_text, extract_imessage, recognise
from engine.index import databases
from engine.index.routes import scan
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db

SCHEMA = """
CREATE TABLE handle (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, id TEXT NOT NULL,
    country TEXT, service TEXT NOT NULL, uncanonicalized_id TEXT, person_centric_id TEXT);
CREATE TABLE chat (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL,
    style INTEGER, state INTEGER, account_id TEXT, properties BLOB, chat_identifier TEXT,
    service_name TEXT, room_name TEXT, display_name TEXT, group_id TEXT);
CREATE TABLE message (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL,
    text TEXT, handle_id INTEGER DEFAULT 0, service TEXT, date INTEGER, date_read INTEGER,
    is_from_me INTEGER DEFAULT 0, cache_has_attachments INTEGER DEFAULT 0,
    associated_message_guid TEXT, associated_message_type INTEGER DEFAULT 0,
    attributedBody BLOB, thread_originator_guid TEXT);
CREATE TABLE chat_message_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
    message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE, message_date INTEGER
    DEFAULT 0, PRIMARY KEY (chat_id, message_id));
CREATE TABLE chat_handle_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
    handle_id INTEGER REFERENCES handle (ROWID) ON DELETE CASCADE, UNIQUE(chat_id, handle_id));
"""
RAJ, LENA = "+447700900123", "lena@example.org"


def typedstream(text: str) -> bytes:
    """An `attributedBody` as Messages writes one: an NSAttributedString in a typedstream."""
    body = text.encode()
    length = bytes([len(body)]) if len(body) < 0x80 else b"\x81" + len(body).to_bytes(2, "little")
    return (
        b"\x04\x0bstreamtyped\x81\xe8\x03\x84\x01@\x84\x84\x84\x12NSAttributedString\x00"
        b"\x84\x84\x08NSObject\x00\x85\x92\x84\x84\x84\x08NSString\x01\x94\x84\x01+"
        + length
        + body
        + b"\x86\x84\x02iI\x01\x05\x92\x84\x84\x84\x0cNSDictionary\x00\x94\x84\x01i\x01\x92"
    )


def apple_ns(iso: str) -> int:
    moment = datetime.fromisoformat(iso).replace(tzinfo=UTC)
    return int((moment - datetime(2001, 1, 1, tzinfo=UTC)).total_seconds() * 10**9)


def build_chat_db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executemany(
        "INSERT INTO handle(ROWID, id, service) VALUES(?, ?, 'iMessage')",
        [(1, RAJ), (2, LENA)],
    )
    conn.executemany(
        "INSERT INTO chat(ROWID, guid, chat_identifier, display_name) VALUES(?, ?, ?, ?)",
        [(1, "iMessage;-;" + RAJ, RAJ, ""), (2, "iMessage;+;chat42", "chat42", "Climbing Crew")],
    )
    conn.executemany("INSERT INTO chat_handle_join VALUES(?, ?)", [(1, 1), (2, 1), (2, 2)])
    messages = [
        # (rowid, text, body, handle, date, from_me, reaction, chat)
        (1, "Ferry at nine tomorrow?", None, 1, apple_ns("2024-03-11T08:00:00"), 0, 0, 1),
        (2, "Yes, I'll bring the tickets", None, 0, apple_ns("2024-03-11T08:05:00"), 1, 0, 1),
        (
            3,
            None,
            typedstream("Only in the attributed body"),
            1,
            apple_ns("2024-03-11T08:06:00"),
            0,
            0,
            1,
        ),
        (
            4,
            "Loved “Yes, I'll bring the tickets”",
            None,
            1,
            apple_ns("2024-03-11T08:07:00"),
            0,
            2000,
            1,
        ),
        (5, "Bouldering at the Arch on Friday", None, 2, apple_ns("2024-03-12T18:00:00"), 0, 0, 2),
        (6, "\ufffc", None, 2, apple_ns("2024-03-12T18:01:00"), 0, 0, 2),  # an image alone
    ]
    for rowid, text, body, handle, date, me, reaction, chat in messages:
        conn.execute(
            "INSERT INTO message(ROWID, guid, text, attributedBody, handle_id, date, is_from_me,"
            " associated_message_type) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
            (rowid, f"guid-{rowid}", text, body, handle, date, me, reaction),
        )
        conn.execute("INSERT INTO chat_message_join VALUES(?, ?, ?)", (chat, rowid, date))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.fixture
def chat_db(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "Library" / "Messages" / "chat.db"
    build_chat_db(path)
    return path


def test_messages_become_chat_windows_per_chat(chat_db: Path) -> None:
    result = extract_imessage(chat_db.read_bytes(), PurePath(chat_db))
    assert not result.problems
    by_title = {d.title: d for d in result.drafts}
    assert set(by_title) == {f"{RAJ} · 2024-03-11", "Climbing Crew · 2024-03-12"}
    one = by_title[f"{RAJ} · 2024-03-11"]
    assert one.content.splitlines() == [
        f"{RAJ}: Ferry at nine tomorrow?",
        "Me: Yes, I'll bring the tickets",
        f"{RAJ}: Only in the attributed body",
    ]  # the tapback is not a message
    assert one.content_date == "2024-03-11T08:00:00Z" and one.location == "rowid:1"
    group = by_title["Climbing Crew · 2024-03-12"]
    assert group.content == f"{LENA}: Bouldering at the Arch on Friday"  # the image alone: none


def test_every_handle_is_a_mention_with_its_phone_or_email(chat_db: Path) -> None:
    mentions = {m.name: m for m in extract_imessage(chat_db.read_bytes(), chat_db).mentions}
    assert set(mentions) == {RAJ, LENA}
    assert mentions[RAJ].phones == (RAJ,) and mentions[RAJ].emails == ()
    assert mentions[RAJ].handles == (f"imessage:{RAJ}",) and mentions[RAJ].count == 2
    assert mentions[LENA].emails == (LENA,) and mentions[LENA].phones == ()


def test_apple_times_in_nanoseconds_and_in_seconds() -> None:
    assert apple_time(apple_ns("2024-03-11T08:00:00")) == "2024-03-11T08:00:00Z"
    seconds = apple_ns("2024-03-11T08:00:00") // 10**9
    assert apple_time(seconds) == "2024-03-11T08:00:00Z"  # seconds, before macOS 10.13
    assert apple_time(0) is None and apple_time(None) is None


def test_attributed_text_long_and_broken_bodies() -> None:
    long = "x" * 300
    assert attributed_text(typedstream(long)) == long  # a two-byte length
    assert attributed_text(b"\x04\x0bstreamtyped") == ""
    assert attributed_text(typedstream("cut")[:-40][:120]) in ("", "cut")


def test_a_database_that_is_not_messages_is_one_clear_error(tmp_path: Path) -> None:
    other = tmp_path / "chat.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE message(id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(ExtractError, match="not an iMessage database: no chat, chat_handle"):
        extract_imessage(other.read_bytes(), other)
    with pytest.raises(ExtractError, match="not an SQLite database"):
        extract_imessage(b"hello", other)


def test_recognised_by_name_and_header_only(chat_db: Path) -> None:
    head = chat_db.read_bytes()[:4096]
    assert recognise("chat.db", head, lambda _: False)
    assert not recognise("notes.db", head, lambda _: False)
    assert not recognise("chat.db", b"not sqlite", lambda _: False)


def test_indexed_from_the_home_folder_while_messages_holds_a_lock(
    chat_db: Path, settings_factory: Callable[..., Settings]
) -> None:
    home = chat_db.parents[2]
    elsewhere = home / "Backups" / "old-mac" / "chat.db"
    build_chat_db(elsewhere)
    before = hashlib.sha256(chat_db.read_bytes()).hexdigest()
    holder = sqlite3.connect(chat_db)
    holder.execute("BEGIN EXCLUSIVE")  # Messages writing, say
    try:
        stats = reindex(settings=settings_factory(home, embedder__name="hashing"))
    finally:
        holder.rollback()
        holder.close()
    assert not stats.errors, stats.errors
    assert hashlib.sha256(chat_db.read_bytes()).hexdigest() == before
    conn = db.connect(home.parent / "index" / "memex.db", create=False)
    try:
        rows = dict(conn.execute("SELECT source_file, source_type FROM index_state"))
    finally:
        conn.close()
    assert rows == {str(chat_db): "imessage", str(elsewhere): "imessage"}
    assert not (chat_db.parent / "chat.db-journal").exists()


# --- Messages between checkpoints: the newest messages only in chat.db-wal -----------------

NEWEST = [  # (rowid, text, handle, time, chat): after the last checkpoint
    (7, "The ferry is late, meet at the café instead", 1, "2024-03-13T07:30:00", 1),
    (8, "Rope and chalk for Friday are in my car", 2, "2024-03-13T09:00:00", 2),
]


def add_messages(conn: sqlite3.Connection, rows: list[tuple[int, str, int, str, int]]) -> None:
    for rowid, text, handle, iso, chat in rows:
        conn.execute(
            "INSERT INTO message(ROWID, guid, text, handle_id, date) VALUES(?, ?, ?, ?, ?)",
            (rowid, f"guid-{rowid}", text, handle, apple_ns(iso)),
        )
        conn.execute("INSERT INTO chat_message_join VALUES(?, ?, ?)", (chat, rowid, apple_ns(iso)))
    conn.commit()


def writer(path: Path) -> sqlite3.Connection:
    """A connection writing as Messages does between its checkpoints: to the WAL only."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    return conn


def build_chat_db_with_wal(path: Path, staging: Path) -> None:
    """`chat.db` and `chat.db-wal` as Messages leaves them: the older messages in the file,
    the newest only in the WAL, and no `-shm` (built in `staging`, copied while open)."""
    built = staging / "chat.db"
    build_chat_db(built)
    conn = writer(built)
    try:
        add_messages(conn, NEWEST)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, path)
        shutil.copyfile(f"{built}-wal", f"{path}-wal")
    finally:
        conn.close()


def disk_state(*paths: Path) -> list[tuple[str, int]]:
    return [(hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in paths]


def indexed_texts(settings: Settings) -> str:
    conn = db.connect(settings.db_path, create=False)
    try:
        return "\n".join(r[0] for r in conn.execute("SELECT content FROM chunks"))
    finally:
        conn.close()


@pytest.fixture
def wal_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    build_chat_db_with_wal(home / "Library" / "Messages" / "chat.db", tmp_path / "staging")
    return home


def test_messages_only_in_the_wal_are_found_and_the_originals_untouched(
    wal_home: Path, settings_factory: Callable[..., Settings]
) -> None:
    chat_db = wal_home / "Library" / "Messages" / "chat.db"
    wal = Path(f"{chat_db}-wal")
    assert b"meet at the caf" not in chat_db.read_bytes()  # only the WAL holds it
    before = disk_state(chat_db, wal)
    settings = settings_factory(wal_home, embedder__name="hashing")
    stats = reindex(settings=settings)
    assert not stats.errors, stats.errors
    texts = indexed_texts(settings)
    assert f"{RAJ}: The ferry is late, meet at the café instead" in texts
    assert f"{LENA}: Rope and chalk for Friday are in my car" in texts
    assert "Ferry at nine tomorrow?" in texts  # and what the file itself holds
    assert disk_state(chat_db, wal) == before
    assert sorted(p.name for p in chat_db.parent.iterdir()) == ["chat.db", "chat.db-wal"]
    assert not [p for p in settings.db_path.parent.iterdir() if "copy" in p.name]


def test_a_wal_only_append_is_read_by_the_next_reindex(
    wal_home: Path, settings_factory: Callable[..., Settings]
) -> None:
    chat_db = wal_home / "Library" / "Messages" / "chat.db"
    settings = settings_factory(wal_home, embedder__name="hashing")
    reindex(settings=settings)
    messages = writer(chat_db)  # Messages running: it appends to chat.db-wal only
    try:
        database = disk_state(chat_db)
        add_messages(messages, [(9, "Summit photos are up", 2, "2024-03-14T20:00:00", 2)])
        assert disk_state(chat_db) == database  # chat.db's bytes and mtime did not move
        stats = reindex(settings=settings)
        again = reindex(settings=settings)
    finally:
        messages.close()  # the last connection: it checkpoints the WAL into chat.db
    assert not stats.errors, stats.errors
    assert stats.files == 1
    assert f"{LENA}: Summit photos are up" in indexed_texts(settings)
    assert again.files == 0 and again.skipped == 1  # unchanged, the WAL's size and mtime too


def test_a_chat_db_larger_than_max_file_bytes_is_indexed(
    wal_home: Path, settings_factory: Callable[..., Settings]
) -> None:
    chat_db = wal_home / "Library" / "Messages" / "chat.db"
    settings = settings_factory(wal_home, embedder__name="hashing", max_file_bytes=4096)
    assert chat_db.stat().st_size > settings.max_file_bytes
    stats = reindex(settings=settings)
    assert not stats.errors, stats.errors
    assert "Rope and chalk for Friday" in indexed_texts(settings)


def test_a_chat_db_found_by_its_content_is_not_too_large(
    wal_home: Path, settings_factory: Callable[..., Settings]
) -> None:
    """Outside `Library/Messages` no route names it; its name and header do, and a database
    read from a copy has no size limit: it is found, and not counted too large."""
    backup = wal_home / "Backups" / "old-mac"
    backup.mkdir(parents=True)
    shutil.copyfile(wal_home / "Library" / "Messages" / "chat.db", backup / "chat.db")
    settings = settings_factory(wal_home, embedder__name="hashing", max_file_bytes=4096)
    assert (backup / "chat.db").stat().st_size > settings.max_file_bytes
    discovery = scan(settings)
    assert {(f.path, f.recognised) for f in discovery.found if f.path.parent == backup} == {
        (backup / "chat.db", True)
    }
    assert discovery.skipped.too_large == 0


def test_a_wal_that_does_not_read_with_its_database_leaves_the_database_read(
    wal_home: Path, tmp_path: Path, settings_factory: Callable[..., Settings]
) -> None:
    chat_db = wal_home / "Library" / "Messages" / "chat.db"
    other = sqlite3.connect(tmp_path / "other.db")  # another database's WAL, same page size
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("PRAGMA wal_autocheckpoint=0")
    other.execute("CREATE TABLE notes(text TEXT)")
    other.execute("INSERT INTO notes VALUES('not a message')")
    other.commit()
    shutil.copyfile(tmp_path / "other.db-wal", f"{chat_db}-wal")
    other.close()
    settings = settings_factory(wal_home, embedder__name="hashing")
    stats = reindex(settings=settings)
    assert "Ferry at nine tomorrow?" in indexed_texts(settings)
    assert "meet at the caf" not in indexed_texts(settings)
    [(path, message)] = stats.errors
    assert path == str(chat_db)
    assert "the newest messages (in chat.db-wal" in message and "Error" not in message


def test_a_checkpoint_restarting_the_wal_during_the_copy_makes_it_copy_again(
    wal_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_db = wal_home / "Library" / "Messages" / "chat.db"
    headers = [databases.wal_header(Path(f"{chat_db}-wal"))]
    copies: list[str] = []
    real_copy = shutil.copyfile
    messages = writer(chat_db)

    def copy_while_messages_writes(source: Path, target: Path) -> object:
        copies.append(Path(source).name)
        if len(copies) == 1:  # Messages checkpoints everything, then restarts its WAL
            messages.execute("PRAGMA wal_checkpoint(RESTART)")
            add_messages(messages, [(9, "Summit photos are up", 2, "2024-03-14T20:00:00", 2)])
            headers.append(databases.wal_header(Path(f"{chat_db}-wal")))
        return real_copy(source, target)

    monkeypatch.setattr(databases.shutil, "copyfile", copy_while_messages_writes)
    folder = tmp_path / "copy"
    folder.mkdir()
    try:
        copy = databases.copy_with_wal(chat_db, folder)
    finally:
        monkeypatch.undo()
        messages.close()
    assert headers[0] and headers[1] and headers[0] != headers[1]  # a new WAL generation
    assert copies == ["chat.db", "chat.db-wal"] * 2  # the first pair was not taken
    assert copy.wal is not None and databases.wal_header(copy.wal) == headers[1]
    texts = "\n".join(d.content for d in imessage.read_database(copy.database, chat_db).drafts)
    assert "Summit photos are up" in texts and "meet at the café" in texts


def test_a_database_that_never_holds_still_is_one_error(
    wal_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_db = wal_home / "Library" / "Messages" / "chat.db"
    headers = iter(range(100))
    monkeypatch.setattr(databases, "wal_header", lambda _: bytes([next(headers)]) * 32)
    with pytest.raises(ExtractError, match="kept changing while it was copied"):
        databases.copy_with_wal(chat_db, tmp_path)


def test_the_copy_is_private_and_removed(
    wal_home: Path, settings_factory: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Path, int]] = []

    def read(copy: Path, path: PurePath) -> Extraction:
        seen.append((copy.parent, stat.S_IMODE(copy.parent.stat().st_mode)))
        return imessage.read_database(copy, path)

    monkeypatch.setitem(databases.DATABASE_READERS, "imessage", read)
    settings = settings_factory(wal_home, embedder__name="hashing")
    assert not reindex(settings=settings).errors
    [(folder, mode)] = seen
    assert mode == 0o700 and folder.parent == settings.db_path.parent
    assert not folder.exists()

"""iMessage's `chat.db`: read from a copy in memory, times from Apple's epoch, text from
`attributedBody` when `text` is empty, reactions skipped, chats named, handles as mentions.

The database is built here with the tables and columns of Messages' own schema that the
reader uses (macOS 13's names and types).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError
from engine.extractors.imessage import apple_time, attributed_text, extract_imessage, recognise
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

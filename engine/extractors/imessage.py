"""iMessage: Messages' own database, `~/Library/Messages/chat.db` (SQLite), read as it lies.

The database is never opened where it lies: nothing is written to it or beside it, and a
lock Messages holds on it does not matter. A `chat.db` on disk is read by `read_database`
from a copy of it and of its `chat.db-wal` (`engine.index.databases` makes the copy), so
the newest messages, which Messages keeps in the WAL until it checkpoints them, are read
too; the rows are streamed from the copy, never held whole. A `chat.db` inside an archive
comes as bytes (`extract_imessage`) and is read from a copy in memory (`deserialize`, its
header switched out of WAL mode, as a lone file has no WAL).

A message's time is `message.date`, since 2001-01-01 UTC: nanoseconds on macOS 10.13 and
later, seconds before. Its text is `message.text`, or, on newer macOS where that is empty,
the string held in `attributedBody` (an NSAttributedString in Apple's typedstream format:
the bytes after the `NSString` class name, `+`, and a length). Tapbacks and other reactions
(`associated_message_type` ≠ 0) and messages without text are skipped. A chat is its
`display_name` (a named group), else its members' handles (a phone number or an address);
the sender is the handle, or "Me" for the user's own messages. Each handle is a mention with
its phone or email, so the people directory puts the contact's name on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePath
from typing import Any

import apsw

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chat_people import Sender, sender_mentions
from engine.extractors.chunking import Message, chat_drafts, to_epoch
from engine.extractors.sniffing import Recogniser, SiblingCheck

SQLITE_HEADER = b"SQLite format 3\x00"
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
NANOSECONDS = 10**9
ME = "Me"
_MESSAGES = """
SELECT m.ROWID, m.text, m.attributedBody, m.date, m.is_from_me, h.id, cmj.chat_id {reaction}
FROM message AS m
LEFT JOIN handle AS h ON h.ROWID = m.handle_id
LEFT JOIN chat_message_join AS cmj ON cmj.message_id = m.ROWID
"""
_CHATS = "SELECT ROWID, chat_identifier, display_name FROM chat"
_MEMBERS = (
    "SELECT chj.chat_id, h.id FROM chat_handle_join AS chj JOIN handle AS h "
    "ON h.ROWID = chj.handle_id ORDER BY chj.chat_id, h.id"
)
_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
_COLUMNS = "SELECT name FROM pragma_table_info('message')"
NEEDED = frozenset({"message", "handle", "chat", "chat_message_join", "chat_handle_join"})


def apple_time(value: int | float | None) -> str | None:
    """ISO time (UTC) of a `message.date`: nanoseconds since 2001 (or seconds, before 10.13)."""
    if not value:
        return None
    seconds = value / NANOSECONDS if abs(value) > 10**11 else float(value)
    try:
        moment = APPLE_EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return None
    return moment.isoformat().replace("+00:00", "Z")


def attributed_text(blob: bytes | None) -> str:
    """The plain text an `attributedBody` typedstream holds, or ""."""
    if not blob:
        return ""
    start = blob.find(b"NSString")
    if start < 0:
        return ""
    mark = blob.find(b"\x01+", start)  # the string's type tag follows the class
    if mark < 0:
        return ""
    at = mark + 2
    if at >= len(blob):
        return ""
    length, at = blob[at], at + 1
    if length == 0x81:  # a 2-byte length follows (little-endian)
        length, at = int.from_bytes(blob[at : at + 2], "little"), at + 2
    elif length == 0x82:  # a 4-byte length
        length, at = int.from_bytes(blob[at : at + 4], "little"), at + 4
    return blob[at : at + length].decode("utf-8", errors="replace").strip()


UNREADABLE = "the database is damaged or not an SQLite database, so its messages cannot be read"


def _checked(conn: apsw.Connection) -> apsw.Connection:
    """The connection, once its tables are Messages' (closed and ExtractError otherwise)."""
    try:
        tables = {row[0] for row in conn.execute(_TABLES)}
    except apsw.Error:
        conn.close()
        raise ExtractError(UNREADABLE) from None
    missing = NEEDED - tables
    if missing:
        conn.close()
        raise ExtractError(f"not an iMessage database: no {', '.join(sorted(missing))} table")
    return conn


def _open(data: bytes) -> apsw.Connection:
    if not data.startswith(SQLITE_HEADER):
        raise ExtractError("not an SQLite database")
    if data[18:20] == b"\x02\x02":  # WAL mode, as Messages keeps it: a copy has no WAL
        data = data[:18] + b"\x01\x01" + data[20:]
    conn = apsw.Connection(":memory:")
    try:
        conn.deserialize("main", data)
    except apsw.Error:
        conn.close()
        raise ExtractError(UNREADABLE) from None
    return _checked(conn)


def _open_copy(copy: Path) -> apsw.Connection:
    """A copy on disk, read-only; SQLite replays the `-wal` beside it (its `-shm` is made
    there): the copy's folder is the caller's, never the original's."""
    with copy.open("rb") as file:
        if not file.read(len(SQLITE_HEADER)).startswith(SQLITE_HEADER):
            raise ExtractError("not an SQLite database")
    try:
        conn = apsw.Connection(str(copy), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        raise ExtractError(UNREADABLE) from None
    return _checked(conn)


def _chat_names(conn: apsw.Connection) -> dict[int, str]:
    members: dict[int, list[str]] = {}
    for chat_id, handle in conn.execute(_MEMBERS):
        members.setdefault(chat_id, []).append(str(handle))
    names = {}
    for chat_id, identifier, display in conn.execute(_CHATS):
        shown = str(display or "").strip()
        names[chat_id] = shown or ", ".join(members.get(chat_id, ())) or str(identifier or "")
    return names


def _rows(conn: apsw.Connection) -> Iterator[tuple[Any, ...]]:
    """Every message row, streamed in the table's own order: an ORDER BY would make SQLite
    sort the whole table (its text and blobs) before the first row."""
    columns = {row[0] for row in conn.execute(_COLUMNS)}
    reaction = ", m.associated_message_type" if "associated_message_type" in columns else ""
    yield from conn.execute(_MESSAGES.format(reaction=reaction))


def _message(row: tuple[Any, ...], chats: dict[int, str], senders: list[Sender]) -> Message | None:
    rowid, text, body, date, from_me, handle, chat_id = row[:7]
    if len(row) > 7 and row[7]:  # a tapback or another reaction to a message
        return None
    words = str(text or "").replace("\ufffc", "").strip() or attributed_text(body)
    when = apple_time(date)
    if not words or when is None:
        return None
    sender = ME if from_me else str(handle or "unknown")
    if not from_me and handle:
        contact = str(handle)
        emails, phones = ((contact,), ()) if "@" in contact else ((), (contact,))
        handles = (f"imessage:{contact}",)
        senders.append(Sender(contact, when, emails=emails, handles=handles, phones=phones))
    conversation = chats.get(chat_id, "") or str(handle or "")
    epoch = to_epoch(when)
    return Message(when, sender, words, conversation, f"rowid:{rowid}", epoch)


def _read(conn: apsw.Connection) -> Extraction:
    """The chats of an open database, which it closes."""
    result = Extraction()
    senders: list[Sender] = []
    timed: list[tuple[Any, int, Message]] = []  # (message.date, ROWID, message)
    try:
        chats = _chat_names(conn)
        for row in _rows(conn):
            try:
                message = _message(row, chats, senders)
            except (TypeError, ValueError):
                result.problems.append(f"message {row[0]}: unusable")
                continue
            if message is not None:
                timed.append((row[3], row[0], message))
    except apsw.Error:
        raise ExtractError(UNREADABLE) from None
    finally:
        conn.close()
    timed.sort(key=lambda t: (t[0], t[1]))
    result.drafts = chat_drafts((t[2] for t in timed), "iMessage", prefix="")
    result.mentions = sender_mentions(senders)
    return result


def extract_imessage(data: bytes, path: PurePath) -> Extraction:
    """A `chat.db` handed over as bytes (one inside an archive): read from memory."""
    return _read(_open(data))


def read_database(copy: Path, path: PurePath) -> Extraction:
    """The `chat.db` at `path`, from its copy at `copy` (with the copy of its WAL beside)."""
    return _read(_open_copy(copy))


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """Messages' `chat.db`: that name, and an SQLite database."""
    return name.lower() == "chat.db" and head.startswith(SQLITE_HEADER)


READER = FileReader(extract_imessage, read_copy=read_database)
RECOGNISER = Recogniser(
    ("chat.db",),
    recognise,
    about="Messages' `chat.db` (`~/Library/Messages/`): that name, and an SQLite database",
)

"""Messenger and Instagram DMs: Meta's "Download your information" export in JSON, one thread
per folder, `messages/inbox/<thread>/message_1.json` (then `message_2.json`, … for long
threads): `participants[{name}]`, `messages[{sender_name, timestamp_ms, content, photos,
share, reactions}]` newest first, `title`.

Meta writes text as UTF-8 bytes each escaped as a code point (`\\u00c3\\u00a9` for `é`), so
json reads "Ã©". Every string is repaired with the latin-1 round trip
(`s.encode("latin-1").decode("utf-8")`), which is exact for this fault; a string that does
not survive it (a character above U+00FF, or bytes that are no UTF-8) was written right and
is kept as it is, so an export written correctly reads the same. Chosen over ftfy: the
fault is known and whole, and the round trip needs no dependency and guesses nothing.

One reader for both types; Instagram's threads are told apart by their path (the default
routes of `instagram`), Messenger's are recognised anywhere by their content.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from engine.extractors.base import ExtractError, Extraction, FamilyReader
from engine.extractors.chat_people import ChatReader, Sender, sender_mentions
from engine.extractors.chunking import (
    Message,
    chat_drafts,
    decode,
    iso_from_epoch,
    load_json,
    numbered_messages,
)
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_text, json_keys
from engine.sources import SourceType

# Notices Meta writes as if someone said them.
_NOTICES = ("reacted ", "liked a message", "sent an attachment.", "unsent a message")


def repaired(text: str) -> str:
    """Meta's mis-encoded UTF-8 made right; a string written right is kept as it is."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def _files(raw: dict[str, Any]) -> list[str]:
    names = []
    for key in ("files", "audio_files", "videos"):
        for item in raw.get(key) or []:
            if isinstance(item, dict) and item.get("uri"):
                names.append(f"[file: {PurePath(str(item['uri'])).name}]")
    share = raw.get("share")
    if isinstance(share, dict) and share.get("link"):
        names.append(str(share["link"]))
    return names


def _text(raw: dict[str, Any]) -> str:
    content = repaired(str(raw.get("content") or "")).strip()
    if content.lower().startswith(_NOTICES) and not raw.get("share"):
        return ""
    return " ".join([content, *_files(raw)]).strip()


def _title(export: dict[str, Any], names: list[str]) -> str:
    title = repaired(str(export.get("title") or "")).strip()
    return title or ", ".join(names) or "Conversation"


class _Reader(ChatReader):
    """One export being read (`ChatReader`): each message, and who sent it."""

    def message(self, number: int, raw: Any) -> Message | None:
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        stamp = raw["timestamp_ms"]
        if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
            raise TypeError("timestamp_ms is not a number")
        when = iso_from_epoch(stamp / 1000)
        sender = repaired(str(raw.get("sender_name") or "")).strip()
        text = _text(raw)
        if not text or raw.get("is_unsent"):
            return None
        self.senders.append(Sender(sender, when))
        line = self.lines.find(f'"timestamp_ms": {stamp}')
        return Message(
            when=when,
            sender=sender,
            text=text,
            conversation=self.conversation,
            location=f"line:{line or number}",
            epoch=stamp / 1000,
        )


def extract_meta_messages(source: SourceType, data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    export = load_json(text)
    if not isinstance(export, dict) or not isinstance(export.get("messages"), list):
        raise ExtractError(f"not a {source.label} thread: no `messages` list")
    names = [
        repaired(str(p.get("name") or ""))
        for p in export.get("participants") or []
        if isinstance(p, dict)
    ]
    result = Extraction()
    reader = _Reader(text, _title(export, names))
    numbered = list(enumerate(export["messages"], start=1))
    messages = numbered_messages(numbered, reader.message, result, "unusable message", "message")
    result.drafts = chat_drafts(messages, source.label, prefix="")
    result.mentions = sender_mentions(sorted(reader.senders, key=lambda s: s.when))
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A `message_N.json` opening with `participants` and `messages` whose messages have a
    `sender_name` and `timestamp_ms`."""
    text = head_text(head).lstrip()
    wanted = {"participants", "messages", "sender_name", "timestamp_ms"}
    return name.startswith("message_") and text.startswith("{") and wanted <= json_keys(text)


READER = FamilyReader(extract_meta_messages)
RECOGNISER = Recogniser(
    (".json",),
    recognise,
    about="`message_N.json` with `participants`, and `messages` of `sender_name` and "
    "`timestamp_ms` (Meta's download)",
)

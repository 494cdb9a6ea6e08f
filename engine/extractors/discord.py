"""Discord: a channel as DiscordChatExporter writes it in JSON (`--format Json`), one file per
channel or DM: `guild`, `channel`, `messages[{id, type, timestamp, content, author{id, name,
nickname}, attachments, reference}]`.

Messages become chat windows as every chat reader's do (`chunking.chat_drafts`), titled
`#channel · day` in a server and `Name · day` in a DM (the guild "Direct Messages"). The
sender is the author's server nickname, else their name; every author is a mention with the
handle `discord:<id>` and their other name as an alias. Only people's messages are read
(`Default`, `Reply`); joins, pins, calls and other notices are skipped.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chat_people import ChatReader, Sender, sender_mentions
from engine.extractors.chunking import (
    Message,
    chat_drafts,
    decode,
    load_json,
    numbered_messages,
    parse_date,
    to_epoch,
)
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_text, json_keys

SPOKEN = frozenset({"Default", "Reply", "ThreadStarterMessage"})
DIRECT = "Direct Messages"  # the guild name DiscordChatExporter gives DMs and group DMs


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(author: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """(shown name, other names): the nickname first, then the account name."""
    name = str(author.get("name") or "").strip()
    nickname = str(author.get("nickname") or "").strip()
    shown = nickname or name
    return shown, tuple(n for n in dict.fromkeys((name, nickname)) if n and n != shown)


def _text(raw: dict[str, Any]) -> str:
    text = str(raw.get("content") or "").strip()
    files = [a.get("fileName") for a in raw.get("attachments") or [] if isinstance(a, dict)]
    named = " ".join(f"[file: {f}]" for f in files if f)
    return f"{text} {named}".strip() if named else text


def _conversation(data: dict[str, Any]) -> str:
    guild = _object(data.get("guild"))
    channel = _object(data.get("channel"))
    name = str(channel.get("name") or "").strip()
    if str(guild.get("name") or "") == DIRECT:
        return name or "Direct message"
    return f"#{name}" if name else str(guild.get("name") or "")


class _Reader(ChatReader):
    """One export being read (`ChatReader`): each message, and who sent it."""

    def message(self, number: int, raw: Any) -> Message | None:
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        if str(raw.get("type") or "Default") not in SPOKEN:
            return None
        when = parse_date(raw["timestamp"])
        if when is None:
            raise ValueError("no timestamp")
        author = _object(raw.get("author"))
        shown, aliases = _names(author)
        text = _text(raw)
        if not text:
            return None
        handle = (f"discord:{author['id']}",) if author.get("id") else ()
        self.senders.append(Sender(shown, when, aliases, handles=handle))
        line = self.lines.find(f'"id": "{raw.get("id")}"') if raw.get("id") else None
        return Message(
            when=when,
            sender=shown,
            text=text,
            conversation=self.conversation,
            location=f"line:{line or number}",
            epoch=to_epoch(when),
        )


def extract_discord(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    export = load_json(text)
    if not isinstance(export, dict) or not isinstance(export.get("messages"), list):
        raise ExtractError("not a DiscordChatExporter JSON export: no `messages` list")
    result = Extraction()
    reader = _Reader(text, _conversation(export))
    messages = numbered_messages(
        enumerate(export["messages"], start=1),
        reader.message,
        result,
        "unusable message",
        "message",
    )
    result.drafts = chat_drafts(messages, "Discord", prefix="")
    guild = _object(export.get("guild"))
    server = str(guild.get("name") or "")
    result.mentions = sender_mentions(reader.senders, "" if server == DIRECT else server)
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A `.json` opening with DiscordChatExporter's `guild` and `channel` objects."""
    text = head_text(head).lstrip()
    return text.startswith("{") and {"guild", "channel"} <= json_keys(text[:1024])


READER = FileReader(extract_discord)
RECOGNISER = Recogniser(
    (".json",),
    recognise,
    about="DiscordChatExporter's JSON: an object opening with `guild` and `channel`",
)

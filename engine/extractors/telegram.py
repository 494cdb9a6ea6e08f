"""Telegram: the synced JSONL log and Telegram Desktop's JSON export.

Synced JSONL: `{"date","chat","from","text"}` a line (optional `reply_to`, `forwarded_from`).
Desktop export: `result.json` of one chat (`{"name","type","messages"}`) or of the whole
account (`{"chats": {"list": [chat, …]}}`). A message's `text` is a string or a list of
strings and entity objects (`{"type": "text_link", "text": "label", "href": "url"}`).
Service messages (joins, calls, pins) are skipped; replies and forwards are marked.
"""

from __future__ import annotations

import re
from pathlib import PurePath, PurePosixPath
from typing import Any

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import (
    LineFinder,
    Message,
    chat_drafts,
    decode,
    json_array_items,
    jsonl_records,
    load_json,
    numbered_messages,
    parse_date,
    to_epoch,
)
from engine.extractors.mentions import spoken
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_text, json_keys
from engine.records import Mention

QUOTE_CHARS = 60
UNNAMED_MEDIA = ("sticker", "animation")  # their files are named sticker.webp, giphy.mp4
NOT_EXPORTED = "(File "  # "(File not included. Change data exporting settings to download.)"
# A full export's chat list: `"chats": {"about": "…", "list": [`, for a file cut off inside it.
_CHATS_LIST = re.compile(
    r'"chats"\s*:\s*\{\s*(?:"about"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*)?"list"\s*:\s*(?=\[)'
)


def render_text(text: Any) -> str:
    """Telegram text (a string, or a list of strings and entities) as plain text."""
    if isinstance(text, str):
        return text.strip()
    if not isinstance(text, list):
        return ""
    parts = []
    for part in text:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            label = str(part.get("text") or "")
            href = part.get("href")
            parts.append(f"{label} ({href})" if href and href != label else label)
    return "".join(parts).strip()


def _media_note(message: dict[str, Any]) -> str:
    """Files keep their name (searchable); bare photos and stickers are not worth a line.
    Without `file_name` the name is the last part of the exported `file` path."""
    file = message.get("file")
    if not file or message.get("media_type") in UNNAMED_MEDIA:
        return ""
    name = message.get("file_name") or message.get("title")
    if not name and isinstance(file, str) and not file.startswith(NOT_EXPORTED):
        name = PurePosixPath(file.replace("\\", "/")).name
    return f"[file: {name}]" if name else ""


def _marked(text: str, message: dict[str, Any], replied: dict[int, tuple[str, str]]) -> str:
    forwarded = message.get("forwarded_from")
    if forwarded:
        text = f"(forwarded from {forwarded}) {text}"
    reply_to = message.get("reply_to_message_id") or message.get("reply_to")
    if reply_to is not None:
        target = replied.get(reply_to) if isinstance(reply_to, int) else None
        if target:
            quote = target[1][:QUOTE_CHARS] + ("…" if len(target[1]) > QUOTE_CHARS else "")
            text = f'↳ (reply to {target[0]}: "{quote}") {text}'
        else:
            text = f"↳ {text}"
    return text


def _export_message(
    item: Any, chat: str, replied: dict[int, tuple[str, str]], lines: LineFinder
) -> Message | None:
    if not isinstance(item, dict):
        raise ValueError("not a message object")
    line = lines.find(f'"id": {item.get("id")},') if "id" in item else None
    if item.get("type", "message") != "message":
        return None
    when = parse_date(item.get("date_unixtime") or item["date"])
    if when is None:
        raise ValueError("no date")
    sender = str(item.get("from") or item.get("actor") or "unknown")
    text = " ".join(p for p in (render_text(item.get("text")), _media_note(item)) if p)
    if not text:
        return None
    if isinstance(item.get("id"), int):
        replied[item["id"]] = (sender, text)
    return Message(
        when=when,
        sender=sender,
        text=_marked(text, item, replied),
        conversation=chat,
        location=f"line:{line}" if line else f"id:{item.get('id')}",
        epoch=to_epoch(when),
        extra={"id": item.get("id"), "from_id": str(item.get("from_id") or "")},
    )


def _chats(document: Any) -> list[dict[str, Any]]:
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return [document]
    chats = document.get("chats") if isinstance(document, dict) else None
    if isinstance(chats, dict) and isinstance(chats.get("list"), list):
        return [c for c in chats["list"] if isinstance(c, dict)]
    raise ExtractError("not a Telegram export: no `messages` and no `chats.list`")


def _chat_name(chat: dict[str, Any]) -> str:
    if chat.get("name"):
        return str(chat["name"])
    return "Saved Messages" if chat.get("type") == "saved_messages" else f"chat {chat.get('id')}"


def _chat_messages(chat: dict[str, Any], lines: LineFinder, result: Extraction) -> list[Message]:
    name = _chat_name(chat)
    raw = chat.get("messages") or []
    if not isinstance(raw, list):
        result.problems.append(f"{name}: `messages` is not a list")
        return []
    replied: dict[int, tuple[str, str]] = {}  # filled as the chat is read, for quoting replies
    return numbered_messages(
        enumerate(raw, start=1),
        lambda _, item: _export_message(item, name, replied, lines),
        result,
        "not a usable message",
        where=f"{name}, message",
    )


def _document_chats(text: str, result: Extraction) -> list[dict[str, Any]]:
    """The export's chats; of a full export cut off or broken in the middle, the complete
    chats before the damage (the damage is a problem)."""
    try:
        document = load_json(text)
    except ExtractError as damage:
        found = _CHATS_LIST.search(text)
        try:
            items = json_array_items(text, result, found.end()) if found else None
        except ExtractError:
            items = None  # even the first chat is broken
        if not items:
            raise damage from None
        chats = [chat for _, chat in items if isinstance(chat, dict)]
        result.problems.append(f"{damage}; the {len(chats)} complete chats before it are kept")
        return chats
    return _chats(document)


def _extract_export(data: bytes) -> Extraction:
    text = decode(data)
    result = Extraction()
    lines = LineFinder(text)
    messages: list[Message] = []
    for chat in _document_chats(text, result):
        messages += _chat_messages(chat, lines, result)
    result.drafts = chat_drafts(messages, "telegram", prefix="")
    result.mentions = [_mention(m) for m in messages]
    return result


def _mention(message: Message) -> Mention:
    """A message's author: the name it shows and, in an export, the id `from_id`."""
    user = str(message.extra.get("from_id") or "")
    name = "" if message.sender == "unknown" else message.sender
    return spoken(name, message.when, handles=(f"telegram:{user}",) if user else ())


def _jsonl_message(number: int, record: dict[str, Any], default_chat: str) -> Message | None:
    when = parse_date(record.get("date"))
    if when is None:
        raise ValueError("no date")
    text = render_text(record.get("text"))
    if not text:
        return None
    return Message(
        when=when,
        sender=str(record.get("from") or "unknown"),
        text=_marked(text, record, {}),
        conversation=str(record.get("chat") or default_chat),
        location=f"line:{number}",
        epoch=to_epoch(when),
    )


def _extract_jsonl(data: bytes, path: PurePath) -> Extraction:
    result = Extraction()
    messages = numbered_messages(
        jsonl_records(decode(data), result),
        lambda number, record: _jsonl_message(number, record, path.stem),
        result,
        "message without a usable date",
        errors=(ValueError,),
    )
    result.drafts = chat_drafts(messages, "telegram", prefix="")
    result.mentions = [_mention(m) for m in messages]
    return result


def extract_telegram(data: bytes, path: PurePath) -> Extraction:
    if path.suffix.lower() == ".json":
        return _extract_export(data)
    return _extract_jsonl(data, path)


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """Telegram Desktop's `result.json`: a whole account's export (its `about` names
    Telegram, or `chats` shows near the top) or one chat's (`name` and `messages`)."""
    text = head_text(head).lstrip()
    if name.lower() != "result.json" or not text.startswith("{"):
        return False
    keys = json_keys(text)
    return (
        "chats" in keys or ("about" in keys and "Telegram" in text) or {"name", "messages"} <= keys
    )


READER = FileReader(extract_telegram)
RECOGNISER = Recogniser(
    ("result.json",),
    recognise,
    about="Telegram Desktop's `result.json`: `chats`, or a chat's `name` and `messages`",
)

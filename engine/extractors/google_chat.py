"""Google Chat: Google Takeout's `Google Chat/Groups/<DM or Space id>/messages.json`:
`messages[{creator{name, email, user_type}, created_date, text, topic_id, message_id,
attached_files}]`, with `group_info.json` beside it (`name` of a space, `members[{name,
email}]`).

`created_date` is English text in UTC ("Wednesday, March 13, 2024 at 2:05:31 PM UTC"; newer
exports put a narrow no-break space before PM). Messages become chat windows titled by the
space's name, or a DM's members; each creator is a mention with their email.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import PurePath
from typing import Any

from engine.extractors.base import NO_SIBLINGS, ExtractError, Extraction, SiblingReader, Siblings
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

GROUP_INFO = "group_info.json"
SIBLINGS = (GROUP_INFO,)
_SPACES = re.compile(r"[\s\u202f\u00a0]+")
_FORMATS = ("%A, %B %d, %Y at %I:%M:%S %p", "%A, %B %d, %Y at %H:%M:%S")


def created(text: str) -> str | None:
    """ISO text of a `created_date` (UTC), or None when it is no date."""
    cleaned = _SPACES.sub(" ", text).strip()
    cleaned = re.sub(r" (UTC|GMT)$", "", cleaned)
    for shape in _FORMATS:
        try:
            return datetime.strptime(cleaned, shape).isoformat()
        except ValueError:
            continue
    return parse_date(text)


def group_name(siblings: Siblings) -> str:
    """The space's name from `group_info.json`, else its members' names; "" without one."""
    raw = siblings.get(GROUP_INFO)
    if raw is None:
        return ""
    try:
        info = json.loads(decode(raw))
    except (ValueError, ExtractError):
        return ""
    if not isinstance(info, dict):
        return ""
    members = [m.get("name") for m in info.get("members") or [] if isinstance(m, dict)]
    return str(info.get("name") or "").strip() or ", ".join(str(m) for m in members if m)


class _Reader(ChatReader):
    """One export being read (`ChatReader`): each message, and who sent it."""

    def message(self, number: int, raw: Any) -> Message | None:
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        when = created(str(raw["created_date"]))
        if when is None:
            raise ValueError("no date")
        creator: dict[str, Any] = raw["creator"] if isinstance(raw.get("creator"), dict) else {}
        name = str(creator.get("name") or "").strip()
        email = str(creator.get("email") or "").strip()
        files = [
            f.get("original_name") or f.get("export_name")
            for f in raw.get("attached_files") or []
            if isinstance(f, dict)
        ]
        text = " ".join([str(raw.get("text") or "").strip()] + [f"[file: {f}]" for f in files if f])
        if not text.strip():
            return None
        self.senders.append(Sender(name or email, when, emails=(email,) if email else ()))
        found = (
            self.lines.find(f'"message_id": "{raw["message_id"]}"') if "message_id" in raw else None
        )
        return Message(
            when=when,
            sender=name or email,
            text=text.strip(),
            conversation=self.conversation,
            location=f"line:{found or number}",
            epoch=to_epoch(when),
        )


def extract_google_chat(
    data: bytes, path: PurePath, siblings: Siblings = NO_SIBLINGS, /
) -> Extraction:
    text = decode(data)
    export = load_json(text)
    if not isinstance(export, dict) or not isinstance(export.get("messages"), list):
        raise ExtractError("not a Google Chat messages.json: no `messages` list")
    conversation = group_name(siblings) or path.parent.name or "Google Chat"
    result = Extraction()
    reader = _Reader(text, conversation)
    numbered = enumerate(export["messages"], start=1)
    messages = numbered_messages(numbered, reader.message, result, "unusable message", "message")
    result.drafts = chat_drafts(messages, "Google Chat", prefix="")
    result.mentions = sender_mentions(reader.senders)
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """`messages.json` whose messages have a `creator` and a `created_date`."""
    text = head_text(head).lstrip()
    keys = json_keys(text)
    wanted = {"messages", "creator", "created_date"}
    return name == "messages.json" and text.startswith("{") and wanted <= keys


READER = SiblingReader(extract_google_chat)
RECOGNISER = Recogniser(
    (".json",),
    recognise,
    about="`messages.json` whose messages have a `creator` and a `created_date` (Takeout)",
)

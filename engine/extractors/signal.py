"""Signal: signal-cli `receive --output=json` lines, one envelope each.

`{"envelope": {"sourceName", "sourceNumber", "timestamp" (ms), "dataMessage": {"message",
"groupInfo": {"groupName"}, "quote": {"author", "text"}, "attachments": […]}}}`. Messages
this account sent from another device arrive as `syncMessage.sentMessage`. Receipts, typing
notices and reactions carry no text and are skipped without complaint.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath
from typing import Any

from engine.extractors import Extraction, register
from engine.extractors.chunking import (
    Message,
    chat_drafts,
    decode,
    iso_from_epoch,
    jsonl_records,
    numbered_messages,
)

QUOTE_CHARS = 60
SELF = "Me"


def _sender(envelope: dict[str, Any]) -> str:
    for key in ("sourceName", "sourceNumber", "source", "sourceUuid"):
        if envelope.get(key):
            return str(envelope[key])
    return "unknown"


def _conversation(body: dict[str, Any], fallback: str) -> str:
    group = body.get("groupInfo") or body.get("groupV2") or {}
    if isinstance(group, dict) and (group.get("groupName") or group.get("groupId")):
        return str(group.get("groupName") or group.get("groupId"))
    return fallback


def _text(body: dict[str, Any], names: dict[str, str], account: str) -> str:
    text = str(body.get("message") or "").strip()
    files = [
        str(a.get("filename"))
        for a in body.get("attachments") or []
        if isinstance(a, dict) and a.get("filename")
    ]
    text = " ".join([text, *(f"[file: {name}]" for name in files)]).strip()
    quote = body.get("quote")
    if text and isinstance(quote, dict):
        author = str(quote.get("authorNumber") or quote.get("author") or "?")
        author = SELF if author == account else names.get(author, author)
        said = str(quote.get("text") or "")
        said = said[:QUOTE_CHARS] + ("…" if len(said) > QUOTE_CHARS else "")
        text = f'↳ (reply to {author}: "{said}") {text}'
    return text


def _message(number: int, record: dict[str, Any], names: dict[str, str]) -> Message | None:
    envelope = record.get("envelope")
    if not isinstance(envelope, dict):
        raise ValueError("no envelope")
    sync = envelope.get("syncMessage")
    sent = sync.get("sentMessage") if isinstance(sync, dict) else None
    if isinstance(sent, dict):
        body, sender = sent, SELF
        partner = str(
            sent.get("destinationNumber")
            or sent.get("destination")
            or sent.get("destinationName")
            or "unknown"
        )
    elif isinstance(envelope.get("dataMessage"), dict):
        body, sender = envelope["dataMessage"], _sender(envelope)
        partner = str(envelope.get("sourceNumber") or envelope.get("source") or sender)
    else:
        return None  # receipt, typing, call or other notice
    text = _text(body, names, str(record.get("account") or ""))
    if not text:
        return None
    ms = float(body.get("timestamp") or envelope["timestamp"])
    return Message(
        when=iso_from_epoch(ms / 1000.0),
        sender=sender,
        text=text,
        conversation=_conversation(body, partner),
        location=f"line:{number}",
        epoch=ms / 1000.0,
    )


def _contact_names(records: list[dict[str, Any]]) -> dict[str, str]:
    """Phone number → profile name, so a 1:1 chat is one conversation whoever wrote."""
    names: dict[str, str] = {}
    for record in records:
        envelope = record.get("envelope")
        if isinstance(envelope, dict) and envelope.get("sourceName"):
            for key in ("sourceNumber", "source"):
                if envelope.get(key):
                    names[str(envelope[key])] = str(envelope["sourceName"])
    return names


@register("signal")
def extract_signal(data: bytes, path: PurePath) -> Extraction:
    result = Extraction()
    numbered = list(jsonl_records(decode(data), result))
    names = _contact_names([record for _, record in numbered])
    messages = numbered_messages(
        numbered,
        lambda number, record: _message(number, record, names),
        result,
        "envelope without a usable timestamp",
    )
    result.drafts = chat_drafts(
        [replace(m, conversation=names.get(m.conversation, m.conversation)) for m in messages],
        "signal",
        prefix="",
    )
    return result

"""Signal: signal-cli `receive --output=json` lines, one envelope each.

`{"envelope": {"sourceName", "sourceNumber", "timestamp" (ms), "dataMessage": {"message",
"groupInfo": {"groupId", "groupName"}, "quote": {"author", "text"}, "mentions": […],
"attachments": […]}}}`. Messages this account sent from another device arrive as
`syncMessage.sentMessage`. Receipts, typing notices and reactions carry no text and are
skipped without complaint. Older signal-cli writes some lines' `groupInfo` with only the
`groupId`: the name comes from the file's other lines of that group.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePath
from typing import Any

from engine.extractors.base import Extraction, FileReader
from engine.extractors.chunking import (
    Message,
    chat_drafts,
    decode,
    iso_from_epoch,
    jsonl_records,
    numbered_messages,
)
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines, head_text
from engine.records import Mention

QUOTE_CHARS = 60
SELF = "Me"
MENTION_MARK = "\ufffc"  # where a mention sits in `message`; `mentions` says whom
_SPAN = ("start", "length")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _sender(envelope: dict[str, Any]) -> str:
    for key in ("sourceName", "sourceNumber", "source", "sourceUuid"):
        if envelope.get(key):
            return str(envelope[key])
    return "unknown"


def _group(body: dict[str, Any]) -> dict[str, Any]:
    group = body.get("groupInfo") or body.get("groupV2") or {}
    return group if isinstance(group, dict) else {}


def _conversation(body: dict[str, Any], fallback: str, groups: dict[str, str]) -> str:
    """The group's name, also where this line's `groupInfo` (older shape) has only the id."""
    group = _group(body)
    if group.get("groupName"):
        return str(group["groupName"])
    if group.get("groupId"):
        return groups.get(str(group["groupId"]), str(group["groupId"]))
    return fallback


def group_names(records: list[dict[str, Any]]) -> dict[str, str]:
    """groupId → name from every line of the file that names its group."""
    names: dict[str, str] = {}
    for record in records:
        envelope = record.get("envelope")
        envelope = envelope if isinstance(envelope, dict) else {}
        sync = envelope.get("syncMessage")
        sent = sync.get("sentMessage") if isinstance(sync, dict) else None
        for body in (envelope.get("dataMessage"), sent):
            group = _group(body) if isinstance(body, dict) else {}
            if group.get("groupId") and group.get("groupName"):
                names[str(group["groupId"])] = str(group["groupName"])
    return names


def with_mentions(text: str, mentions: Any, names: dict[str, str]) -> str:
    """Each mention's placeholder (U+FFFC) as `@Name`. Signal counts start and length in
    UTF-16 code units, as Java does, so the text is spliced in those units."""
    units = text.encode("utf-16-le")
    spans = []
    for mention in mentions if isinstance(mentions, list) else []:
        start, length = (mention.get(k) if isinstance(mention, dict) else None for k in _SPAN)
        if type(start) is int and type(length) is int and 0 <= start <= start + length:
            spans.append((start * 2, (start + length) * 2, mention))
    pieces, done = [], 0
    for start, stop, mention in sorted(spans, key=lambda span: span[:2]):
        if start >= done and stop <= len(units):  # overlapping or out-of-range: left out
            pieces += [units[done:start], f"@{_mentioned(mention, names)}".encode("utf-16-le")]
            done = stop
    pieces.append(units[done:])
    return b"".join(pieces).decode("utf-16-le", errors="replace").replace(MENTION_MARK, "")


def _mentioned(mention: dict[str, Any], names: dict[str, str]) -> str:
    keys = [str(mention[k]) for k in ("name", "number", "uuid") if mention.get(k)]
    return next((names[k] for k in keys if k in names), keys[0] if keys else "someone")


def _text(body: dict[str, Any], names: dict[str, str], account: str) -> str:
    text = with_mentions(str(body.get("message") or ""), body.get("mentions"), names).strip()
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
        said = with_mentions(str(quote.get("text") or ""), quote.get("mentions"), names)
        said = said[:QUOTE_CHARS] + ("…" if len(said) > QUOTE_CHARS else "")
        text = f'↳ (reply to {author}: "{said}") {text}'
    return text


def _message(
    number: int, record: dict[str, Any], names: dict[str, str], groups: dict[str, str]
) -> Message | None:
    envelope = record.get("envelope")
    if not isinstance(envelope, dict):
        raise ValueError("no envelope")
    sync = envelope.get("syncMessage")
    sent = sync.get("sentMessage") if isinstance(sync, dict) else None
    account = str(record.get("account") or "")
    if isinstance(sent, dict):
        body, sender = sent, SELF
        partner = str(
            sent.get("destinationNumber")
            or sent.get("destination")
            or sent.get("destinationName")
            or "unknown"
        )
        who = _person(sent, "destination", names, "recipient")
    elif isinstance(envelope.get("dataMessage"), dict):
        body, sender = envelope["dataMessage"], _sender(envelope)
        partner = str(envelope.get("sourceNumber") or envelope.get("source") or sender)
        who = _person(envelope, "source", names, "author")
    else:
        return None  # receipt, typing, call or other notice
    text = _text(body, names, account)
    if not text:
        return None
    if who is not None and account and account in who.phones:
        who = None  # this account's own message from another of its devices
    ms = float(body.get("timestamp") or envelope["timestamp"])
    return Message(
        when=iso_from_epoch(ms / 1000.0),
        sender=sender,
        text=text,
        conversation=_conversation(body, partner, groups),
        location=f"line:{number}",
        epoch=ms / 1000.0,
        extra={"mention": who},
    )


def _person(
    fields: dict[str, Any], prefix: str, names: dict[str, str], role: str
) -> Mention | None:
    """Who an envelope's source (or a sent message's destination) is: the profile name,
    the number, the handle `signal:<uuid>`; None when it says nothing of them."""
    raw = str(fields.get(prefix) or "")
    number = str(fields.get(f"{prefix}Number") or (raw if raw.startswith("+") else ""))
    uuid = str(fields.get(f"{prefix}Uuid") or (raw if _UUID.fullmatch(raw) else ""))
    name = str(fields.get(f"{prefix}Name") or names.get(number) or names.get(uuid) or "")
    if not (name or number or uuid):
        return None
    return Mention(
        name=name,
        phones=(number,) if number else (),
        handles=(f"signal:{uuid}",) if uuid else (),
        role=role,
    )


def _contact_names(records: list[dict[str, Any]]) -> dict[str, str]:
    """Phone number → profile name, so a 1:1 chat is one conversation whoever wrote."""
    names: dict[str, str] = {}
    for record in records:
        envelope = record.get("envelope")
        if isinstance(envelope, dict) and envelope.get("sourceName"):
            for key in ("sourceNumber", "source", "sourceUuid"):
                if envelope.get(key):
                    names[str(envelope[key])] = str(envelope["sourceName"])
    return names


def extract_signal(data: bytes, path: PurePath) -> Extraction:
    result = Extraction()
    numbered = list(jsonl_records(decode(data), result))
    records = [record for _, record in numbered]
    names, groups = _contact_names(records), group_names(records)
    messages = numbered_messages(
        numbered,
        lambda number, record: _message(number, record, names, groups),
        result,
        "envelope without a usable timestamp",
    )
    result.drafts = chat_drafts(
        [replace(m, conversation=names.get(m.conversation, m.conversation)) for m in messages],
        "signal",
        prefix="",
    )
    result.mentions = [
        replace(m.extra["mention"], first=m.when, last=m.when)
        for m in messages
        if m.extra.get("mention") is not None
    ]
    return result


_ENVELOPE = re.compile(r'^\s*\{.*"envelope"\s*:\s*\{')


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """signal-cli's JSON lines: the first line is an object holding an `envelope` object."""
    lines = head_lines(head) or head_text(head).splitlines()
    return bool(lines) and _ENVELOPE.match(lines[0]) is not None


READER = FileReader(extract_signal)
RECOGNISER = Recogniser(
    (".jsonl", ".json", ".ndjson"),
    recognise,
    about="signal-cli JSON lines: a first line holding an `envelope` object",
)

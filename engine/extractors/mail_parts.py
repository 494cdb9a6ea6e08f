"""A mail message's parts: which one is its body, and the names of its attachments.

The message comes from `email` with `policy.compat32`; its parts are walked here rather than
with `EmailMessage.get_body`, which parses each part's headers with `policy.default`'s header
classes (see `mail_headers` for why those are avoided).
"""

from __future__ import annotations

from collections.abc import Iterator
from email.message import Message

from engine.extractors.mail_headers import decode_words, raw_text, unfold

MIME_MAX_DEPTH = 32  # parts nested deeper are not searched for a body or attachments


def leaf_parts(part: Message, depth: int = 0) -> Iterator[Message]:
    """The message's leaf parts in order, not looking inside attached messages."""
    if not part.is_multipart():
        yield part
    elif depth < MIME_MAX_DEPTH and part.get_content_type() != "message/rfc822":
        for child in part.get_payload():
            if isinstance(child, Message):
                yield from leaf_parts(child, depth + 1)


def body_part(message: Message) -> Message | None:
    """The first text/plain part that is not an attachment, else the first such text/html."""
    texts = [
        part
        for part in leaf_parts(message)
        if part.get_content_maintype() == "text" and part.get_content_disposition() != "attachment"
    ]
    for wanted in ("text/plain", "text/html"):
        found = next((p for p in texts if p.get_content_type() == wanted), None)
        if found is not None:
            return found
    return None


def attachment_names(message: Message, body: Message | None, declared: str | None) -> list[str]:
    names = (filename(p, declared) for p in leaf_parts(message) if p is not body)
    return [name for name in names if name]


def filename(part: Message, declared: str | None) -> str:
    """A part's file name: raw 8-bit bytes, RFC 2231 and RFC 2047 read (compat32's own
    `get_filename` turns raw bytes into U+FFFD), so the fields are re-made from raw text."""
    fields = Message()
    for name, value in part.raw_items():
        if name.lower() in ("content-disposition", "content-type"):
            fields[name] = raw_text(unfold(value), declared)
    found = fields.get_filename()
    return " ".join(decode_words(found, declared).split()) if found else ""

"""Email (source type `email_catalog`): catalog JSONL, mbox and .eml, one chunk per message.

Parsing is the standard library's `email` package (MIME structure, transfer encodings) with
`policy.compat32`, which never interprets a header; headers and bodies are decoded by
`engine.extractors.mail_headers` as mail readers do (charset supersets, raw 8-bit bytes). HTML
bodies become text through BeautifulSoup with the stdlib `html.parser` (MIT-licensed, pure
Python, no lxml to bundle). Quoted replies and signatures are dropped so a thread does not
repeat itself in every chunk; attachment names are kept in the metadata and the text.
"""

from __future__ import annotations

import re
from email import policy
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import jsonl_drafts, parse_date
from engine.extractors.mail_headers import (
    MailHeaders,
    body_charsets,
    decode_text,
    read_headers,
    superset,
    tidy_header_block,
)
from engine.extractors.mail_parts import attachment_names, body_part
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines
from engine.records import Draft, Mention

if TYPE_CHECKING:
    from bs4 import Tag

BLOCK_TAGS = ["p", "div", "li", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "hr"]
BODY_MAX_CHARS = 20_000  # a pasted log in a mail should not become a megabyte chunk
# Real mail nests tags a few dozen deep; inserting line breaks costs time per level per
# block, so a deeper body (20,000 nested <div>s took 14 s) is read as plain strings instead.
HTML_MAX_DEPTH = 256
_MBOX_FROM = re.compile(rb"^From [^\n]*\n", re.MULTILINE)
# The envelope line mbox files and Thunderbird's saved .eml files start with (`From - date`),
# told from an obsolete-spaced `From : x` header.
_ENVELOPE_LINE = re.compile(rb"From (?![ \t]*:)[^\n]*\n")
_ATTRIBUTION = re.compile(
    r"^(On .{4,200}wrote:|Am .{4,200}schrieb .{1,80}:|Le .{4,200}a écrit\s?:)$"
)
_SEPARATOR = re.compile(r"^(-{2,}\s*Original Message\s*-{2,}|_{10,})$", re.IGNORECASE)
_SIGNATURE_CUES = ("Sent from my ", "Get Outlook for ")
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|mso-hide\s*:\s*all", re.IGNORECASE
)
FOOTER_MAX_LINES = 12  # a footer is the end of a mail, never most of it
_FOOTER_CUE = re.compile(
    r"\bunsubscribe\b|\bopt[ -]out\b|\b(?:e-?mail|subscription|notification) preferences\b|"
    r"\bmanage (?:your )?(?:preferences|subscriptions?)\b|"
    r"\b(?:receiving|received|sent you) this (?:e-?mail|message|newsletter)\b|"
    r"\bno longer (?:wish|want) to receive\b|©|\ball rights reserved\b",
    re.IGNORECASE,
)


def html_to_text(markup: str) -> str:
    from bs4 import BeautifulSoup  # imported here: every `memex --search` loads this module

    soup = BeautifulSoup(markup, "html.parser")
    if _deeper_than(soup, HTML_MAX_DEPTH):
        return "\n".join(" ".join(s.split()) for s in soup.stripped_strings)
    for hidden in soup(["script", "style", "head", "title"]):
        hidden.decompose()
    for hidden in soup.find_all(_is_hidden):  # preheaders: the inbox preview, never shown
        if not hidden.decomposed:
            hidden.decompose()
    for quote in soup.find_all("blockquote"):
        quote.decompose()  # quoted replies in HTML mail
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for block in soup.find_all(BLOCK_TAGS):
        block.insert_after("\n")  # inline tags (<b>, <a>) stay inside their line
    lines = (" ".join(line.split()) for line in soup.get_text().splitlines())
    return "\n".join(line for line in lines if line)


def _is_hidden(tag: Tag) -> bool:
    return tag.has_attr("hidden") or bool(_HIDDEN_STYLE.search(str(tag.get("style") or "")))


def strip_footer(body: str) -> str:
    """Cut a mailing's footer: from the first of its last FOOTER_MAX_LINES lines with an
    unsubscribe, preferences or copyright cue; the first line always stays."""
    lines = body.split("\n")
    for index in range(max(1, len(lines) - FOOTER_MAX_LINES), len(lines)):
        if _FOOTER_CUE.search(lines[index]):
            return "\n".join(lines[:index]).rstrip()
    return body


def _is_mailing(headers: MailHeaders, body_part: Message | None) -> bool:
    """A newsletter or notification (list headers, or an HTML-only body): footers are
    boilerplate there, while a person's plain mail may well say "unsubscribe me"."""
    return headers.is_mailing or (
        body_part is not None and body_part.get_content_type() == "text/html"
    )


def _deeper_than(root: Tag, limit: int) -> bool:
    """Whether tags nest deeper than `limit` below `root` (walked without recursion)."""
    from bs4 import Tag

    stack = [(root, 0)]
    while stack:
        tag, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in tag.contents if isinstance(child, Tag))
    return False


def _starts_quoted_block(lines: list[str], index: int) -> bool:
    """Outlook quotes the earlier mail under a separator or a `From:` / `Sent:` header block."""
    line = lines[index].strip()
    if _SEPARATOR.match(line):
        return True
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    return line.startswith("From: ") and following.startswith(("Sent: ", "Date: "))


def strip_quotes_and_signature(body: str) -> str:
    """Keep what the sender wrote: stop at a signature or a quoted earlier message."""
    lines = body.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if line.rstrip() == "--" or stripped.startswith(_SIGNATURE_CUES):
            break
        if kept and _starts_quoted_block(lines, index):
            break
        if not stripped.startswith(">"):
            kept.append(line.rstrip())
    while kept and (not kept[-1].strip() or _ATTRIBUTION.match(kept[-1].strip())):
        kept.pop()
    return "\n".join(kept).strip()


def _part_text(part: Message, notes: list[str], where: str) -> str:
    """A text part's words in its charset's superset; an unknown charset is a note."""
    payload = part.get_payload(decode=True)
    raw = payload if isinstance(payload, bytes) else b""
    declared = part.get_content_charset()
    text, used = decode_text(raw, *body_charsets(declared))
    if declared and superset(declared) is None:
        shown = "cp1252" if used == "cp1252" else "UTF-8"  # ASCII is UTF-8 too
        notes.append(f"{where}: unknown charset {declared!r}, read as {shown}")
    return html_to_text(text) if part.get_content_type() == "text/html" else text


def _addresses(value: str | None) -> list[tuple[str, str]]:
    return [(n, a) for n, a in (getaddresses([value]) if value else []) if n or a]


def people_in(value: object, role: str, when: str | None) -> list[Mention]:
    """The people a From/To/Cc value names (`Name <address>`, several comma-separated);
    a value with no address at all ("Dr. Weber's practice") is one name."""
    text = " ".join(str(value or "").split())
    if "@" not in text:
        return [Mention(name=text, role=role, first=when, last=when)] if text else []
    return _people(_addresses(text), role, when)


def _people(pairs: list[tuple[str, str]], role: str, when: str | None) -> list[Mention]:
    return [
        Mention(
            name="" if name.strip() == address else name,
            emails=(address,),
            role=role,
            first=when,
            last=when,
        )
        for name, address in pairs
        if "@" in address
    ]


def message_mentions(headers: MailHeaders, when: str | None) -> list[Mention]:
    """Who a message names: its sender (author), its To and Cc (recipients). A mailing
    (list headers) names nobody: its sender is a list, its recipients the user."""
    if headers.is_mailing:
        return []
    if "@" in headers.sender_text:
        found = _people(headers.senders, "author", when)
    else:
        found = people_in(headers.sender_text, "author", when)
    return found + _people(headers.receivers + headers.copied, "recipient", when)


def _readable(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(f"{n} <{a}>" if n and a else n or a for n, a in pairs)


def message_draft(
    message: Message, headers: MailHeaders, location: str, notes: list[str]
) -> Draft | None:
    subject, senders, receivers = headers.subject, headers.senders, headers.receivers
    sender, to = _readable(senders), _readable(receivers) or headers.receiver_text
    text_part = body_part(message)
    body = _part_text(text_part, notes, location) if text_part is not None else ""
    body = strip_quotes_and_signature(body)
    body = (strip_footer(body) if _is_mailing(headers, text_part) else body)[:BODY_MAX_CHARS]
    attachments = attachment_names(message, text_part, headers.declared_charset)
    if headers.date_note:
        notes.append(f"{location}: {headers.date_note}")
    if not (subject or body or sender):
        return None
    lines = [f"Subject: {subject or '(no subject)'}", f"From: {sender}", f"To: {to}"]
    if attachments:
        lines.append("Attachments: " + ", ".join(attachments))
    return Draft(
        content="\n".join([*lines, "", body]).strip(),
        title=subject or "(no subject)",
        content_date=headers.date,
        location=location,
        people=tuple(dict.fromkeys(n for n, _ in senders + receivers if n)),
        metadata={
            "from": sender,
            "to": to,
            "attachments": attachments,
            "message_id": headers.message_id,
        },
    )


def _parse(raw: bytes) -> Message:
    # compat32 keeps every header as the raw text it was: policy.default parses structured
    # headers on access, and raises on malformed ones (see mail_headers).
    return BytesParser(policy=policy.compat32).parsebytes(tidy_header_block(raw))


class MalformedMessage(Exception):
    """A message Python's `email` package could not take apart, in words."""


def read_message(
    raw: bytes, envelope: str | None, location: str, notes: list[str]
) -> tuple[Draft | None, MailHeaders]:
    """One message's draft (None when it holds nothing to index) and its headers.

    Python's `email` package raises internal errors on some malformed messages (parts nested
    a thousand deep, broken MIME structure): MalformedMessage then, naming the message by its
    subject when its headers alone can be read, so the caller keeps the other messages."""
    try:
        message = _parse(raw)
        headers = read_headers(message, envelope)
        return message_draft(message, headers, location, notes), headers
    except Exception as exc:  # whatever the parser raises, named above
        raise MalformedMessage(f"{_named(raw, envelope)} could not be taken apart") from exc


def _named(raw: bytes, envelope: str | None) -> str:
    """'the message 'Subject'' from the headers alone (parsed without the body)."""
    try:
        only = BytesParser(policy=policy.compat32).parsebytes(tidy_header_block(raw), True)
        subject = read_headers(only, envelope).subject
    except Exception:  # the same internal errors as above: the message stays unnamed
        subject = ""
    return f"the message '{subject[:80]}'" if subject else "a message"


def _extract_mbox(data: bytes) -> Extraction:
    result = Extraction()
    starts = [m.start() for m in _MBOX_FROM.finditer(data)]
    if not starts or starts[0] != 0:
        raise ExtractError("not an mbox file: it does not start with a 'From ' line")
    line, counted = 1, 0
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        header_end = data.index(b"\n", start) + 1
        envelope = data[start:header_end].decode("ascii", errors="replace")
        raw = re.sub(rb"^>(>*From )", rb"\1", data[header_end:end], flags=re.MULTILINE)
        line += data.count(b"\n", counted, start)  # counted on from the last message: linear
        counted = start
        try:
            draft, headers = read_message(raw, envelope, f"line:{line}", result.notes)
        except MalformedMessage as exc:
            result.problems.append(f"line {line}: {exc} (its MIME parts are broken)")
            continue
        if draft is None or not headers.has_mail_headers:
            result.problems.append(f"line {line}: not a readable message")
        else:
            result.drafts.append(draft)
            result.mentions += message_mentions(headers, draft.content_date)
    return result


def _extract_eml(data: bytes) -> Extraction:
    """One message; Thunderbird and others save it with its mbox envelope line first."""
    envelope_line = _ENVELOPE_LINE.match(data)
    envelope = envelope_line[0].decode("ascii", errors="replace") if envelope_line else None
    result = Extraction()
    try:
        draft, headers = read_message(
            data[envelope_line.end() :] if envelope_line else data, envelope, "line:1", result.notes
        )
    except MalformedMessage as exc:
        raise ExtractError(f"{exc} (its MIME parts are broken)") from exc
    if not headers.has_mail_headers:
        raise ExtractError("not an email message: no From, Subject or Date header")
    if draft is not None:
        result.drafts.append(draft)
        result.mentions += message_mentions(headers, draft.content_date)
    return result


def _catalog_draft(number: int, record: dict[str, Any]) -> Draft | None:
    subject = str(record.get("subject") or "").strip()
    summary = str(record.get("summary") or record.get("body") or "").strip()
    if not (subject or summary):
        return None
    to = record.get("to")
    to_text = ", ".join(str(t) for t in to) if isinstance(to, list) else str(to or "")
    sender = str(record.get("from") or "")
    named = _addresses(sender) + _addresses(to_text)
    content = "\n".join(
        [f"Subject: {subject or '(no subject)'}", f"From: {sender}", f"To: {to_text}", "", summary]
    ).strip()
    return Draft(
        content=content,
        title=subject or "(no subject)",
        content_date=parse_date(record.get("date")),
        location=f"line:{number}",
        people=tuple(dict.fromkeys(n for n, _ in named if n)),
        metadata={"from": sender, "to": to_text, "attachments": []},
    )


def extract_email(data: bytes, path: PurePath) -> Extraction:
    suffix = path.suffix.lower()
    if suffix == ".mbox" or (suffix != ".eml" and data.startswith(b"From ")):
        return _extract_mbox(data.replace(b"\r\n", b"\n"))
    if suffix == ".eml":
        if b"\x00" in data[:4096]:
            raise ExtractError("binary content (NUL bytes)")
        return _extract_eml(data)
    return _extract_catalog(data)


def _extract_catalog(data: bytes) -> Extraction:
    """Catalog JSONL: a draft per record, and the people its `from`, `to` and `cc` name."""
    mentions: list[Mention] = []

    def draft_for(number: int, record: dict[str, Any]) -> Draft | None:
        draft = _catalog_draft(number, record)
        if draft is not None:
            for key, role in (("from", "author"), ("to", "recipient"), ("cc", "recipient")):
                listed = record.get(key)
                for value in listed if isinstance(listed, list) else [listed]:
                    mentions.extend(people_in(value, role, draft.content_date))
        return draft

    result = jsonl_drafts(data, draft_for, "message without subject or summary")
    result.mentions = mentions
    return result


# The folder files of a mail client that keeps mbox files without an extension (Thunderbird's
# `Mail/Local Folders/Inbox`, `ImapMail/<server>/INBOX`), by their usual names.
FOLDER_FILES = ("inbox", "sent", "drafts", "archives", "trash", "junk", "templates", "all mail")
# A header line; obsolete syntax (RFC 5322 §4.5) allows spaces before the colon.
_HEADER = re.compile(r"^([!-9;-~]{1,76})[ \t]*:")
_KNOWN_HEADERS = {"from", "to", "subject", "date", "message-id", "received", "mime-version"}
_ENVELOPE_TEXT = re.compile(r"From (?![ \t]*:)")


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """An mbox (a `From ` separator line, then header lines: `.mbox`, `.mbx`, or a mail
    client's folder file without an extension, Thunderbird's `Inbox`) or an `.eml` (header
    lines from the first, one of them a mail header such as `From:` or `Subject:`, after the
    `From ` envelope line Thunderbird and others save it with)."""
    lines = head_lines(head)
    if lines and _ENVELOPE_TEXT.match(lines[0]):
        lines = lines[1:]
    elif name.lower().endswith((".mbox", ".mbx")) or "." not in name:
        return False
    fields = [found[1].lower() for line in lines[:40] if (found := _HEADER.match(line))]
    starts = bool(lines) and _HEADER.match(lines[0]) is not None
    return starts and any(field in _KNOWN_HEADERS for field in fields)


READER = FileReader(extract_email)
RECOGNISER = Recogniser(
    (".mbox", ".mbx", ".eml", *FOLDER_FILES),
    recognise,
    about="an mbox (a `From ` line, then headers: `.mbox`, or a mail folder's file "
    "without an extension, Thunderbird's `Inbox`, `Sent`, …) or an `.eml` (mail headers "
    "first, or after the `From ` line Thunderbird saves it with)",
)

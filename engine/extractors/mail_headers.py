"""Mail headers read as mail readers read them: charsets by their supersets, raw 8-bit bytes,
RFC 2047 encoded-words, obsolete spacing, and a date from wherever the message keeps one.

Headers are read from their raw lines (`Message.raw_items()` of a message parsed with
`policy.compat32`), never through `email.policy.default`'s header classes: their parser raises
internal errors (IndexError, AttributeError: 'str' object has no attribute 'token_type') on
malformed address and Message-ID headers that real mail carries.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime

from engine.extractors.chunking import parse_date

# Labels read as the larger charset their senders really wrote, as mail readers and browsers do
# (the WHATWG Encoding Standard's label table): the superset decodes every byte the label's own
# charset does the same way, and also the characters Windows and Hong Kong mailers add
# (GBK's 镕, HKSCS's 嘅, Unified Hangul's 똠, cp1252's curly quotes and €).
SUPERSETS: dict[str, str] = {
    **dict.fromkeys(("gb2312", "gb_2312-80", "csgb2312", "euc-cn", "gbk", "x-gbk"), "gb18030"),
    **dict.fromkeys(("cp936", "ms936", "windows-936", "chinese"), "gb18030"),
    **dict.fromkeys(("big5", "big5-hkscs", "x-x-big5", "cn-big5", "csbig5"), "big5hkscs"),
    **dict.fromkeys(("ks_c_5601-1987", "ks_c_5601-1989", "ks_c_5601", "ksc5601"), "cp949"),
    **dict.fromkeys(("ksc_5601", "euc-kr", "cseuckr", "korean", "windows-949"), "cp949"),
    **dict.fromkeys(("us-ascii", "ascii", "ansi_x3.4-1968", "iso-ir-6", "us"), "cp1252"),
    **dict.fromkeys(("iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1"), "cp1252"),
    **dict.fromkeys(("l1", "cp819", "ibm819", "iso-ir-100", "csisolatin1"), "cp1252"),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "latin5", "l5"), "cp1254"),
    **dict.fromkeys(("tis-620", "iso-8859-11"), "cp874"),
    **dict.fromkeys(("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji"), "cp932"),
}
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([qQbB])\?([^?]*)\?=")
_FOLD = re.compile(r"\r?\n(?=[ \t])")
_OBSOLETE_FIELD = re.compile(rb"^([!-9;-~]+)[ \t]+:", re.MULTILINE)
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_MAIL_HEADERS = {"from", "to", "subject", "date", "message-id", "received"}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# The envelope line's date, asctime-shaped (`Mon Mar 11 10:00:00 2024`, sometimes with a zone
# before or after the year); RFC 4155 asks for UTC.
_ENVELOPE_DATE = re.compile(
    r"\b[A-Za-z]{3},?\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?"
    r"\s+(?:[A-Z]{1,5}\s+|[+-]\d{4}\s+)?(\d{4})\b"
)


def superset(label: str | None) -> str | None:
    """The codec that reads a charset label as mail readers do; None when unknown."""
    name = (label or "").strip().strip("\"'").lower()
    name = SUPERSETS.get(name, name)
    try:
        return codecs.lookup(name).name if name else None
    except LookupError:
        return None


def decode_text(raw: bytes, *labels: str | None) -> tuple[str, str]:
    """`raw` read by the first of the labels' charsets that decodes it whole, else cp1252 with
    its five unassigned bytes read as Latin-1, so no byte becomes U+FFFD; (text, codec)."""
    if raw.isascii():
        return raw.decode("ascii"), "ascii"
    for label in labels:
        codec = superset(label)
        if codec is None:
            continue
        try:
            return raw.decode(codec), codec
        except UnicodeDecodeError:
            continue
    lenient = raw.decode("cp1252", errors="surrogateescape")
    return re.sub("[\udc80-\udcff]", lambda m: chr(ord(m[0]) - 0xDC00), lenient), "cp1252"


def body_charsets(declared: str | None) -> tuple[str | None, ...]:
    """The charsets a body is tried in: UTF-8 first when the label is missing or the Western
    one mailers put on anything (us-ascii, iso-8859-1), else the label first (a GB18030 or
    Big5 body can also be valid UTF-8 byte by byte, never the other way round in practice)."""
    if superset(declared) in (None, "cp1252"):
        return ("utf-8", declared)
    return (declared, "utf-8")


def unfold(value: str) -> str:
    return _FOLD.sub("", value).replace("\r", "").replace("\n", " ")


def decode_words(value: str, declared: str | None) -> str:
    """A header's text: encoded-words in their charsets' supersets (adjacent words of one
    charset joined before decoding, the space between two words dropped, RFC 2047), and raw
    8-bit bytes outside them as UTF-8, else the message's charset, else cp1252."""
    pieces: list[tuple[bytes, str | None]] = []  # (bytes, charset of an encoded-word or None)
    position = 0
    for match in _ENCODED_WORD.finditer(value):
        between = value[position : match.start()]
        if between and not (between.isspace() and pieces and pieces[-1][1] is not None):
            pieces.append((_raw_bytes(between), None))
        position = match.end()
        charset, word = match[1].split("*")[0], _word_bytes(match[2], match[3])
        if word is None:
            pieces.append((_raw_bytes(match[0]), None))
        elif pieces and pieces[-1][1] == charset:
            pieces[-1] = (pieces[-1][0] + word, charset)
        else:
            pieces.append((word, charset))
    if position < len(value):
        pieces.append((_raw_bytes(value[position:]), None))
    return "".join(
        decode_text(raw, charset, "utf-8")[0] if charset else decode_text(raw, "utf-8", declared)[0]
        for raw, charset in pieces
    )


def raw_text(value: str, declared: str | None) -> str:
    """Header text with its raw 8-bit bytes decoded (encoded-words left as they are)."""
    return decode_text(_raw_bytes(value), "utf-8", declared)[0]


def _raw_bytes(text: str) -> bytes:
    """The bytes a header held: the parser keeps bytes above 127 as surrogates."""
    return text.encode("utf-8", errors="surrogateescape")


def _word_bytes(encoding: str, payload: str) -> bytes | None:
    data = _raw_bytes(payload)
    if encoding in "qQ":
        return re.sub(
            rb"=([0-9A-Fa-f]{2})", lambda m: bytes([int(m[1], 16)]), data.replace(b"_", b" ")
        )
    try:
        return base64.b64decode(data + b"=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return None  # kept as the text it is


def tidy_header_block(raw: bytes) -> bytes:
    """Obsolete spacing (RFC 5322 §4.5, `Subject : x`) made modern so the parser sees the
    field, and blank lines before the first header dropped."""
    raw = raw.lstrip(b"\r\n")
    end = _HEADER_END.search(raw)
    cut = end.start() if end else len(raw)
    return _OBSOLETE_FIELD.sub(rb"\1:", raw[:cut]) + raw[cut:]


def header_date(value: str) -> str | None:
    try:
        return parse_date(parsedate_to_datetime(unfold(value).strip()).isoformat())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def envelope_date(line: str) -> str | None:
    """The date of an mbox `From sender date` line, as UTC."""
    found = _ENVELOPE_DATE.search(line)
    if found is None or found[1].lower() not in _MONTHS:
        return None
    month = _MONTHS.index(found[1].lower()) + 1
    day, hour, minute, second, year = (int(found[i] or 0) for i in (2, 3, 4, 5, 6))
    try:
        return parse_date(datetime(year, month, day, hour, minute, second).isoformat())
    except ValueError:
        return None


def received_date(value: str) -> str | None:
    """The date a `Received:` trace line ends with, after its last `;`."""
    head, _, when = unfold(value).rpartition(";")
    return header_date(when) if head else None


@dataclass(frozen=True)
class MailHeaders:
    """The headers a message is indexed by, decoded, and how its date was found."""

    subject: str
    senders: list[tuple[str, str]]
    receivers: list[tuple[str, str]]
    copied: list[tuple[str, str]]
    sender_text: str
    receiver_text: str  # shown when To names no mailbox (`Friends of the club:;`)
    date: str | None
    date_note: str | None
    message_id: str
    is_mailing: bool
    declared_charset: str | None
    has_mail_headers: bool  # any of From, To, Subject, Date, Message-ID, Received


def read_headers(message: Message, envelope: str | None) -> MailHeaders:
    raw = {name.lower(): value for name, value in reversed(list(message.raw_items()))}
    received = [v for n, v in message.raw_items() if n.lower() == "received"]
    declared = declared_charset(message)
    date, note = message_date(raw.get("date"), envelope, received)

    def text(name: str) -> str:
        return " ".join(decode_words(unfold(str(raw.get(name, ""))), declared).split())

    return MailHeaders(
        subject=text("subject"),
        senders=address_pairs(raw.get("from"), declared),
        receivers=address_pairs(raw.get("to"), declared),
        copied=address_pairs(raw.get("cc"), declared),
        sender_text=text("from"),
        receiver_text=text("to"),
        date=date,
        date_note=note,
        message_id=text("message-id"),
        is_mailing="list-unsubscribe" in raw or "list-id" in raw,
        declared_charset=declared,
        has_mail_headers=bool(raw.keys() & _MAIL_HEADERS),
    )


def message_date(
    value: str | None, envelope: str | None, received: list[str]
) -> tuple[str | None, str | None]:
    """The `Date:`, else the envelope line's date, else the topmost `Received:` line's (the
    hop that delivered it); (date, a note when a `Date:` was there and unreadable)."""
    date = header_date(value) if value else None
    if date:
        return date, None
    by_envelope = envelope_date(envelope) if envelope else None
    by_received = received_date(received[0]) if received else None
    if not (value and value.strip()):
        return by_envelope or by_received, None
    shown = " ".join(decode_words(unfold(value), None).split())[:60]
    source = "its From line" if by_envelope else "its Received header" if by_received else ""
    dated = f"dated by {source}" if source else "left undated"
    return by_envelope or by_received, f"its Date header '{shown}' is not a date; {dated}"


def declared_charset(message: Message) -> str | None:
    """The charset the message declares: its own, else its first text part's."""
    for part in message.walk():
        charset = part.get_content_charset()
        if charset:
            return str(charset)
    return None


def address_pairs(value: str | None, declared: str | None) -> list[tuple[str, str]]:
    """(name, address) of each mailbox a header names: split on the raw text, so a comma
    inside an encoded name (`=?utf-8?q?Lima=2C_Ana?=`) does not split it, then decoded."""
    if not value:
        return []
    pairs = getaddresses([unfold(value)])
    decoded = ((decode_words(n, declared), decode_words(a, declared)) for n, a in pairs)
    return [(" ".join(n.split()), a.strip()) for n, a in decoded if n.strip() or a.strip()]

"""WhatsApp: the `.txt` a chat's "Export chat" writes (`WhatsApp Chat with NAME.txt`, or
`_chat.txt` inside the `.zip` iOS makes).

Each message starts a line with its date and time; lines without that prefix continue the
message above. Android writes `12/03/2024, 14:05 - Name: text`, iOS `[12/03/2024, 14:05:33]
Name: text`. The date follows the phone's locale: day and month in either order, separated by
`/`, `.` or `-`, a 2- or 4-digit year (or year first); the clock has 12 or 24 hours (`2:05 pm`,
`2:05 PM`, with a narrow no-break space U+202F before the mark on newer phones). The order is
decided once for the whole file: a first field above 12 anywhere means day first, a second
field above 12 month first; with neither, day first (most locales). A line with no sender is a
system line (`X added Y`); so are the notices iOS writes under the chat's own name (`Messages
and calls are end-to-end encrypted`), which also name the chat. Media left out of the export
(`<Media omitted>`, `image omitted`) is dropped, a named file kept as `[file: name]`; the
invisible U+200E marks are removed. The chat is named after the file (`WhatsApp Chat with Raj
Patel.txt`), the folder it was unzipped to (`WhatsApp Chat - Raj Patel/_chat.txt`) or, for
`_chat.txt`, the name iOS writes its notices under. Times are the phone's wall clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from engine.extractors import ExtractError, Extraction
from engine.extractors.chunking import Message, chat_drafts, decode, to_epoch
from engine.extractors.mentions import spoken
from engine.extractors.sniffing import SiblingCheck, head_lines

_DATE = r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4})\.?"
_TIME = r"(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)(?:[\s\u202f]*(?P<mark>[aApP])\.?\s?[mM]\.?)?"
_ANDROID = re.compile(rf"{_DATE},?\s{_TIME} [-–] (?P<rest>.*)")
_IOS = re.compile(rf"\[{_DATE},?\s{_TIME}\] (?P<rest>.*)")
_SENDER = re.compile(r"(?P<sender>[^:]{1,80}?): (?P<text>.*)", re.DOTALL)
_MARKS = "\u200e\u200f\u202a\u202c\ufeff"  # invisible direction marks and BOMs
_INVISIBLE = dict.fromkeys(map(ord, _MARKS))
SYSTEM_MARK = "\u200e"  # iOS starts a notice's text with it (and an attachment's)
_NAMED_EXPORT = re.compile(  # "WhatsApp Chat with Raj", "WhatsApp Chat mit Lena", iOS's "- Raj"
    r"WhatsApp[ -]Chat (?:with|mit|met|con|com|avec|-|–) (?P<name>.+?)\Z", re.IGNORECASE
)
_OMITTED = re.compile(
    r"<Media omitted>|<Médias omis>|<Medien ausgeschlossen>|"
    r"(?:image|video|audio|sticker|GIF|document|Contact card) omitted",
    re.IGNORECASE,
)
_ATTACHED = re.compile(r"<attached: (?P<name>[^>]+)>|(?P<android>\S[^\n]*?) \(file attached\)")
_IOS_NUMBER = re.compile(r"^\d{8}-")  # iOS numbers every attachment: 00000015-plan.pdf
_AUTO_MEDIA = re.compile(r"\d{8}-(?:PHOTO|VIDEO|AUDIO|STICKER|GIF|PTT)-|(?:IMG|VID|PTT|AUD|STK)-\d")
# Notices written as if someone said them (iOS marks most of them with U+200E as well).
_NOTICES = (
    "messages and calls are end-to-end encrypted",
    "messages to this group are now secured",
    "your security code with",
    "this message was deleted",
    "you deleted this message",
    "missed voice call",
    "missed video call",
    "waiting for this message",
)


@dataclass(frozen=True)
class Line:
    """One line of the export that starts a message (or a system line)."""

    number: int
    date: tuple[int, int, int]
    clock: str
    mark: str  # "a", "p" or "" (a 24-hour clock)
    rest: list[str]  # the first line's text after the prefix, then its continuation lines


def _start(line: str) -> re.Match[str] | None:
    return _IOS.match(line) or _ANDROID.match(line)


def _fields(date: str) -> tuple[int, int, int]:
    first, second, third = (int(part) for part in re.split(r"[./-]", date))
    return first, second, third


def parse_lines(text: str) -> list[Line]:
    """The export's messages as numbered lines, continuation lines joined to their message."""
    lines: list[Line] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _start(raw.lstrip(_MARKS))  # the marks inside the text are kept for now
        if match:
            mark = (match["mark"] or "").lower()
            lines.append(Line(number, _fields(match["date"]), match["time"], mark, [match["rest"]]))
        elif lines:
            lines[-1].rest.append(raw)
    return lines


def day_first(lines: list[Line]) -> bool:
    """Whether the file's dates are day/month: decided from every date in it."""
    dates = [line.date for line in lines if line.date[0] <= 31]  # not year first
    if any(first > 12 for first, _, _ in dates):
        return True
    return not any(second > 12 for _, second, _ in dates)


def _moment(line: Line, days_first: bool) -> datetime:
    """ValueError for a date or time no calendar holds (31/02, 25:00)."""
    a, b, c = line.date
    if a > 31:  # year first: 2024-03-12
        year, month, day = a, b, c
    else:
        day, month = (a, b) if days_first else (b, a)
        year = c + 2000 if c < 100 else c
    parts = [int(p) for p in re.split(r"[:.]", line.clock)]
    hour, minute, second = parts[0], parts[1], parts[2] if len(parts) > 2 else 0
    if line.mark:
        if not 1 <= hour <= 12:
            raise ValueError("hour out of range for a 12-hour clock")
        hour = hour % 12 + (12 if line.mark == "p" else 0)
    return datetime(year, month, day, hour, minute, second)


def _attached(match: re.Match[str]) -> str:
    name = (match["name"] or match["android"]).strip()
    return "" if _AUTO_MEDIA.match(name) else f"[file: {_IOS_NUMBER.sub('', name)}]"


def _text(body: str) -> str:
    """A message's text: left-out media dropped, named files as `[file: name]`."""
    return _ATTACHED.sub(_attached, _OMITTED.sub("", body)).translate(_INVISIBLE).strip()


def _is_notice(text: str) -> bool:
    """A notice's text; only its start counts, so "what's the security code?" is a message."""
    return text.strip().lower().startswith(_NOTICES)


def _chat_name(path: PurePath, lines: list[Line]) -> str:
    for candidate in (path.stem, path.parent.name):
        named = _NAMED_EXPORT.search(candidate)
        if named:
            return named["name"].translate(_INVISIBLE).strip()
    for line in lines[:5]:  # iOS writes its first notices under the chat's own name
        said = _SENDER.match(line.rest[0])
        if said and _is_notice(said["text"].translate(_INVISIBLE)):
            return said["sender"].translate(_INVISIBLE).strip()
    return "WhatsApp chat"


def _is_system(said: re.Match[str] | None) -> bool:
    """A line with no sender ("Ana added Ben"), a notice, or iOS's marked notice text."""
    if said is None:
        return True
    text = said["text"]
    marked = text.startswith(SYSTEM_MARK) and not _ATTACHED.match(text[1:])
    return (marked and not _OMITTED.match(text[1:])) or _is_notice(text.translate(_INVISIBLE))


def _message(line: Line, days_first: bool, chat: str) -> Message | None:
    said = _SENDER.match("\n".join(line.rest).strip())
    if said is None or _is_system(said):
        return None
    text = _text(said["text"])
    if not text:
        return None
    when = _moment(line, days_first).isoformat()
    return Message(
        when=when,
        sender=said["sender"].translate(_INVISIBLE).strip(),
        text=text,
        conversation=chat,
        location=f"line:{line.number}",
        epoch=to_epoch(when),
    )


def extract_whatsapp(data: bytes, path: PurePath) -> Extraction:
    lines = parse_lines(decode(data))
    if not lines:
        raise ExtractError(
            "not a WhatsApp chat export: no line starts with a date and time in a known "
            "format (such as '12/03/2024, 14:05 - ' or '[12/03/2024, 14:05:33] ')"
        )
    result = Extraction()
    days_first, chat = day_first(lines), _chat_name(path, lines)
    messages: list[Message] = []
    for line in lines:
        try:
            message = _message(line, days_first, chat)
        except ValueError as exc:
            result.problems.append(f"line {line.number}: no such date or time ({exc})")
            continue
        if message is not None:
            messages.append(message)
    result.drafts = chat_drafts(messages, "whatsapp", prefix="")
    # An author saved in no address book is written as their number (a phone, not a name),
    # or in a group as "~ Name", the name they gave themselves.
    result.mentions = [spoken(m.sender.lstrip("~ \u202f"), m.when) for m in messages]
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A chat export: `WhatsApp Chat with NAME.txt` (and the other locales' words) by its
    name alone, so that one in an unknown date format is one clear error rather than
    silence; `_chat.txt` whose first line starts a message; any `.txt` whose first three
    lines do."""
    if _NAMED_EXPORT.match(PurePath(name).stem) and name.lower().endswith(".txt"):
        return True
    lines = [line.translate(_INVISIBLE).lstrip() for line in head_lines(head)]
    starts = [_start(line) is not None for line in lines[:3]]
    named = name == "_chat.txt" or name.lower().startswith("whatsapp chat")
    return bool(starts) and starts[0] and (named or (len(starts) == 3 and all(starts)))

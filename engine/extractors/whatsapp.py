"""WhatsApp: the `.txt` a chat's "Export chat" writes (`WhatsApp Chat with NAME.txt`, in
the phone's language: `Чат WhatsApp с контактом NAME.txt`), or `_chat.txt` inside the `.zip`
iOS makes (`WhatsApp Chat - NAME.zip`).

Each message starts a line with its date and time; lines without that prefix continue the
message above. Android writes `12/03/2024, 14:05 - Name: text`, iOS `[12/03/2024, 14:05:33]
Name: text`; the date and time follow the phone's locale, in any script and calendar
(`whatsapp_dates`), and how the file orders day and month is decided once from all its dates.
A line with no sender is a system line (`X added Y`); so are the notices iOS writes under the
chat's own name (`Messages and calls are end-to-end encrypted`), which also name the chat.
Media left out of the export (`<Media omitted>`, `image omitted`) is dropped, a named file
kept as `[file: name]`; the invisible direction marks are removed. The chat is named after
the file (`WhatsApp Chat with Raj Patel.txt`, in any language of
`filenames.WHATSAPP_EXPORT_NAMES`), the folder or archive it lies in (`WhatsApp Chat - Raj
Patel.zip!/_chat.txt`) or, for `_chat.txt`, the name iOS writes its notices under. Times are
the phone's wall clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import PurePath

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import Message, chat_drafts, decode, to_epoch
from engine.extractors.filenames import whatsapp_chat_name
from engine.extractors.mentions import spoken
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines
from engine.extractors.whatsapp_dates import (
    INVISIBLE,
    Head,
    Reading,
    UnreadDate,
    moment,
    read_head,
    reading,
)

_SENDER = re.compile(r"(?P<sender>[^:]{1,80}?): (?P<text>.*)", re.DOTALL)
SYSTEM_MARK = "\u200e"  # iOS starts a notice's text with it (and an attachment's)
_ARCHIVE = re.compile(r"\.zip!\Z", re.IGNORECASE)  # a member's folder: `<archive>!/<member>`
_OMITTED = re.compile(
    r"<Media omitted>|<Médias omis>|<Medien ausgeschlossen>|"
    r"(?:image|video|audio|sticker|GIF|document|Contact card) omitted",
    re.IGNORECASE,
)
# Android's placeholder in the phone's language (`<Без медиафайлов>`, `<Média vynechána>`):
# a whole message of one bracketed phrase, `<attached: …>` aside.
_PLACEHOLDER = re.compile(r"<[^<>:\n]{2,40}>")
# Android's `NAME (file attached)` is looked for from a line's start only, iOS's name up to
# the next `<`: from every character of a line without the mark, the search read on to the
# line's end (quadratic in the line's length).
_ATTACHED = re.compile(
    r"<attached: (?P<name>[^<>]+)>|^(?P<android>[^\S\n]*\S[^\n]*?) \(file attached\)",
    re.MULTILINE,
)
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
_QUOTED = 80  # characters of an unread line quoted in the error


@dataclass(frozen=True)
class Line:
    """One line of the export that starts a message (or a system line)."""

    number: int
    head: Head
    rest: list[str]  # the first line's text after the prefix, then its continuation lines


def parse_lines(text: str) -> list[Line]:
    """The export's messages as numbered lines, continuation lines joined to their message."""
    lines: list[Line] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        started = read_head(raw)  # the marks inside the text are kept for now
        if started:
            lines.append(Line(number, started[0], [started[1]]))
        elif lines:
            lines[-1].rest.append(raw)
    return lines


def _attached(match: re.Match[str]) -> str:
    name = (match["name"] or match["android"]).strip()
    return "" if _AUTO_MEDIA.match(name) else f"[file: {_IOS_NUMBER.sub('', name)}]"


def _text(body: str) -> str:
    """A message's text: left-out media dropped, named files as `[file: name]`."""
    if _PLACEHOLDER.fullmatch(body.strip()):
        return ""
    return _ATTACHED.sub(_attached, _OMITTED.sub("", body)).translate(INVISIBLE).strip()


def _is_notice(text: str) -> bool:
    """A notice's text; only its start counts, so "what's the security code?" is a message."""
    return text.strip().lower().startswith(_NOTICES)


def _notice_sender(lines: list[Line]) -> str | None:
    """The name iOS writes its first notices under: the chat's own name. The first line is
    the encryption notice, in the phone's language, its text marked with U+200E."""
    for index, line in enumerate(lines[:5]):
        said = _SENDER.match(line.rest[0])
        if said is None:
            continue
        text = said["text"]
        first_notice = index == 0 and text.startswith(SYSTEM_MARK) and not _is_media(text[1:])
        if first_notice or _is_notice(text.translate(INVISIBLE)):
            return said["sender"].translate(INVISIBLE).strip() or None
    return None


def _chat_name(path: PurePath, lines: list[Line]) -> str:
    """From the file's name, the folder's or archive's (`WhatsApp Chat - Raj.zip!`), the
    notices' sender, the archive's own name, else "WhatsApp chat"."""
    folder = _ARCHIVE.sub("", path.parent.name)
    for candidate in (path.stem, folder):
        named = whatsapp_chat_name(candidate)
        if named:
            return named
    notices = _notice_sender(lines)
    if notices:
        return notices
    if folder != path.parent.name and folder.strip():
        return folder.translate(INVISIBLE).strip()
    return "WhatsApp chat"


def _is_media(text: str) -> bool:
    return bool(_ATTACHED.match(text) or _OMITTED.match(text))


def _is_system(said: re.Match[str] | None) -> bool:
    """A line with no sender ("Ana added Ben"), a notice, or iOS's marked notice text."""
    if said is None:
        return True
    text = said["text"]
    marked = text.startswith(SYSTEM_MARK) and not _is_media(text[1:])
    return marked or _is_notice(text.translate(INVISIBLE))


def _message(line: Line, how: Reading, chat: str) -> Message | None:
    said = _SENDER.match("\n".join(line.rest).strip())
    if said is None or _is_system(said):
        return None
    text = _text(said["text"])
    if not text:
        return None
    when = moment(line.head, how).isoformat()
    return Message(
        when=when,
        sender=said["sender"].translate(INVISIBLE).strip(),
        text=text,
        conversation=chat,
        location=f"line:{line.number}",
        epoch=to_epoch(when),
    )


def _unread(text: str) -> ExtractError:
    """The one error of a file in which no line starts in a known shape: its first line."""
    first = next((s for s in (r.translate(INVISIBLE).strip() for r in text.splitlines()) if s), "")
    if not first:
        return ExtractError("not a WhatsApp chat export: the file holds no text")
    quoted = first if len(first) <= _QUOTED else first[:_QUOTED] + "…"
    return ExtractError(
        "not a WhatsApp chat export: no line starts with a date and time in a shape "
        f"WhatsApp writes (such as '12/03/2024, 14:05 - '); the first line reads '{quoted}'"
    )


def _problem(line: Line, exc: ValueError) -> str:
    reason = str(exc) if isinstance(exc, UnreadDate) else "no such date or time"
    written = line.head.written.translate(INVISIBLE).strip(" []-–\u00a0\u202f")
    return f"line {line.number}: {reason} ('{written}')"


def extract_whatsapp(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    lines = parse_lines(text)
    if not lines:
        raise _unread(text)
    result = Extraction()
    how, chat = reading([line.head for line in lines], date.today().year), _chat_name(path, lines)
    messages: list[Message] = []
    for line in lines:
        try:
            message = _message(line, how, chat)
        except ValueError as exc:
            result.problems.append(_problem(line, exc))
            continue
        if message is not None:
            messages.append(message)
    result.drafts = chat_drafts(messages, "whatsapp", prefix="")
    # An author saved in no address book is written as their number (a phone, not a name),
    # or in a group as "~ Name", the name they gave themselves.
    result.mentions = [spoken(m.sender.lstrip("~ \u202f"), m.when) for m in messages]
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A chat export: `WhatsApp Chat with NAME.txt` (in any language of the file-name table)
    by its name alone, so that one in an unknown date format is one clear error rather than
    silence; `_chat.txt` whose first line starts a message; any `.txt` whose first three
    lines do."""
    if name.lower().endswith(".txt") and whatsapp_chat_name(PurePath(name).stem):
        return True
    starts = [read_head(line) is not None for line in head_lines(head)[:3]]
    named = name == "_chat.txt" or name.lower().startswith("whatsapp chat")
    return bool(starts) and starts[0] and (named or (len(starts) == 3 and all(starts)))


READER = FileReader(extract_whatsapp)
RECOGNISER = Recogniser(
    (".txt",),
    recognise,
    about="`WhatsApp Chat with NAME.txt` / `_chat.txt` (or any `.txt`) whose first lines "
    "start with a message's date and time",
)

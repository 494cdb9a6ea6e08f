"""Calendars: iCalendar files (`.ics`) as Google Calendar, Apple Calendar and Outlook export
them, read with icalendar (RFC 5545), event by event.

Each event, to-do (VTODO) and journal entry (VJOURNAL) is one chunk: its summary as title,
dated by its start (UTC; an all-day event by its day; a to-do without one by its due or
completion time), with when, where, the organiser, the attendees and the description. A
recurring series stays one chunk, its rule written in words ("every week on Monday and
Wednesday, until 2024-06-24"), never one chunk per occurrence; an occurrence moved or
changed (`RECURRENCE-ID`) is a chunk of its own, a cancelled one (`STATUS:CANCELLED`) is
skipped, as is a cancelled event. The organiser and attendees are mentions ("organiser",
"attendee": their `CN` name and `mailto:` address).

Damage stays with its item: a property icalendar cannot read (a start `2024031X`, a rule
`FREQ=FORTNIGHTLY`), a doubled start or a line that is no property is that item's problem,
in words, and the item keeps the rest of its text (undated, or without its rule). An event
without a start is kept undated. A file icalendar refuses whole is read item by item.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import PurePath
from typing import Any

import icalendar

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import decode
from engine.extractors.recurrence import readable_rules, recurrence_words
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines
from engine.records import Draft, Mention

Item = Any  # an icalendar component; icalendar's own types are too loose to check
# What each item is called in a sentence, and the label of its first line.
KINDS = {
    "VEVENT": ("event", "Event"),
    "VTODO": ("to-do", "To-do"),
    "VJOURNAL": ("journal entry", "Journal"),
}
_BEGIN = re.compile(r"^BEGIN:(VEVENT|VTODO|VJOURNAL)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_SUMMARY = re.compile(r"^SUMMARY(?:;[^:\n]*)?:(.*)$", re.IGNORECASE | re.MULTILINE)
# The properties read, in the words a problem names them by.
_DATE_WORDS = {
    "DTSTART": "start time",
    "DTEND": "end time",
    "DUE": "due date",
    "COMPLETED": "completion time",
}
RAW_CHARS = 60  # of a broken value quoted in a problem


def item_lines(text: str) -> list[int]:
    """The line of each item's `BEGIN:`, in file order (as icalendar walks them)."""
    return [text.count("\n", 0, m.start()) + 1 for m in _BEGIN.finditer(text)]


def _values(item: Item, name: str) -> list[Any]:
    found = item.get(name)
    return list(found) if isinstance(found, list) else [] if found is None else [found]


def _dt(value: Any) -> date | None:
    """A date property's value, or None for one icalendar kept as raw text (`vBroken`, a
    `str` whose attributes raise)."""
    found = None if isinstance(value, str) else getattr(value, "dt", None)
    return found if isinstance(found, date) else None


def _dates(item: Item, name: str) -> list[date]:
    """The values of a date property that icalendar read."""
    return [d for v in _values(item, name) if (d := _dt(v)) is not None]


def _unreadable(item: Item, name: str) -> str | None:
    """The raw text of a value icalendar could not read ("" when it kept none), else None."""
    broken = [str(v) for v in _values(item, name) if _dt(v) is None]
    if broken:
        return broken[0][:RAW_CHARS]
    return "" if any(n == name for n, _ in getattr(item, "errors", [])) else None


def _text(item: Item, name: str, separator: str) -> str:
    return separator.join(s for v in _values(item, name) if (s := str(v).strip()))


def _moment(value: date) -> str:
    """ISO text of a start or end: UTC for a zoned time, as written for a floating one."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            try:
                value = value.astimezone(UTC).replace(tzinfo=None)
            except OverflowError:  # the first or last day of year 1 or 9999
                value = value.replace(tzinfo=None)
        return str(value.replace(microsecond=0).isoformat())
    return str(value.isoformat())


def _shown(value: date) -> str:
    if not isinstance(value, datetime):
        return str(value)
    zone = f" ({value.tzname()})" if value.tzinfo is not None and value.tzname() else ""
    return f"{value:%Y-%m-%d %H:%M}{zone}"


def _when(start: date, end: date | None) -> str:
    """The start and end as the user reads them: wall-clock times with their zone, one day
    written once; an all-day event's exclusive end made its last day."""
    if not isinstance(start, datetime):
        last = end - timedelta(days=1) if end is not None and type(end) is date else None
        return f"{start} – {last}" if last and last > start else str(start)
    if not isinstance(end, datetime):
        return _shown(start)
    zone = f" ({start.tzname()})" if start.tzinfo is not None and start.tzname() else ""
    shown_end = f"{end:%H:%M}" if end.date() == start.date() else f"{end:%Y-%m-%d %H:%M}"
    return f"{start:%Y-%m-%d %H:%M} – {shown_end}{zone}"


def person(address: Any) -> tuple[str, str]:
    """(name, email) of an ORGANIZER or ATTENDEE value."""
    email = re.sub(r"^mailto:", "", str(address), flags=re.IGNORECASE).strip()
    params = getattr(address, "params", {})
    name = str(params.get("CN", "")).strip().strip('"')
    return ("" if name.lower() == email.lower() else name), email  # Google: CN=the address


def _named(name: str, email: str) -> str:
    return f"{name} <{email}>" if name and email else name or email


def people(item: Item) -> list[tuple[str, str, str]]:
    """(role, name, email) of the organiser and the attendees."""
    found = [("organiser", *person(a)) for a in _values(item, "ORGANIZER")[:1]]
    return found + [("attendee", *person(a)) for a in _values(item, "ATTENDEE")]


def mentions(item: Item, when: str | None) -> list[Mention]:
    return [
        Mention(name=name, emails=(email,) if email else (), role=role, first=when, last=when)
        for role, name, email in people(item)
        if name or email
    ]


class ItemReading:
    """One calendar item as read: its start, its rules, and the problems met on the way."""

    def __init__(self, item: Item, line: int, name: str) -> None:
        self.item, self.line, self.name = item, line, name  # name: VEVENT, VTODO or VJOURNAL
        self.kind, self.label = KINDS.get(name, ("event", "Event"))
        self.summary = _text(item, "SUMMARY", " / ")
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.start = self._start()
        self.rules = self._rules()
        self._other_damage()

    def _problem(self, what: str, note: bool = False) -> None:
        named = f"'{self.summary}'" if self.summary else "without a title"
        (self.notes if note else self.problems).append(
            f"line {self.line}: the {self.kind} {named} {what}"
        )

    def _start(self) -> date | None:
        starts = _dates(self.item, "DTSTART")
        if len(starts) > 1:
            self._problem(f"has {_count(len(starts))} start times; dated by the first")
        elif not starts and (raw := _unreadable(self.item, "DTSTART")) is not None:
            self._problem(f"has a start time that cannot be read{_quoted(raw)}; kept undated")
        elif not starts and self.name == "VEVENT":
            self._problem("has no start time; kept undated", note=True)
        return starts[0] if starts else None

    def _other_damage(self) -> None:
        """The other dates it shows that cannot be read, and lines that are no property."""
        for prop, words in _DATE_WORDS.items():
            if prop != "DTSTART" and (raw := _unreadable(self.item, prop)) is not None:
                self._problem(
                    f"has {_an(words)} that cannot be read{_quoted(raw)}; kept without it"
                )
        lost = sum(1 for prop, _ in getattr(self.item, "errors", []) if prop is None)
        if lost:
            lines, them = ("a line", "it") if lost == 1 else (f"{_count(lost)} lines", "them")
            self._problem(f"has {lines} that cannot be read; kept without {them}")

    def _rules(self) -> list[str]:
        rules, unreadable = readable_rules(_values(self.item, "RRULE"))
        for raw in unreadable:
            self._problem(f"has a repeat rule that cannot be read{_quoted(raw)}; kept without it")
        if (
            "RRULE" in {n for n, _ in getattr(self.item, "errors", [])}
            and not rules
            and not unreadable
        ):
            self._problem("has a repeat rule that cannot be read; kept without it")
        return [recurrence_words(rule) for rule in rules]


def _count(n: int) -> str:
    return {2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _an(words: str) -> str:
    return f"an {words}" if words[0] in "aeiou" else f"a {words}"


def _quoted(raw: str) -> str:
    return f" ({raw})" if raw.strip() else ""


def _first(item: Item, name: str) -> date | None:
    found = _dates(item, name)
    return found[0] if found else None


def _rows(reading: ItemReading) -> list[tuple[str, str]]:
    item, start = reading.item, reading.start
    rows = [(reading.label, reading.summary or "(no title)")]
    if reading.name == "VEVENT":
        rows.append(("When", _when(start, _first(item, "DTEND")) if start else ""))
    elif reading.name == "VTODO":
        rows.append(("Starts", _shown(start) if start else ""))
        rows += [
            (label, _shown(d))
            for label, name in (("Due", "DUE"), ("Completed", "COMPLETED"))
            if (d := _first(item, name))
        ]
    else:
        rows.append(("Date", _shown(start) if start else ""))
    rows.append(("Repeats", "; ".join(reading.rules)))
    rows.append(("Where", _text(item, "LOCATION", "; ")))
    named = [(role, _named(name, email)) for role, name, email in people(item)]
    rows.append(("Organiser", next((n for role, n in named if role == "organiser"), "")))
    rows.append(("Attendees", ", ".join(n for role, n in named if role == "attendee")))
    return rows


def item_chunk(reading: ItemReading) -> tuple[Draft, list[Mention]]:
    item = reading.item
    dated = reading.start or (
        _first(item, "DUE") or _first(item, "COMPLETED") if reading.name == "VTODO" else None
    )
    when = _moment(dated) if dated else None
    metadata: dict[str, Any] = {"uid": str(item.get("UID", ""))}
    if reading.name != "VEVENT":
        metadata["kind"] = reading.kind
    if reading.rules:
        metadata["recurring"] = True
    lines = [f"{label}: {value}" for label, value in _rows(reading) if value]
    description = _text(item, "DESCRIPTION", "\n\n")
    found = mentions(item, when)
    draft = Draft(
        content="\n".join(lines + ([description] if description else [])),
        title=reading.summary or "(no title)",
        content_date=when,
        location=f"line:{reading.line}",
        metadata=metadata,
        people=tuple(dict.fromkeys(m.name or m.emails[0] for m in found)),
    )
    return draft, found


def _cancelled(item: Item) -> bool:
    return _text(item, "STATUS", " ").upper() == "CANCELLED"


def _parsed(text: str) -> list[tuple[Item, int, str]]:
    """Every event, to-do and journal entry of the file with its line; raises what
    icalendar raises when it refuses the file whole."""
    calendars = icalendar.Calendar.from_ical(text, multiple=True)
    items = [c for cal in calendars for c in cal.walk() if c.name in KINDS]
    lines = item_lines(text) + [0] * len(items)
    return [(item, line, str(item.name)) for item, line in zip(items, lines, strict=False)]


def _blocks(text: str) -> Iterator[tuple[str, int, str, bool]]:
    """(name, line, text, closed) of each top-level item and time zone, by its BEGIN and END
    lines; one the file ends inside is closed where it ends."""
    lines = text.split("\n")
    opened: tuple[str, int] | None = None
    for number, line in enumerate(lines, start=1):
        word, _, name = line.strip().upper().partition(":")
        if opened is None and word == "BEGIN" and (name in KINDS or name == "VTIMEZONE"):
            opened = (name, number)
        elif opened is not None and word == "END" and name == opened[0]:
            yield opened[0], opened[1], "\n".join(lines[opened[1] - 1 : number]), True
            opened = None
    if opened is not None:
        cut = [*lines[opened[1] - 1 :], f"END:{opened[0]}"]
        yield opened[0], opened[1], "\n".join(cut), False


def _one_by_one(text: str, result: Extraction) -> list[tuple[Item, int, str]]:
    """Each item parsed alone, with the file's time zones: one icalendar cannot read is a
    problem, the others are kept."""
    blocks = list(_blocks(text))
    zones = "\n".join(block for name, _, block, _ in blocks if name == "VTIMEZONE")
    found = []
    for name, line, block, closed in blocks:
        if name == "VTIMEZONE":
            continue
        item = _alone(block, name, zones)
        summary = _SUMMARY.search(block)
        named = f"'{summary[1].strip()}'" if summary and summary[1].strip() else "without a title"
        said = f"line {line}: the {KINDS[name][0]} {named}"
        if item is None:
            result.problems.append(f"{said} cannot be read; skipped")
            continue
        if not closed:
            result.problems.append(f"{said} is cut short (the file ends inside it); kept")
        found.append((item, line, name))
    return found


def _alone(block: str, name: str, zones: str) -> Item | None:
    """One item parsed in a calendar of its own. icalendar reads only events leniently (a
    property it cannot read is kept as raw text); a to-do or journal entry it refuses is
    read again as an event, so that it too keeps its other properties."""
    lines = block.split("\n")
    for written in dict.fromkeys((name, "VEVENT")):
        body = "\n".join([f"BEGIN:{written}", *lines[1:-1], f"END:{written}"])
        try:
            calendar = icalendar.Calendar.from_ical(
                f"BEGIN:VCALENDAR\n{zones}\n{body}\nEND:VCALENDAR\n"
            )
            return calendar.walk(written)[0]
        except Exception:  # whatever icalendar raises for this one item
            continue
    return None


def extract_ical(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    if "BEGIN:VCALENDAR" not in text[:4096].upper():
        raise ExtractError("not an iCalendar file: no BEGIN:VCALENDAR line")
    result = Extraction()
    try:
        items: list[tuple[Item, int, str]] | None = _parsed(text)
    except Exception:  # ValueError, KeyError, IndexError, …: a component icalendar refuses
        items = None
    if items is None or len(items) < len(item_lines(text)):  # or it dropped an unclosed one
        items = _one_by_one(text, result)
        if not items and not result.problems:
            raise ExtractError("not a readable iCalendar file: no event, to-do or journal entry")
    for item, line, name in items:
        if _cancelled(item):
            continue
        reading = ItemReading(item, line, name)
        result.problems += reading.problems
        result.notes += reading.notes
        draft, met = item_chunk(reading)
        result.drafts.append(draft)
        result.mentions.extend(met)
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """An `.ics` whose first line opens a calendar."""
    lines = head_lines(head)
    return bool(lines) and lines[0].strip().upper() == "BEGIN:VCALENDAR"


READER = FileReader(extract_ical)
RECOGNISER = Recogniser(
    (".ics", ".ical"),
    recognise,
    about="an `.ics` whose first line is `BEGIN:VCALENDAR`",
)

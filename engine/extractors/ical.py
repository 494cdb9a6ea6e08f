"""Calendars: iCalendar files (`.ics`) as Google Calendar, Apple Calendar and Outlook export
them, read with icalendar (RFC 5545).

Each event is one chunk: its summary as title, dated by its start (UTC; an all-day event by
its day), with when, where, the organiser, the attendees and the description. A recurring
series stays one chunk, its rule written in words ("every week on Monday and Wednesday,
until 2024-06-24"), never one chunk per occurrence; an occurrence moved or changed
(`RECURRENCE-ID`) is a chunk of its own, a cancelled one (`STATUS:CANCELLED`) is skipped, as
is a cancelled event. The organiser and attendees are mentions ("organiser", "attendee":
their `CN` name and `mailto:` address).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import PurePath
from typing import Any

import icalendar

from engine.extractors import ExtractError, Extraction
from engine.extractors.chunking import decode
from engine.extractors.recurrence import recurrence_words
from engine.extractors.sniffing import SiblingCheck, head_lines
from engine.records import Draft, Mention

Event = Any  # an icalendar component (VEVENT); icalendar's own types are too loose to check
_BEGIN_EVENT = re.compile(r"^BEGIN:VEVENT\s*$", re.IGNORECASE | re.MULTILINE)
_REQUIRED = ("DTSTART",)


def event_lines(text: str) -> list[int]:
    """The line of each `BEGIN:VEVENT`, in file order (as icalendar walks them)."""
    return [text.count("\n", 0, m.start()) + 1 for m in _BEGIN_EVENT.finditer(text)]


def _moment(value: Any) -> str:
    """ISO text of a start or end: UTC for a zoned time, as written for a floating one."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return str(value.replace(microsecond=0).isoformat())
    if isinstance(value, date):
        return str(value.isoformat())
    raise ValueError(f"not a date: {value!r}")


def _when(event: Event) -> str:
    """The start and end as the user reads them: wall-clock times with their zone, one day
    written once; an all-day event's exclusive end made its last day."""
    start = event.decoded("DTSTART")
    end = event.decoded("DTEND") if "DTEND" in event else None
    if not isinstance(start, datetime):
        last = end - timedelta(days=1) if isinstance(end, date) else None
        return f"{start} – {last}" if last and last > start else str(start)
    zone = f" ({start.tzname()})" if start.tzinfo is not None and start.tzname() else ""
    if not isinstance(end, datetime):
        return f"{start:%Y-%m-%d %H:%M}{zone}"
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


def attendees(event: Event) -> list[Any]:
    found = event.get("ATTENDEE")
    if found is None:
        return []
    return list(found) if isinstance(found, list) else [found]


def _lines(event: Event) -> list[str]:
    summary = str(event.get("SUMMARY", "")).strip() or "(no title)"
    rows = [("Event", summary), ("When", _when(event))]
    if "RRULE" in event:
        rows.append(("Repeats", recurrence_words(event["RRULE"])))
    rows.append(("Where", str(event.get("LOCATION", "")).strip()))
    if "ORGANIZER" in event:
        rows.append(("Organiser", _named(*person(event["ORGANIZER"]))))
    rows.append(("Attendees", ", ".join(_named(*person(a)) for a in attendees(event))))
    lines = [f"{label}: {value}" for label, value in rows if value]
    description = str(event.get("DESCRIPTION", "")).strip()
    return lines + ([description] if description else [])


def mentions(event: Event, when: str) -> list[Mention]:
    found = []
    if "ORGANIZER" in event:
        found.append(("organiser", *person(event["ORGANIZER"])))
    found.extend(("attendee", *person(a)) for a in attendees(event))
    return [
        Mention(name=name, emails=(email,) if email else (), role=role, first=when, last=when)
        for role, name, email in found
        if name or email
    ]


def _broken(event: Event) -> str:
    """Why an event cannot be read (a missing or broken start), or ""."""
    errors = dict(getattr(event, "errors", []) or [])
    for name in _REQUIRED:
        if name in errors:
            return f"{name} {errors[name]}"
        if name not in event:
            return f"no {name}"
    return ""


def event_chunk(event: Event, line: int) -> tuple[Draft, list[Mention]]:
    when = _moment(event.decoded("DTSTART"))
    summary = str(event.get("SUMMARY", "")).strip() or "(no title)"
    metadata: dict[str, Any] = {"uid": str(event.get("UID", ""))}
    if "RRULE" in event:
        metadata["recurring"] = True
    draft = Draft(
        content="\n".join(_lines(event)),
        title=summary,
        content_date=when,
        location=f"line:{line}",
        metadata=metadata,
        people=tuple(dict.fromkeys(m.name or m.emails[0] for m in mentions(event, when))),
    )
    return draft, mentions(event, when)


def _cancelled(event: Event) -> bool:
    return str(event.get("STATUS", "")).upper() == "CANCELLED"


def _calendars(text: str) -> list[icalendar.Component]:
    try:
        return list(icalendar.Calendar.from_ical(text, multiple=True))
    except (ValueError, KeyError, IndexError) as exc:
        raise ExtractError(f"not a readable iCalendar file: {exc}") from None


def extract_ical(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    if "BEGIN:VCALENDAR" not in text[:4096].upper():
        raise ExtractError("not an iCalendar file: no BEGIN:VCALENDAR line")
    events = [e for cal in _calendars(text) for e in cal.walk("VEVENT")]
    result = Extraction()
    for event, line in zip(events, event_lines(text) + [0] * len(events), strict=False):
        if _cancelled(event):
            continue
        broken = _broken(event)
        if broken:
            result.problems.append(f"line {line}: event skipped ({broken})")
            continue
        draft, met = event_chunk(event, line)
        result.drafts.append(draft)
        result.mentions.extend(met)
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """An `.ics` whose first line opens a calendar."""
    lines = head_lines(head)
    return bool(lines) and lines[0].strip().upper() == "BEGIN:VCALENDAR"

"""Continuous glucose monitor CSV (Dexcom Clarity, LibreView) → one summary per day.

Dexcom Clarity: a header row with `Timestamp (YYYY-MM-DDThh:mm:ss)`, `Event Type` and
`Glucose Value (mg/dL)` (or mmol/L); glucose rows have Event Type `EGV`; values below or above
the sensor's range read `Low` / `High` and count as 39 / 401 mg/dL.
LibreView: a title line, then a header with `Device Timestamp`, `Record Type` and
`Historic Glucose mg/dL` (or mmol/L); record type 0 is the 15-minute history (used), 1 a
scan (used only when a file has no history). Its timestamps follow the exporting locale:
a file in which some day field exceeds 12 is read day-first, else month-first.
mmol/L is converted to mg/dL (×18.016). Each day gives mean, time in range 70–180 mg/dL,
min, max and the number of readings.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from pathlib import PurePath

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import decode
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines
from engine.records import Draft

MMOL_TO_MGDL = 18.016
RANGE_LOW, RANGE_HIGH = 70.0, 180.0
SENSOR_LOW, SENSOR_HIGH = 39.0, 401.0
NOTE_MAX_CHARS = 500
DELIMITERS = (",", ";", "\t")
LIBRE_FORMATS = (
    "%m-%d-%Y %I:%M %p",
    "%m-%d-%Y %H:%M",
    "%m/%d/%Y %I:%M %p",
    "%m/%d/%Y %H:%M",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d %H:%M:%S",
)


@dataclass(frozen=True)
class Layout:
    """Which columns of a CSV hold what, found from its header row."""

    vendor: str
    header_row: int
    time: int
    glucose: int
    mmol: bool
    kind: int | None  # Event Type / Record Type column
    scan: int | None  # LibreView scan glucose column
    notes: int | None = None  # LibreView's Notes column (rows of record type 6)


@dataclass(frozen=True)
class Reading:
    day: str
    mgdl: float
    line: int


@dataclass(frozen=True)
class Note:
    """A note the wearer typed into the reader or app (LibreView's Notes column)."""

    day: str
    clock: str  # HH:MM
    text: str
    line: int


def find_layout(rows: list[list[str]]) -> Layout:
    for index, row in enumerate(rows[:30]):
        names = [cell.strip() for cell in row]
        lower = [n.lower() for n in names]
        time = next(
            (i for i, n in enumerate(lower) if n.startswith(("timestamp", "device timestamp"))),
            None,
        )
        glucose = next(
            (i for i, n in enumerate(lower) if n.startswith(("glucose value", "historic glucose"))),
            None,
        )
        if time is None or glucose is None:
            continue
        vendor = "LibreView" if lower[time].startswith("device") else "Dexcom"
        kind = next((i for i, n in enumerate(lower) if n in ("event type", "record type")), None)
        scan = next((i for i, n in enumerate(lower) if n.startswith("scan glucose")), None)
        notes = lower.index("notes") if "notes" in lower else None
        mmol = "mmol" in lower[glucose]
        return Layout(vendor, index, time, glucose, mmol, kind, scan, notes)
    raise ExtractError("not a Dexcom Clarity or LibreView CSV: no timestamp and glucose header")


def _glucose(text: str, mmol: bool) -> float | None:
    value = text.strip()
    if not value:
        return None
    if value.lower() == "low":
        return SENSOR_LOW
    if value.lower() == "high":
        return SENSOR_HIGH
    number = float(value.replace(",", "."))
    if not math.isfinite(number):
        raise ValueError(f"glucose {value!r} is not a finite number")
    return round(number * MMOL_TO_MGDL, 1) if mmol else number


def _libre_formats(rows: list[list[str]], layout: Layout) -> tuple[str, ...]:
    """Day-first when any leading date field exceeds 12, else the US month-first order."""
    for row in rows[layout.header_row + 1 :]:
        stamp = row[layout.time].strip() if len(row) > layout.time else ""
        head = stamp.replace("/", "-").replace(".", "-").split("-")[0]
        if head.isdigit() and len(head) <= 2 and int(head) > 12:
            return tuple(
                f.replace("%m", "%@").replace("%d", "%m").replace("%@", "%d") for f in LIBRE_FORMATS
            ) + ("%d.%m.%Y %H:%M",)
    return LIBRE_FORMATS


def _moment(stamp: str, formats: tuple[str, ...]) -> datetime:
    text = stamp.strip()
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    for form in formats:
        try:
            return datetime.strptime(text, form)
        except ValueError:
            continue
    raise ValueError(f"unreadable timestamp {stamp!r}")


def _day(stamp: str, formats: tuple[str, ...]) -> str:
    return _moment(stamp, formats).strftime("%Y-%m-%d")


def _formats(rows: list[list[str]], layout: Layout) -> tuple[str, ...]:
    return _libre_formats(rows, layout) if layout.vendor == "LibreView" else LIBRE_FORMATS


def notes(rows: list[list[str]], layout: Layout, result: Extraction) -> list[Note]:
    """The rows' notes (any record type; LibreView writes them as type 6), with their time."""
    column, found = layout.notes, []
    if column is None:
        return []
    formats = _formats(rows, layout)
    for index in range(layout.header_row + 1, len(rows)):
        row = rows[index]
        text = " ".join(row[column].split())[:NOTE_MAX_CHARS] if len(row) > column else ""
        if not text.rstrip("."):
            continue
        try:
            moment = _moment(row[layout.time], formats)
        except (IndexError, ValueError):
            result.problems.append(f"line {index + 1}: note without a readable time")
            continue
        day, clock = moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M")
        found.append(Note(day, clock, text.rstrip("."), index + 1))
    return found


def readings(rows: list[list[str]], layout: Layout, result: Extraction) -> list[Reading]:
    formats = _formats(rows, layout)
    history: list[Reading] = []
    scans: list[Reading] = []
    for index in range(layout.header_row + 1, len(rows)):
        row = rows[index]
        kind = (
            row[layout.kind].strip() if layout.kind is not None and len(row) > layout.kind else ""
        )
        if layout.vendor == "Dexcom" and kind and kind.upper() != "EGV":
            continue  # alerts, calibrations, insulin, patient info rows
        column = layout.scan if layout.vendor == "LibreView" and kind == "1" else layout.glucose
        if column is None or (layout.vendor == "LibreView" and kind not in ("0", "1")):
            continue
        try:
            value = _glucose(row[column], layout.mmol)
            if value is None:
                continue
            reading = Reading(_day(row[layout.time], formats), value, index + 1)
        except (IndexError, ValueError):
            result.problems.append(f"line {index + 1}: unreadable reading")
            continue
        (scans if kind == "1" else history).append(reading)
    return history or scans


def _notes_draft(day: str, day_notes: list[Note], vendor: str) -> Draft:
    """A day with notes and no readings: the notes alone."""
    return Draft(
        content=f"CGM notes for {day} ({vendor}): {_notes_text(day_notes)}.",
        title=f"Glucose · {day}",
        content_date=day,
        location=f"line:{day_notes[0].line}",
        metadata={"vendor": vendor, "notes": len(day_notes)},
    )


def _notes_text(day_notes: list[Note]) -> str:
    return "; ".join(f"{n.clock} {n.text}" for n in day_notes)


def day_draft(day: str, values: list[Reading], vendor: str, day_notes: list[Note]) -> Draft:
    if not values:
        return _notes_draft(day, day_notes, vendor)
    mgdl = [r.mgdl for r in values]
    mean = sum(mgdl) / len(mgdl)
    in_range = sum(RANGE_LOW <= v <= RANGE_HIGH for v in mgdl) / len(mgdl)
    low = sum(v < RANGE_LOW for v in mgdl) / len(mgdl)
    high = sum(v > RANGE_HIGH for v in mgdl) / len(mgdl)
    content = (
        f"CGM glucose summary for {day} ({vendor}): mean glucose {mean:.0f} mg/dL "
        f"({mean / MMOL_TO_MGDL:.1f} mmol/L); time in range 70–180 mg/dL {in_range:.0%} "
        f"(below {low:.0%}, above {high:.0%}); min {min(mgdl):.0f} mg/dL, "
        f"max {max(mgdl):.0f} mg/dL; {len(mgdl)} reading{'s' if len(mgdl) != 1 else ''}."
    ) + (f" Notes: {_notes_text(day_notes)}." if day_notes else "")
    return Draft(
        content=content,
        title=f"Glucose · {day}",
        content_date=day,
        location=f"line:{values[0].line}",
        metadata={
            "mean_mgdl": round(mean, 1),
            "time_in_range": round(in_range, 3),
            "min_mgdl": min(mgdl),
            "max_mgdl": max(mgdl),
            "readings": len(mgdl),
            "vendor": vendor,
        }
        | ({"notes": len(day_notes)} if day_notes else {}),
    )


def delimiter(text: str) -> str:
    """The delimiter of the header row (the line naming a timestamp and glucose): `,`, or
    the `;` of locales with a decimal comma, or the tab of Excel's "Unicode text"."""
    for line in islice(io.StringIO(text, newline=""), 30):
        lower = line.lower()
        if "timestamp" in lower and "glucose" in lower:
            return max(DELIMITERS, key=line.count)  # ties keep the first: the comma
    return ","


def _csv_fault(said: str) -> str:
    """Why the csv module could not read a file, in words (its message is never shown)."""
    if "field limit" in said:
        return f"a field is longer than {csv.field_size_limit():,} characters"
    if "NUL" in said:
        return "it holds NUL bytes"
    return "a quoted field or a line is broken"


def extract_cgm(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    try:
        # newline="": the csv module reads \r, \n and \r\n line ends itself, quoted ones too.
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter(text)))
    except csv.Error as exc:  # a field over csv's size limit, a NUL byte, a broken quote
        raise ExtractError(f"not a readable CSV: {_csv_fault(str(exc))}") from None
    layout = find_layout(rows)
    result = Extraction()
    by_day: dict[str, list[Reading]] = defaultdict(list)
    notes_by_day: dict[str, list[Note]] = defaultdict(list)
    for reading in readings(rows, layout, result):
        by_day[reading.day].append(reading)
    for note in notes(rows, layout, result):
        notes_by_day[note.day].append(note)
    result.drafts = [
        day_draft(day, by_day[day], layout.vendor, notes_by_day[day])
        for day in sorted(by_day.keys() | notes_by_day.keys())
    ]
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A Dexcom Clarity or LibreView CSV: a header row (within its first lines) naming a
    timestamp and a glucose column, as the reader finds it."""
    text = "\n".join(head_lines(head))
    try:
        find_layout(list(csv.reader(io.StringIO(text), delimiter=delimiter(text))))
    except (ExtractError, csv.Error):
        return False
    return True


READER = FileReader(extract_cgm)
RECOGNISER = Recogniser(
    (".csv", ".tsv", ".txt"),
    recognise,
    about="a CSV whose header names a timestamp and a glucose column (Dexcom Clarity, LibreView)",
)

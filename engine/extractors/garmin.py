"""Garmin Connect daily summaries (`data/garmin/YYYY-MM-DD.json`) as one readable sentence.

The JSON is the usersummary `daily` object (`totalSteps`, `restingHeartRate`,
`averageStressLevel`, `bodyBatteryHighestValue`, …), optionally with the sleep service's
`dailySleepDTO` merged in. A file may also hold a list of such days. Numbers become words
with units ("7 h 12 min of sleep") so that a query like "how did I sleep" finds the day.
A field with an unreadable value is left out and recorded as a problem.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date as Date
from pathlib import PurePath
from typing import Any

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import (
    date_from_name,
    decode,
    json_array_items,
    load_json,
    parse_date,
)
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_text, json_keys
from engine.records import Draft

Fields = dict[str, float]
MAX_VALUE = 1e9  # above any step, meter, second or kcal count of one day: a broken number
NUMERIC_FIELDS = (
    "totalSteps",
    "dailyStepGoal",
    "totalDistanceMeters",
    "restingHeartRate",
    "minHeartRate",
    "maxHeartRate",
    "sleepTimeSeconds",
    "sleepingSeconds",
    "deepSleepSeconds",
    "remSleepSeconds",
    "averageStressLevel",
    "maxStressLevel",
    "bodyBatteryHighestValue",
    "bodyBatteryLowestValue",
    "totalKilocalories",
    "activeKilocalories",
    "moderateIntensityMinutes",
    "vigorousIntensityMinutes",
    "floorsAscended",
    "averageSpo2",
    "avgWakingRespirationValue",
)


def _hours(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60} min"


@dataclass(frozen=True)
class Phrase:
    """One field in words (`text` formats its value), with an optional second field after it."""

    key: str
    text: str
    extra_key: str = ""
    extra: str = ""

    def __call__(self, f: Fields) -> str | None:
        if self.key not in f:
            return None
        tail = self.extra.format(f[self.extra_key]) if self.extra_key in f else ""
        return self.text.format(f[self.key]) + tail


def _distance(f: Fields) -> str | None:
    meters = f.get("totalDistanceMeters")
    return f"{meters / 1000:.1f} km covered" if meters is not None else None


def _heart(f: Fields) -> str | None:
    if "restingHeartRate" not in f:
        return None
    span = (
        f", range {f['minHeartRate']:.0f}–{f['maxHeartRate']:.0f} bpm"
        if "minHeartRate" in f and "maxHeartRate" in f
        else ""
    )
    return f"resting heart rate {f['restingHeartRate']:.0f} bpm{span}"


def _sleep(f: Fields) -> str | None:
    seconds = f.get("sleepTimeSeconds", f.get("sleepingSeconds"))
    if seconds is None:
        return None
    stages = [
        f"{_hours(f[key])} {name}"
        for key, name in (("deepSleepSeconds", "deep"), ("remSleepSeconds", "REM"))
        if key in f
    ]
    return f"slept {_hours(seconds)}" + (f" ({', '.join(stages)})" if stages else "")


def _battery(f: Fields) -> str | None:
    high, low = f.get("bodyBatteryHighestValue"), f.get("bodyBatteryLowestValue")
    if high is None:
        return None
    return f"body battery high {high:.0f}" + (f", low {low:.0f}" if low is not None else "")


def _intensity(f: Fields) -> str | None:
    moderate, vigorous = f.get("moderateIntensityMinutes"), f.get("vigorousIntensityMinutes")
    if moderate is None and vigorous is None:
        return None
    moderate, vigorous = moderate or 0, vigorous or 0
    # Garmin counts a vigorous minute twice towards the weekly intensity goal.
    return (
        f"{moderate + 2 * vigorous:.0f} intensity minutes "
        f"({moderate:.0f} moderate, {vigorous:.0f} vigorous)"
    )


PHRASES: tuple[Callable[[Fields], str | None], ...] = (
    Phrase("totalSteps", "{:,.0f} steps", "dailyStepGoal", " (goal {:,.0f})"),
    _distance,
    _heart,
    _sleep,
    Phrase("averageStressLevel", "average stress {:.0f}", "maxStressLevel", ", peak {:.0f}"),
    _battery,
    Phrase("totalKilocalories", "{:,.0f} kcal burned", "activeKilocalories", " ({:,.0f} active)"),
    _intensity,
    Phrase("floorsAscended", "{:.0f} floors climbed"),
)


def numeric_fields(summary: dict[str, Any], problems: list[str], day: str) -> Fields:
    merged = dict(summary)
    sleep = summary.get("dailySleepDTO")
    if isinstance(sleep, dict):
        merged = {**sleep, **summary}
    fields: Fields = {}
    for key in NUMERIC_FIELDS:
        value = merged.get(key)
        if value is None:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            problems.append(f"{day}: {key} is not a number ({value!r})")
            continue
        if not math.isfinite(number) or abs(number) > MAX_VALUE:
            problems.append(f"{day}: {key} is out of range ({number:g})")
            continue
        if number >= 0:  # Garmin writes -1 / -2 for "no data" (stress while active, no watch)
            fields[key] = number
    return fields


def summary_sentence(day: str, fields: Fields) -> str:
    phrases = [p for p in (phrase(fields) for phrase in PHRASES) if p]
    weekday = Date.fromisoformat(day[:10]).strftime("%A") if len(day) >= 10 else ""
    return f"Garmin daily summary for {weekday} {day[:10]}: " + "; ".join(phrases) + "."


def _day_draft(
    summary: dict[str, Any], path: PurePath, line: int, problems: list[str]
) -> Draft | None:
    day = parse_date(summary.get("calendarDate")) or date_from_name(path.name)
    if day is None:
        problems.append("a day without calendarDate in a file without a date in its name")
        return None
    fields = numeric_fields(summary, problems, day[:10])
    if not fields:
        problems.append(f"{day[:10]}: no known Garmin fields")
        return None
    return Draft(
        content=summary_sentence(day, fields),
        title=f"Garmin · {day[:10]}",
        content_date=day[:10],
        location=f"line:{line}",
        metadata=fields,
    )


def extract_garmin(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    result = Extraction()
    days = json_array_items(text, result) or [(1, load_json(text))]
    for line, summary in days:
        if not isinstance(summary, dict):
            result.problems.append(f"line {line}: an entry that is not a JSON object")
            continue
        draft = _day_draft(summary, path, line, result.problems)
        if draft is not None:
            result.drafts.append(draft)
    if not result.drafts:
        raise ExtractError("not a Garmin daily summary: " + "; ".join(result.problems[:3]))
    return result


_SUMMARY_KEYS = frozenset(
    ("userProfileId", "totalSteps", "restingHeartRate", "dailySleepDTO", "totalKilocalories")
    + ("bodyBatteryHighestValue", "averageStressLevel", "sleepTimeSeconds")
)


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A Garmin Connect daily summary (or a list of them): JSON naming `calendarDate` and
    one of the summary's own fields (`totalSteps`, `restingHeartRate`, …) near the top."""
    text = head_text(head).lstrip()
    keys = json_keys(text) if text.startswith(("{", "[")) else set()
    return "calendarDate" in keys and bool(keys & _SUMMARY_KEYS)


READER = FileReader(extract_garmin)
RECOGNISER = Recogniser(
    (".json",),
    recognise,
    about="JSON naming `calendarDate` and a daily summary field (`totalSteps`, …)",
)

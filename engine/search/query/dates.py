"""Dates the way people write them: in a query ("on 12 March", "last week", "in May 2025",
"yesterday") and in `--since` / `--until` ("2026-06", "2026", "2 weeks ago").

The parsing is `dateparser`'s (`search.search_dates` finds the phrases, `DateDataParser`
says how wide each is: a day, a week, a month or a year); this module turns each into a range
of days, relative to the search's clock. A week runs Monday to Sunday, a month from its first
to its last day. Times of day ("at 3pm", "1 h 12 min") are not dates and are ignored.

`dateparser` also reads a few ordinary words as dates ("sat in the car" as Saturday, "may"
as the month, "34%" as 1934); `_plausible` keeps only phrases that hold a digit or a full
month, weekday or relative word, and refuses "may" and "march" without a day, a year or a
preposition before them.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

PERIODS = ("day", "week", "month", "year")  # what dateparser reports; "time" is not a range
# Words that make a phrase without a digit a date: full month and weekday names, and the
# relative words dateparser reads ("last week", "this month", "yesterday").
NAMED = {m.lower() for m in calendar.month_name[1:]} | {d.lower() for d in calendar.day_name}
RELATIVE = {"yesterday", "today", "tomorrow", "ago", "last", "this", "next", "weekend"}
UNITS = {"day", "days", "week", "weeks", "month", "months", "year", "years"}
AMBIGUOUS = {"may", "march"}  # months that are also everyday words
PREPOSITIONS = {"in", "on", "during", "of", "since", "from", "for"}
PLAIN = re.compile(r"[\w\s,./:'-]+")  # no "%", "$", "#": "34%" is not the year 1934


@dataclass(frozen=True)
class DateRange:
    """An inclusive range of days, and the words of the query it was read from ("" when
    it came from `--since` / `--until`)."""

    since: date
    until: date
    phrase: str = ""

    def as_json(self) -> dict[str, str | None]:
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "from_query": self.phrase or None,
        }


def searched(
    since: str | None, until: str | None, dated: DateRange | None
) -> dict[str, str | None] | None:
    """The range a search covered, for its response: the query's, or `since`/`until`'s."""
    if dated is not None:
        return dated.as_json()
    if since or until:
        return {"since": since, "until": until, "from_query": None}
    return None


def span(day: date, period: str) -> tuple[date, date]:
    """The first and last day of the `period` ("day", "week", "month", "year") holding `day`."""
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(days=6)
    if period == "month":
        last = calendar.monthrange(day.year, day.month)[1]
        return day.replace(day=1), day.replace(day=last)
    if period == "year":
        return date(day.year, 1, 1), date(day.year, 12, 31)
    return day, day


def parse_range(text: str, now: datetime) -> tuple[date, date] | None:
    """The days a date text names ("2026-06", "2026", "last week", "12 March"), or None."""
    if not PLAIN.fullmatch(text):  # "2026\ufffd" is not 2026 with a smudge
        return None
    try:
        parsed = _parser(now).get_date_data(text)
    except (ValueError, OverflowError):  # a date past the calendar ("year 99999")
        return None
    if parsed.date_obj is None or parsed.period not in PERIODS:
        return None
    return span(parsed.date_obj.date(), str(parsed.period))


def find_in_query(query: str, now: datetime) -> tuple[DateRange, str] | None:
    """The range of days the query's date phrases name (several: the span of them all) and
    the query without those phrases; None when it names no date."""
    words = set(re.findall(r"\w+", query.lower()))
    if not (words & (NAMED | RELATIVE) or any(c.isdigit() for c in query)):
        return None  # no phrase could pass `_plausible`: dateparser need not even load
    from dateparser.search import search_dates

    try:
        found = search_dates(query, languages=["en"], settings=_settings(now)) or []
    except (ValueError, OverflowError):  # a phrase past the calendar ("year 99999")
        return None
    ranges, phrases = [], []
    for phrase, _ in found:
        days = _phrase_range(phrase, now) if _plausible(phrase) else None
        if days is not None:
            ranges.append(days)
            phrases.append(phrase)
    if not ranges:
        return None
    rest = query
    for phrase in phrases:
        rest = rest.replace(phrase, " ", 1)
    since, until = min(r[0] for r in ranges), max(r[1] for r in ranges)
    return DateRange(since, until, ", ".join(p.strip() for p in phrases)), " ".join(rest.split())


def _phrase_range(phrase: str, now: datetime) -> tuple[date, date] | None:
    """The days a phrase of the query names; a bare duration ("3 days" of "the past 3 days",
    which dateparser reads as "3 days ago") runs from that day to today."""
    days = parse_range(phrase, now)
    words = set(phrase.lower().split())
    if days is not None and words & UNITS and not words & RELATIVE:
        return days[0], max(days[0], now.date())
    return days


def _plausible(phrase: str) -> bool:
    """Whether a phrase dateparser found reads as a date to a person (module docstring)."""
    if not PLAIN.fullmatch(phrase):
        return False
    words = phrase.lower().split()
    if any(c.isdigit() for c in phrase):
        return True
    if not any(w in NAMED or w in RELATIVE for w in words):
        return False
    return not (set(words) & AMBIGUOUS) or words[0] in PREPOSITIONS


def _settings(now: datetime) -> dict[str, Any]:
    return {
        "RELATIVE_BASE": now,
        "PREFER_DATES_FROM": "past",  # "12 March" in June is the March gone, not the next one
        "PREFER_DAY_OF_MONTH": "first",
        "RETURN_TIME_AS_PERIOD": True,  # "at 3pm" reports "time", so it is left out
    }


@lru_cache(maxsize=8)
def _parser(now: datetime) -> Any:
    from dateparser.date import DateDataParser  # loaded on the first date: a heavy import

    return DateDataParser(languages=["en"], settings=_settings(now))

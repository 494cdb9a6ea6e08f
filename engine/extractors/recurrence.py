"""A calendar's recurrence rule (RFC 5545 `RRULE`) in words, so a series is one readable
chunk: `FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;UNTIL=20240624T080000Z` → "every 2 weeks on
Monday and Wednesday, until 2024-06-24". A rule icalendar could not read is read again
without its spaces (`readable_rules`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

import icalendar

_UNITS = {
    "SECONDLY": "second",
    "MINUTELY": "minute",
    "HOURLY": "hour",
    "DAILY": "day",
    "WEEKLY": "week",
    "MONTHLY": "month",
    "YEARLY": "year",
}
_DAYS = {
    "MO": "Monday",
    "TU": "Tuesday",
    "WE": "Wednesday",
    "TH": "Thursday",
    "FR": "Friday",
    "SA": "Saturday",
    "SU": "Sunday",
}
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_BYDAY = re.compile(r"(?P<nth>[+-]?\d{1,2})?(?P<day>[A-Z]{2})")
_SPACES = re.compile(r"\s+")


def _ordinal(n: int) -> str:
    if n == -1:
        return "last"
    if n < 0:
        return f"{_ordinal(-n)} to last"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def _day(code: str) -> str:
    match = _BYDAY.fullmatch(code.strip().upper())
    if match is None or match["day"] not in _DAYS:
        return code
    name = _DAYS[match["day"]]
    return f"the {_ordinal(int(match['nth']))} {name}" if match["nth"] else name


def _values(rule: Mapping[str, Any], key: str) -> list[Any]:
    value = rule.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _until(value: Any) -> str:
    if isinstance(value, (datetime, date)):
        return value.strftime("%Y-%m-%d")
    return str(value)


def _on(rule: Mapping[str, Any]) -> str:
    parts = []
    if days := _values(rule, "BYDAY"):
        parts.append("on " + _and([_day(str(d)) for d in days]))
    if month_days := _values(rule, "BYMONTHDAY"):
        parts.append("on the " + _and([_ordinal(int(d)) for d in month_days]))
    if months := [_MONTHS[int(m) - 1] for m in _values(rule, "BYMONTH") if 1 <= int(m) <= 12]:
        parts.append("in " + _and(months))  # a month beyond 12 is no month
    return " ".join(parts)


def recurrence_words(rule: Mapping[str, Any]) -> str:
    """The rule in words; the parts it does not know (BYSETPOS, …) are left out."""
    unit = _UNITS.get(str(next(iter(_values(rule, "FREQ")), "")).upper(), "time")
    interval = int(next(iter(_values(rule, "INTERVAL")), 1) or 1)
    words = [f"every {unit}" if interval == 1 else f"every {interval} {unit}s"]
    if on := _on(rule):
        words.append(on)
    text = " ".join(words)
    if count := _values(rule, "COUNT"):
        text += f", {int(count[0])} times"
    if until := _values(rule, "UNTIL"):
        text += f", until {_until(until[0])}"
    return text


def readable_rules(values: Sequence[Any]) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The repeat rules icalendar read, and the raw text of those it could not. A rule it
    could not read is read again without its spaces (Outlook writes `BYDAY=MO, TU`)."""
    rules: list[Mapping[str, Any]] = []
    unreadable: list[str] = []
    for value in values:
        if isinstance(value, Mapping):
            rules.append(value)
            continue
        try:
            rules.append(icalendar.vRecur.from_ical(_SPACES.sub("", str(value))))
        except (ValueError, TypeError, KeyError, IndexError):  # FREQ=FORTNIGHTLY and the like
            unreadable.append(str(value))
    return rules, unreadable

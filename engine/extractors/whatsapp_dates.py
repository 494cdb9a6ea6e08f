"""The date and time that open each message of a WhatsApp export, in every locale it writes.

The phone writes them as its locale formats a date: digits of any script (Arabic-Indic
`٢٧/٣/٢٠٢٢`, Persian `۱۴۰۱/۱/۷`, Devanagari…), invisible direction marks between the fields
(U+200F after each one in Arabic), day, month and year in any order with `/`, `.`, `-`, `. `
or `年月日` between them, the Thai Buddhist era (`2565`, `2565 BE`), the Japanese eras (`R4/3/18`,
`令和4年3月18日`), the Solar Hijri calendar of Iran (`1401`), the time before or after the
date, 24 or 12 hours with the locale's mark for the half-day before or after it (`PM`,
`p. m.`, `nachm.`, `午後`, `오후`, `م`, `ب.ظ`…), and a 12-hour clock counted from 0 (`0:24 PM`).
Only the line's head is rewritten to read it (digits to ASCII, marks dropped): a message's
own text is left as written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

FORMAT_MARKS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
INVISIBLE = dict.fromkeys(map(ord, FORMAT_MARKS))
# In a head only: no-break and thin spaces read as spaces, the Arabic comma as a comma,
# `元` (the first year of an era, `令和元年`) as 1. Each maps one character to one.
_HEAD_PLAIN = {**INVISIBLE, 0xA0: " ", 0x202F: " ", 0x2009: " ", ord("،"): ",", ord("元"): "1"}
_HEAD_SPAN = 80  # no date-and-time prefix is longer, marks included
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit (Unicode Nd) of another script

# The half-day marks of the common locales besides the Latin `am`, `a.m.`, `a. m.`.
_MORNING = (
    *("vorm.", "午前", "上午", "오전", "ص", "ق.ظ.", "ق.ظ", "पूर्वाह्न", "পূর্বাহ্ণ", "முற்பகல்"),
    *("π.μ.", "ÖÖ", "SA", "ก่อนเที่ยง", "قبل دوپہر", "לפנה״צ"),
)
_AFTERNOON = (
    *("nachm.", "午後", "下午", "오후", "م", "ب.ظ.", "ب.ظ", "अपराह्न", "অপরাহ্ণ", "பிற்பகல்"),
    *("μ.μ.", "ÖS", "CH", "หลังเที่ยง", "بعد دوپہر", "אחה״צ"),
)
_AFTERNOON_WORDS = frozenset(w.casefold() for w in _AFTERNOON)
_LOCAL_MARKS = sorted((re.escape(w) for w in (*_MORNING, *_AFTERNOON)), key=len, reverse=True)
_MARK = "|".join((r"[ap]\.?\s?m\.?", *_LOCAL_MARKS))
# Japanese eras: the Gregorian year of each one's first year.
ERAS = {"明治": 1868, "大正": 1912, "昭和": 1926, "平成": 1989, "令和": 2019}
ERAS.update({"M": 1868, "T": 1912, "S": 1926, "H": 1989, "R": 2019})
_ERA = r"明治|大正|昭和|平成|令和|[MTSHR](?=\d)"
# The Buddhist era named after the year, as the short date of a phone set to the Buddhist
# calendar in an English or Thai locale writes it (`16/2/2565 BE`, `16/2/2565 พ.ศ.`).
_BUDDHIST_ERA = r"B\.?E\.?(?![^\W\d_])|พ\.ศ\.?"
_DATE = (
    rf"(?P<era>{_ERA})?(?P<a>\d{{1,4}})(?P<ymd>[./-]|年)\s?"
    r"(?P<b>\d{1,2})(?:[./-]|月)\s?(?P<c>\d{1,4})(?:日|\.)?"
    rf"(?:\s?(?P<be>{_BUDDHIST_ERA}))?"
)
_TIME = (
    rf"(?:(?P<pre>{_MARK})\s*)?(?P<hour>\d{{1,2}})[:.](?P<minute>\d{{2}})"
    rf"(?:[:.](?P<second>\d{{2}}))?(?:\s*(?P<post>{_MARK}))?"
)
_SEP = r"(?:\s*,\s*|\s+|(?<=日))"
_IOS = (  # [27/03/2022, 21:41:35] Name: text, or the time first: [14:56:01, 3/18/22]
    re.compile(rf"\[{_DATE}{_SEP}{_TIME}\] ?", re.IGNORECASE),
    re.compile(rf"\[{_TIME}{_SEP}{_DATE}\] ?", re.IGNORECASE),
)
_ANDROID = (  # 27/03/2022, 21:41 - Name: text, or the time first
    re.compile(rf"{_DATE}{_SEP}{_TIME}\s*[-–](?:\s|\Z)", re.IGNORECASE),
    re.compile(rf"{_TIME}{_SEP}{_DATE}\s*[-–](?:\s|\Z)", re.IGNORECASE),
)
_ERA_STARTS = frozenset("MTSHRmtshr明大昭平令")
_GROUPS = ("a", "b", "c", "era", "be", "ymd", "hour", "minute", "second", "pre", "post")
_BUDDHIST_OFFSET = 543  # Thai years: 2565 BE is 2022
BUDDHIST = "BE"  # Head.era of a date whose year is named Buddhist-era
_SOLAR_HIJRI = range(1300, 1430)  # Iran's calendar (1401 is 2022); WhatsApp began in 1388
_LUNAR_HIJRI = range(1430, 1700)  # the Islamic calendar (1443 is 2022): not read


@dataclass(frozen=True)
class Head:
    """A message's date and time as its line writes them, its digits read."""

    fields: tuple[int, int, int]  # as written, in the order written
    year_width: int  # digits of the year field (2: a two-digit year)
    year_first: bool
    era: str  # a Japanese era ("R", "令和"), the Buddhist one written after the year, or ""
    clock: tuple[int, int, int]
    half: str  # "a", "p", or "" for a 24-hour clock
    written: str  # the line's head as written (marks and all), for a problem's message


class UnreadDate(ValueError):
    """A date no calendar read here holds; its message is a sentence for the user."""


def _plain(span: str) -> str:
    if span.isascii():  # most heads: nothing to rewrite
        return span
    plain = span.translate(_HEAD_PLAIN)
    if plain.isascii():
        return plain
    return _OTHER_DIGIT.sub(lambda m: str(unicodedata.digit(m[0])), plain)


def _original_end(span: str, kept: int) -> int:
    """Where, in `span`, the `kept`-th character that is not an invisible mark ends."""
    for index, char in enumerate(span):
        if kept == 0:
            return index
        if char not in FORMAT_MARKS:
            kept -= 1
    return len(span)


def _half(mark: str | None) -> str:
    if not mark:
        return ""
    folded = mark.casefold()
    return "p" if folded.startswith("p") or folded in _AFTERNOON_WORDS else "a"


def read_head(line: str) -> tuple[Head, str] | None:
    """The head of a line that starts a message, and the rest of the line as written."""
    span = line[:_HEAD_SPAN]
    first = span.lstrip(FORMAT_MARKS)[:1]  # most lines continue a message: told at once
    if first == "[":
        shapes = _IOS
    elif first.isdigit() or first in _ERA_STARTS:
        shapes = _ANDROID
    else:
        return None
    plain = _plain(span)
    match = shapes[0].match(plain) or shapes[1].match(plain)
    if match is None:
        return None
    end = match.end() if len(plain) == len(span) else _original_end(span, match.end())
    a, b, c, era, be, ymd, hour, minute, second, pre, post = match.group(*_GROUPS)
    year_first = bool(era) or ymd == "年" or len(a) >= 3
    head = Head(
        fields=(int(a), int(b), int(c)),
        year_width=len(a if year_first else c),
        year_first=year_first,
        era=(era or "").upper() or (BUDDHIST if be else ""),
        clock=(int(hour), int(minute), int(second or 0)),
        half=_half(pre or post),
        written=span[:end],
    )
    return head, line[end:]


@dataclass(frozen=True)
class Reading:
    """How one file writes its dates, decided once from all of them."""

    days_first: bool
    buddhist_short: bool  # two-digit years counted in the Buddhist era (65 is 2565 BE)


def _inversions(heads: Sequence[Head], days_first: bool) -> int:
    """How often a message is dated before the one above it, read in that order."""
    keys = [(h.fields[2], *(h.fields[1::-1] if days_first else h.fields[:2])) for h in heads]
    return sum(1 for before, after in zip(keys, keys[1:], strict=False) if after < before)


def reading(heads: Sequence[Head], this_year: int) -> Reading:
    """Day or month first, decided from every date: a first field above 12 anywhere means
    day first, a second one month first; with neither, the order under which the messages
    run in time, day first on a tie (most locales). Two-digit years are Buddhist-era when
    the Common Era would put one in the future."""
    dates = [h for h in heads if not h.year_first]
    day_possible = not any(h.fields[1] > 12 for h in dates)
    month_possible = not any(h.fields[0] > 12 for h in dates)
    days_first = day_possible or not month_possible
    if day_possible and month_possible:
        days_first = _inversions(dates, True) <= _inversions(dates, False)
    short = [h for h in heads if h.year_width <= 2 and not h.era]
    buddhist = any(2000 + _year_field(h) > this_year + 1 for h in short)
    return Reading(days_first, buddhist)


def _year_field(head: Head) -> int:
    return head.fields[0] if head.year_first else head.fields[2]


def _year(head: Head, how: Reading) -> int:
    year = _year_field(head)
    if head.era == BUDDHIST:  # 2565 BE, or 65 BE
        return (year + 2500 if head.year_width <= 2 else year) - _BUDDHIST_OFFSET
    if head.era:
        return ERAS[head.era] + year - 1
    if head.year_width <= 2:
        return year + (2500 - _BUDDHIST_OFFSET if how.buddhist_short else 2000)
    return year - _BUDDHIST_OFFSET if year > 2400 else year


def _solar_hijri(year: int, month: int, day: int) -> date:
    """A Solar Hijri date (Iran, Afghanistan) in the Gregorian calendar, by the 33-year
    arithmetic rule the Persian calendar libraries use (exact for this century)."""

    def days(y: int, m: int, d: int) -> int:
        y += 1595
        count = -355668 + 365 * y + (y // 33) * 8 + ((y % 33) + 3) // 4 + d
        return count + ((m - 1) * 31 if m < 7 else (m - 7) * 30 + 186) - 365

    last_day = 31 if month <= 6 else 30 if month <= 11 else days(year + 1, 1, 1) - days(year, 12, 1)
    if not (1 <= month <= 12 and 1 <= day <= last_day):
        raise UnreadDate("no such day")
    return date.fromordinal(days(year, month, day))


def moment(head: Head, how: Reading) -> datetime:
    """The head's wall-clock time; ValueError for a date or time no calendar holds."""
    a, b, c = head.fields
    if head.year_first:
        month, day = b, c
    else:
        day, month = (a, b) if how.days_first else (b, a)
    year = _year(head, how)
    hour, minute, second = head.clock
    if head.half and hour <= 12:  # 12:05 AM is 00:05; `0:24 PM` (a clock from 0) is 12:24
        hour = hour % 12 + (12 if head.half == "p" else 0)
    if year in _LUNAR_HIJRI:
        raise UnreadDate("the Islamic (Hijri) calendar is not read")
    if year in _SOLAR_HIJRI:
        return datetime.combine(_solar_hijri(year, month, day), datetime.min.time()).replace(
            hour=hour, minute=minute, second=second
        )
    return datetime(year, month, day, hour, minute, second)

"""Dates, times and titles in file names: dated notes, phone and meeting recorders.

Recorders name their files by when they started: Zoom `GMT20240311-100000_Recording…`
(UTC), Teams `Weekly sync-20240311_100000-Meeting Recording`, Meet and others
`Meeting Recording 2024-03-11 10-00-00`, `2024_03_11 10_00`, dated notes `2024-03-11-walk`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, time

_TIME = r"(?P<H>\d{2})[-.:h_](?P<M>\d{2})(?:[-.:m_](?P<S>\d{2}))?(?!\d)"
_PATTERNS = (  # in order of preference when two match at the same place
    re.compile(r"GMT(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})-(?P<H>\d{2})(?P<M>\d{2})(?P<S>\d{2})"),
    re.compile(
        r"(?<!\d)(?P<y>(?:19|20)\d{2})(?P<m>\d{2})(?P<d>\d{2})[_T-]"
        r"(?P<H>\d{2})(?P<M>\d{2})(?P<S>\d{2})(?!\d)"
    ),
    re.compile(
        r"(?P<y>\d{4})(?P<sep>[-_.])(?P<m>\d{2})(?P=sep)(?P<d>\d{2})"
        rf"(?:(?:[ T_-]|\s+at\s+){_TIME})?"
    ),
)
# Words recorders add to every name; what is left (a meeting's topic) is worth a title.
_BOILERPLATE = re.compile(  # `\b` would not split `_Recording`: `_` is a word character
    r"(?<![A-Za-z0-9])(?:meeting[\s_]+recording|recording|transcript(?:ion)?|closed[\s_]+captions?|"
    r"captions?|cc|\d{3,4}x\d{3,4}|otter[\s_]+ai|GMT(?:[+-]\d{1,2}(?::?\d{2})?)?)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_SEPARATORS = re.compile(r"[\s_-]+")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")


@dataclass(frozen=True)
class NameStamp:
    """A date (and the time, when the name has one) found in a file name, and where."""

    date: str  # YYYY-MM-DD
    time: str | None  # HH:MM:SS
    start: int
    end: int
    zoom: bool = False  # Zoom's `GMT…` stamp: the time is UTC

    @property
    def iso(self) -> str:
        return f"{self.date}T{self.time}" if self.time else self.date


def _stamp(match: re.Match[str], zoom: bool) -> NameStamp | None:
    try:
        day = date(int(match["y"]), int(match["m"]), int(match["d"]))
    except ValueError:
        return None
    clock = None
    if match["H"] is not None:
        try:
            clock = time(int(match["H"]), int(match["M"]), int(match["S"] or 0)).isoformat()
        except ValueError:
            return NameStamp(day.isoformat(), None, match.start(), match.end("d"), zoom)
    return NameStamp(day.isoformat(), clock, match.start(), match.end(), zoom)


def name_stamp(name: str) -> NameStamp | None:
    """The first valid date in a file name (with its time where the name has one)."""
    found: list[NameStamp] = []
    for index, pattern in enumerate(_PATTERNS):
        for match in pattern.finditer(name):
            stamp = _stamp(match, zoom=index == 0)
            if stamp is not None:
                found.append(stamp)
                break
    return min(found, key=lambda s: s.start) if found else None  # min is stable: order wins ties


def datetime_from_name(name: str) -> str | None:
    """ISO date, or date and time, of a file name: `GMT20240311-100000…` → 2024-03-11T10:00:00."""
    stamp = name_stamp(name)
    return stamp.iso if stamp else None


def recording_topic(stem: str) -> str:
    """The topic a dated name holds once the stamp and the recorder's own words are gone
    (`Weekly sync`); "" for a name that holds none or no date."""
    stamp = name_stamp(stem)
    if stamp is None:
        return ""
    rest = _BOILERPLATE.sub(" ", stem[: stamp.start] + " " + stem[stamp.end :])
    return _SEPARATORS.sub(" ", _EMPTY_BRACKETS.sub(" ", rest)).strip(" .,()[]")


def recording_title(stem: str) -> str:
    """A readable title from a file name: the topic left once the stamp and the recorder's
    own words are gone, else `Zoom recording · 2024-03-11 10:00`; a name without a date
    reads as itself."""
    stamp = name_stamp(stem)
    if stamp is None:
        return _SEPARATORS.sub(" ", stem).strip() or stem
    rest = recording_topic(stem)
    if rest or not (stamp.time or _BOILERPLATE.search(stem)):
        return rest or stem  # a name that is only a date reads as that date
    label = "Zoom recording" if stamp.zoom else "Meeting recording"
    return f"{label} · {stamp.date}" + (f" {stamp.time[:5]}" if stamp.time else "")


@dataclass(frozen=True)
class ExportName:
    """How one language names a WhatsApp chat export (the name is `{name}` in `shape`)."""

    language: str
    shape: str  # as the phone writes it, `{name}` where the chat's name goes
    checked: bool  # met on real exports, not only taken from WhatsApp's strings as known

    @property
    def pattern(self) -> re.Pattern[str]:
        before, after = (re.escape(part) for part in self.shape.split("{name}"))
        pattern = (before + r"\s*(?P<name>.+?)\s*" + after + r"\Z").replace(r"\ ", r"\s+")
        return re.compile(pattern.replace(r"WhatsApp\-", r"WhatsApp[\s-]"), re.IGNORECASE)


# The chat's name in Android's `WhatsApp Chat with NAME.txt` (and the `.zip` holding it with
# media), by the phone's language; iOS's `WhatsApp Chat - NAME.zip`. docs/formats.md lists them.
WHATSAPP_EXPORT_NAMES = (
    ExportName("English", "WhatsApp Chat with {name}", True),
    ExportName("English (iOS)", "WhatsApp Chat - {name}", True),
    ExportName("German", "WhatsApp Chat mit {name}", True),
    ExportName("Dutch", "WhatsApp-chat met {name}", True),
    ExportName("Czech", "Chat WhatsApp s uživatelem {name}", True),
    ExportName("Russian", "Чат WhatsApp с контактом {name}", True),
    ExportName("Russian (group)", "Чат WhatsApp с группой {name}", False),
    ExportName("Russian (short)", "Чат WhatsApp с {name}", False),
    ExportName("Spanish", "Chat de WhatsApp con {name}", False),
    ExportName("Portuguese", "Conversa do WhatsApp com {name}", False),
    ExportName("French", "Discussion WhatsApp avec {name}", False),
    ExportName("Italian", "Chat WhatsApp con {name}", False),
    ExportName("Swedish", "WhatsApp-chatt med {name}", False),
    ExportName("Danish, Norwegian", "WhatsApp-chat med {name}", False),
    ExportName("Polish", "Czat WhatsApp z {name}", False),
    ExportName("Ukrainian", "Чат WhatsApp з {name}", False),
    ExportName("Romanian", "Conversație WhatsApp cu {name}", False),
    ExportName("Greek", "Συνομιλία WhatsApp με {name}", False),
    ExportName("Turkish", "{name} ile WhatsApp Sohbeti", False),
    ExportName("Arabic", "دردشة WhatsApp مع {name}", False),
    ExportName("Persian", "گفتگوی WhatsApp با {name}", False),
    ExportName("Hebrew", "צ'אט WhatsApp עם {name}", False),
    ExportName("Hindi", "{name} के साथ WhatsApp चैट", False),
    ExportName("Indonesian", "Chat WhatsApp dengan {name}", False),
    ExportName("Malay", "Sembang WhatsApp dengan {name}", False),
    ExportName("Vietnamese", "Đoạn chat WhatsApp với {name}", False),
    ExportName("Thai", "แชท WhatsApp กับ {name}", False),
    ExportName("Japanese", "{name}とのWhatsAppトーク", False),
    ExportName("Chinese (simplified)", "与{name}的WhatsApp聊天", False),
    ExportName("Chinese (traditional)", "與{name}的WhatsApp對話", False),
)
_EXPORT_PATTERNS = tuple(n.pattern for n in WHATSAPP_EXPORT_NAMES)
# Earlier phones wrote the English words in other locales too: `WhatsApp Chat con NAME`.
_ENGLISH_SHAPED = re.compile(
    r"WhatsApp[ -]Chat\s+(?:with|mit|met|med|con|com|avec|z|s|[-–])\s+(?P<name>.+)\Z", re.IGNORECASE
)
MAX_NAME_CHARS = 255  # a file system's longest name; only a zip member's can be longer
_COPY_NUMBER = re.compile(r"\s*\(\d{1,3}\)\Z")  # a second download: `… Raj (1).txt`
_INVISIBLE_MARKS = dict.fromkeys(
    map(ord, "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")
)


def whatsapp_chat_name(stem: str) -> str | None:
    """The chat's name in a WhatsApp export's file name (without its extension), in any
    language of WHATSAPP_EXPORT_NAMES: `Чат WhatsApp с контактом Анна` → `Анна`; else None."""
    if len(stem) > MAX_NAME_CHARS:  # each pattern's search is quadratic in the name's length
        return None
    plain = _COPY_NUMBER.sub("", unicodedata.normalize("NFC", stem.translate(_INVISIBLE_MARKS)))
    plain = " ".join(plain.split())
    for pattern in (*_EXPORT_PATTERNS, _ENGLISH_SHAPED):
        named = pattern.search(plain)  # a renamed copy may have words before
        if named and named["name"].strip():
            return named["name"].strip()
    return None

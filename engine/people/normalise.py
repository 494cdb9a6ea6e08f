"""How a name, an email address, a phone number and a handle are compared.

Two mentions are the same person only through equal normalised forms, so each form here
errs on the side of keeping things apart: a Gmail address keeps its dots (another provider
may treat them as part of the name), a phone number is only completed with a country code
the data itself shows (docs/people.md, "Phone numbers").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

_WORD = re.compile(r"\w+")
_WORD_OR_MARK = re.compile(r"\w+|[^\w\s]")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_PHONE_DIGITS = re.compile(r"\d+")
# A nickname written inside a name (Lars "Lasse" Eriksen), and a remark in parentheses
# (Priya Raman (Heliotrope)): the first is an alias, the second no name at all.
_NICKNAME = re.compile(r"^(?P<before>.*?\S)\s*[\"“”'](?P<nick>[^\"“”']+)[\"“”']\s*(?P<after>.*)$")
_REMARK = re.compile(r"(?<!\s)\s*\([^()]*\)")  # from a space run's start only: linear
# A sender as a group or a service writes them ("'Ann Lee' via Oslo Runners", Google Groups;
# "Ann Lee via LinkedIn"): the sender is Ann Lee, the address is the group's.
_VIA = re.compile(r"^(?P<sender>.*?\S)\s+via\s+(?P<group>\S.*)$")
_QUOTES = "\"'“”‘’ "
# ITU country calling codes are prefix-free: 1 and 7 are the one-digit codes, these the
# two-digit ones; every other code has three digits.
_TWO_DIGIT_CODES = frozenset(
    {20, 27, *range(30, 35), 36, 39, 40, 41, *range(43, 50), *range(51, 59), *range(60, 67)}
    | {81, 82, 84, 86, *range(90, 96), 98}
)
# The same names and numbers recur in every file: each form is worked out once.
CACHED = 1 << 16
MIN_PHONE_DIGITS = 6  # shorter runs of digits are extensions or short codes, not numbers
MAX_NATIONAL_DIGITS = 10  # longer digit runs without a + are taken as already international


@lru_cache(maxsize=CACHED)
def fold(text: str) -> str:
    """Lower case without accents: "José" and "jose" compare equal (ø stays ø)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=CACHED)
def name_tokens(text: str) -> tuple[str, ...]:
    """A name or a text as folded words, punctuation dropped: "Dr. Nilsen" → (dr, nilsen)."""
    return tuple(_WORD.findall(fold(text)))


def text_tokens(text: str) -> tuple[str, ...]:
    """Folded words and each punctuation mark on its own: what a name is found in, so
    "Dr. Nilsen" needs its dot and "Lee. Moe" (two sentences) is not the name Lee Moe."""
    return tuple(_WORD_OR_MARK.findall(fold(text)))


@lru_cache(maxsize=CACHED)
def name_key(name: str) -> str:
    """The form two names are compared in: folded words joined by single spaces."""
    return " ".join(name_tokens(name))


def is_full_name(name: str) -> bool:
    """Two words or more: a first name alone is never enough to join two people."""
    return len(name_tokens(name)) >= 2


@lru_cache(maxsize=CACHED)
def nickname_split(name: str) -> tuple[str, ...]:
    """A name with a nickname inside it as the name and the nickname: 'Lars "Lasse"
    Eriksen' → ("Lars Eriksen", "Lasse"); a remark in parentheses is dropped."""
    plain = _REMARK.sub("", name).strip() or name.strip()
    found = _NICKNAME.match(plain)
    if not found or not found["nick"].strip():
        return (plain,)
    return (f"{found['before']} {found['after']}".strip(), found["nick"].strip())


@lru_cache(maxsize=CACHED)
def via_sender(name: str) -> str | None:
    """The sender of a name a group or a service wrote for them ("'Ann Lee' via Oslo
    Runners" → "Ann Lee"); None when the name is no such thing."""
    found = _VIA.match(name.strip())
    if not found:
        return None
    sender = found["sender"].strip(_QUOTES)
    return sender or None


def slugify(name: str) -> str:
    """A URL-safe id: ASCII letters and digits joined by dashes ("José Núñez" → jose-nunez).
    A name with no ASCII letter at all keeps its own letters ("Алексей" → алексей)."""
    ascii_slug = _NOT_SLUG.sub("-", fold(name)).strip("-")
    if ascii_slug or not name.strip():
        return ascii_slug
    return "-".join(name_tokens(name))


@lru_cache(maxsize=CACHED)
def normalise_email(address: str) -> str:
    """Lower case, `mailto:` and angle brackets gone; dots kept. "" when not an address."""
    text = address.strip().strip("<>").strip()
    if text.lower().startswith("mailto:"):
        text = text[len("mailto:") :]
    text = text.lower()
    local, at, domain = text.partition("@")
    if not (local and at and "." in domain) or " " in text:
        return ""
    return text


def normalise_handle(handle: str) -> str:
    """ "<service>:<id>" with the service in lower case; the id is kept as written (Slack
    ids are case-sensitive). "" when there is no id."""
    service, colon, ident = handle.strip().partition(":")
    if not (colon and service.strip() and ident.strip()):
        return ""
    return f"{service.strip().lower()}:{ident.strip()}"


@lru_cache(maxsize=CACHED)
def phone_digits(phone: str) -> str:
    """The number as written, reduced to digits with a leading + when it is international
    (`+` or `00`); "" when it has too few digits to be a number."""
    text = phone.strip()
    if text.lower().startswith("tel:"):
        text = text[4:]
    digits = "".join(_PHONE_DIGITS.findall(text))
    if len(digits) < MIN_PHONE_DIGITS:
        return ""
    if text.lstrip(" (").startswith("+"):
        return "+" + digits
    if digits.startswith("00"):
        return "+" + digits[2:]
    return digits


def country_code(international: str) -> str:
    """The calling code of a "+<digits>" number: "+4791234567" → "47"."""
    digits = international.lstrip("+")
    if digits[:1] in ("1", "7"):
        return digits[:1]
    if digits[:2].isdigit() and int(digits[:2]) in _TWO_DIGIT_CODES:
        return digits[:2]
    return digits[:3]


def dominant_country_code(phones: Iterable[str]) -> str:
    """The calling code most of the data's international numbers carry; "" when none do."""
    codes = Counter(country_code(p) for p in (phone_digits(x) for x in phones) if p[:1] == "+")
    if not codes:
        return ""
    return min(codes.items(), key=lambda kv: (-kv[1], kv[0]))[0]


@lru_cache(maxsize=CACHED)
def normalise_phone(phone: str, default_code: str = "") -> str:
    """ "+<digits>" for a number written in any common form. A national number (a trunk
    `0…`, or up to 10 digits without one) joins `default_code`; without a code it stays as
    its digits, so it matches only the same national form. More than 10 digits with no
    trunk 0 are taken as international written without the +."""
    digits = phone_digits(phone)
    if not digits or digits.startswith("+"):
        return digits
    trunk = digits.startswith("0")
    if not trunk and len(digits) > MAX_NATIONAL_DIGITS:
        return "+" + digits
    if not default_code:
        return digits
    return f"+{default_code}{digits[1:] if trunk else digits}"

"""Contacts: vCard files (`.vcf`) as phones, Google Contacts and Apple Contacts export them.

A file holds one or more `BEGIN:VCARD` … `END:VCARD` blocks, version 2.1, 3.0 or 4.0. Lines
are folded (a line starting with a space or tab continues the one above); Android's 2.1
exports write non-ASCII names as quoted-printable (`N;CHARSET=UTF-8;ENCODING=QUOTED-
PRINTABLE:M=C3=BCller`) whose soft breaks (`=` ending a line) continue on the next line
without a leading space. Apple groups properties (`item1.EMAIL`, `item1.X-ABLabel`); the
group is ignored. Parsed here rather than with vobject: vobject 0.9.9 stops at the first
quoted-printable soft break (`ParseError: Failed to parse line`), which every Android export
with an accented name holds.

Each contact is one chunk (name, nicknames, organisation, title, emails, phones, birthday,
note) titled by its name, dated by `REV` where the exporter writes one, and one `Mention`
(role "contact").
"""

from __future__ import annotations

import quopri
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import decode, parse_date
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines
from engine.records import Draft, Mention

_LINE = re.compile(
    r"(?:[A-Za-z0-9-]+\.)?(?P<name>[A-Za-z0-9-]+)(?P<params>(?:;[^:]*)?):(?P<value>.*)"
)
_ESCAPES = {"n": "\n", "N": "\n", ",": ",", ";": ";", "\\": "\\"}
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED_SEMICOLON = re.compile(r"(?<!\\);")
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")
MAX_PROPERTY_CHARS = 64 * 1024  # a contact's photo is skipped long before it is decoded


@dataclass(frozen=True)
class Property:
    """One unfolded content line: its name (upper case), parameters and raw value."""

    name: str
    params: tuple[str, ...]  # upper-cased `KEY=VALUE` or 2.1's bare `WORK`
    value: str

    def param(self, key: str) -> str:
        prefix = f"{key}="
        return next((p[len(prefix) :] for p in self.params if p.startswith(prefix)), "")

    @property
    def quoted_printable(self) -> bool:
        return "ENCODING=QUOTED-PRINTABLE" in self.params or "QUOTED-PRINTABLE" in self.params


@dataclass
class Card:
    """One `BEGIN:VCARD` block: the line it starts on and its properties."""

    line: int
    properties: list[Property] = field(default_factory=list)
    ended: bool = False

    def values(self, name: str) -> list[str]:
        return [text(p) for p in self.properties if p.name == name and p.value.strip()]

    def first(self, name: str) -> str:
        found = self.values(name)
        return found[0].strip() if found else ""

    def parts(self, name: str) -> list[str]:
        """The `;`-separated parts of a structured value (N, ORG), unescaped."""
        for prop in self.properties:
            if prop.name == name:
                return [unescape(p).strip() for p in _UNESCAPED_SEMICOLON.split(raw_text(prop))]
        return []


def _params(raw: str) -> tuple[str, ...]:
    return tuple(p.strip().upper() for p in raw.split(";") if p.strip())


def unfold(text: str) -> Iterator[tuple[int, str]]:
    """(line number, logical line): folded lines and quoted-printable soft breaks joined."""
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if current and line[:1] in (" ", "\t"):
            current.append(line[1:])
            continue
        if current and _soft_break("".join(current)):
            current[-1] = current[-1][:-1]
            current.append(line.lstrip())
            continue
        if current:
            yield start, "".join(current)
        current, start = [line], number
    if current:
        yield start, "".join(current)


def _soft_break(line: str) -> bool:
    head = line.split(":", 1)[0].upper()
    return "QUOTED-PRINTABLE" in head and line.endswith("=")


def parse(line: str) -> Property | None:
    match = _LINE.match(line)
    if match is None:
        return None
    value = match["value"][:MAX_PROPERTY_CHARS]
    return Property(match["name"].upper(), _params(match["params"]), value)


def raw_text(prop: Property) -> str:
    """The value with quoted-printable decoded in its charset, escapes still in place."""
    if not prop.quoted_printable:
        return prop.value
    charset = prop.param("CHARSET").lower() or "utf-8"
    decoded = quopri.decodestring(prop.value.encode("utf-8", errors="replace"))
    try:
        return decoded.decode(charset)
    except (LookupError, UnicodeDecodeError):
        return decoded.decode("utf-8", errors="replace")


def unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m[1], m[0]), value)


def text(prop: Property) -> str:
    return unescape(raw_text(prop))


def cards(text_: str, result: Extraction) -> list[Card]:
    """Every contact block of a file; a block cut short is kept, and is a problem."""
    found: list[Card] = []
    card: Card | None = None
    for number, line in unfold(text_):
        upper = line.strip().upper()
        if upper == "BEGIN:VCARD":
            if card is not None:
                result.problems.append(f"line {card.line}: a contact without END:VCARD")
            card = Card(number)
            found.append(card)
        elif upper == "END:VCARD" and card is not None:
            card.ended, card = True, None
        elif card is not None and (prop := parse(line)) is not None:
            card.properties.append(prop)
    if card is not None:
        result.problems.append(f"line {card.line}: a contact without END:VCARD (file cut short?)")
    return found


def structured_name(card: Card) -> tuple[str, ...]:
    """The names N gives: `Given Additional Family` and `Given Family`."""
    parts = card.parts("N") + [""] * 5
    family, given, additional = parts[0], parts[1], parts[2]
    forms = (" ".join(p for p in (given, additional, family) if p), f"{given} {family}".strip())
    return tuple(dict.fromkeys(form for form in forms if form))


def nicknames(card: Card) -> tuple[str, ...]:
    names = (unescape(n).strip() for p in card.properties if p.name == "NICKNAME" for n in
             _UNESCAPED_COMMA.split(raw_text(p)))  # fmt: skip
    return tuple(dict.fromkeys(n for n in names if n))


def display_name(card: Card) -> str:
    named = card.first("FN") or next(iter(structured_name(card)), "")
    return named or organisation(card) or card.first("EMAIL") or next(iter(phones(card)), "")


def phones(card: Card) -> list[str]:
    """The phone numbers, without vCard 4.0's `tel:` URI scheme."""
    return [re.sub(r"^tel:", "", t.strip(), flags=re.IGNORECASE) for t in card.values("TEL")]


def organisation(card: Card) -> str:
    return " · ".join(part for part in card.parts("ORG") if part)


def _lines(card: Card, name: str, aliases: tuple[str, ...]) -> list[str]:
    rows = [
        ("Contact", name),
        ("Also known as", ", ".join(aliases)),
        ("Organisation", organisation(card)),
        ("Title", card.first("TITLE")),
        ("Role", card.first("ROLE")),
        ("Email", ", ".join(card.values("EMAIL"))),
        ("Phone", ", ".join(phones(card))),
        ("Birthday", card.first("BDAY")),
        ("Note", "\n".join(card.values("NOTE"))),
    ]
    return [f"{label}: {value}" for label, value in rows if value]


def contact(card: Card) -> tuple[Draft, Mention] | None:
    """The chunk and the mention of one contact; None for one that names nobody."""
    name = display_name(card)
    if not name:
        return None
    aliases = tuple(a for a in dict.fromkeys(nicknames(card) + structured_name(card)) if a != name)
    when = parse_date(card.first("REV"))
    draft = Draft(
        content="\n".join(_lines(card, name, aliases)),
        title=name,
        content_date=when,
        location=f"line:{card.line}",
        people=(name,),
    )
    mention = Mention(
        name=name,
        aliases=aliases,
        emails=tuple(dict.fromkeys(e.strip() for e in card.values("EMAIL"))),
        phones=tuple(dict.fromkeys(phones(card))),
        org=card.parts("ORG")[0] if card.parts("ORG") else "",
        role="contact",
        first=when,
        last=when,
    )
    return draft, mention


def extract_vcard(data: bytes, path: PurePath) -> Extraction:
    result = Extraction()
    found = cards(decode(data), result)
    if not found:
        raise ExtractError("not a vCard file: no BEGIN:VCARD line")
    for card in found:
        made = contact(card)
        if made is None:
            result.problems.append(f"line {card.line}: a contact with no name, email or phone")
            continue
        result.drafts.append(made[0])
        result.mentions.append(made[1])
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A `.vcf` whose first line opens a contact."""
    lines = head_lines(head)
    return bool(lines) and lines[0].strip().upper() == "BEGIN:VCARD"


READER = FileReader(extract_vcard)
RECOGNISER = Recogniser(
    (".vcf", ".vcard"),
    recognise,
    about="a `.vcf` whose first line is `BEGIN:VCARD` (Google, Apple, Android exports)",
)

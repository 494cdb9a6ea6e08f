"""The people a file names (`engine.records.Mention`): made by the readers, merged per file.

A reader may report one mention per message (count 1, its date as the span); the indexer
merges a file's equal mentions (`Mention.key`) into one with `merge_mentions`, so what the
store keeps is one row per person and role of each file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from engine.records import Mention
from engine.text import clean_text

# A name that is a phone number as WhatsApp and Signal write one: "+44 7700 900123".
_PHONE = re.compile(r"\+?[\d\s().\-\u00a0\u202f]{6,}\Z")
_DIGITS = re.compile(r"\d")


def is_phone_number(text: str) -> bool:
    """Whether `text` is written as a phone number (at least 6 digits, nothing but
    digits, spaces, dots, dashes, brackets and a leading +)."""
    return bool(_PHONE.match(text.strip())) and len(_DIGITS.findall(text)) >= 6


def spoken(
    name: str,
    when: str | None,
    role: str = "author",
    *,
    aliases: tuple[str, ...] = (),
    emails: tuple[str, ...] = (),
    phones: tuple[str, ...] = (),
    handles: tuple[str, ...] = (),
    org: str = "",
) -> Mention:
    """One message's (or turn's) mention of `name`: count 1, spanning `when`.

    A name written as a phone number is the mention's phone, not its name."""
    name = " ".join(name.split())
    if name and is_phone_number(name):
        phones, name = (*phones, name), ""
    return Mention(
        name=name,
        aliases=aliases,
        emails=emails,
        phones=phones,
        handles=handles,
        org=org,
        role=role,
        first=when,
        last=when,
    )


def _clean(texts: Sequence[str]) -> tuple[str, ...]:
    """Each text cleaned and stripped, the empty ones and repeats left out."""
    return tuple(dict.fromkeys(t for t in (clean_text(str(x)).strip() for x in texts) if t))


def cleaned(mention: Mention) -> Mention:
    """The mention with its texts stripped, lone surrogates as U+FFFD, empty values and
    repeated ones dropped, and an alias equal to its name left out."""
    name = clean_text(mention.name).strip()
    return replace(
        mention,
        name=name,
        aliases=tuple(a for a in _clean(mention.aliases) if a != name),
        emails=_clean(mention.emails),
        phones=_clean(mention.phones),
        handles=_clean(mention.handles),
        org=clean_text(mention.org).strip(),
        role=clean_text(mention.role).strip() or "author",
        count=max(1, int(mention.count)),
        first=None if mention.first is None else clean_text(mention.first),
        last=None if mention.last is None else clean_text(mention.last),
    )


def _earliest(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else min(a, b)


def _latest(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else max(a, b)


def merge_mentions(mentions: Iterable[Mention]) -> list[Mention]:
    """A file's mentions with equal ones (`Mention.key`) merged, in first-seen order:
    counts summed, `first` the earliest and `last` the latest. Mentions that name nobody
    (no name, email, phone or handle) are left out."""
    merged: dict[tuple[object, ...], Mention] = {}
    for raw in mentions:
        mention = cleaned(raw)
        if not (mention.name or mention.emails or mention.phones or mention.handles):
            continue
        seen = merged.get(mention.key)
        if seen is None:
            merged[mention.key] = mention
            continue
        merged[mention.key] = replace(
            seen,
            count=seen.count + mention.count,
            first=_earliest(seen.first, mention.first),
            last=_latest(seen.last, mention.last),
        )
    return list(merged.values())

"""The extractor of every source type: each `SourceType.reader` bound to its function.

A reader reads one source type (`READERS`: bytes and path in; `SIBLING_READERS`: the files
beside it too, `SourceType.siblings`, as `Siblings`) or a family of types that differ only in
their `SourceType` row (`FAMILY_READERS`: the row comes first). Every bound extractor takes
(bytes, path, siblings); a reader that needs no sibling ignores them. `REGISTRY` is built
once, at import, from `engine.sources.SOURCE_TYPES`; a type whose reader is missing is an
import error, not a file that fails later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import PurePath

from engine.extractors import (
    NO_SIBLINGS,
    Extraction,
    Extractor,
    Reader,
    Siblings,
    cgm,
    discord,
    documents,
    event,
    garmin,
    google_chat,
    ical,
    imessage,
    mail,
    markdown,
    meta_messages,
    records,
    signal,
    slack,
    structured,
    telegram,
    vcard,
    voice,
    whatsapp,
    zoom_captions,
)
from engine.sources import SOURCE_TYPES, SourceType

FamilyReader = Callable[[SourceType, bytes, PurePath], Extraction]

READERS: Mapping[str, Reader] = {
    "cgm": cgm.extract_cgm,
    "discord": discord.extract_discord,
    "documents": documents.extract_document,
    "event": event.extract_event,
    "garmin": garmin.extract_garmin,
    "ical": ical.extract_ical,
    "mail": mail.extract_email,
    "meeting": zoom_captions.extract_transcript,  # Zoom's saved captions, or extract_meeting
    "signal": signal.extract_signal,
    "telegram": telegram.extract_telegram,
    "vcard": vcard.extract_vcard,
    "voice": voice.extract_voice,
    "whatsapp": whatsapp.extract_whatsapp,
    "imessage": imessage.extract_imessage,
}

SIBLING_READERS: Mapping[str, Extractor] = {
    "slack": slack.extract_slack,
    "google_chat": google_chat.extract_google_chat,
}

FAMILY_READERS: Mapping[str, FamilyReader] = {
    "markdown": markdown.extract_markdown,
    "meta_messages": meta_messages.extract_meta_messages,
    "records": records.extract_records,
    "structured": structured.extract_records,
}


@dataclass(frozen=True)
class WithoutSiblings:
    """A reader that needs only the file, called as every extractor is."""

    read: Reader

    def __call__(
        self, data: bytes, path: PurePath, siblings: Siblings = NO_SIBLINGS, /
    ) -> Extraction:
        return self.read(data, path)


def bind(source: SourceType) -> Extractor:
    """The extractor of one source type; ValueError if its reader does not exist."""
    if source.reader in SIBLING_READERS:
        return SIBLING_READERS[source.reader]
    if source.reader in READERS:
        return WithoutSiblings(READERS[source.reader])
    if source.reader in FAMILY_READERS:
        return WithoutSiblings(partial(FAMILY_READERS[source.reader], source))
    raise ValueError(f"source type '{source.name}': no reader '{source.reader}'")


def build(types: Iterable[SourceType]) -> dict[str, Extractor]:
    """Source type name → extractor; ValueError on a name declared twice."""
    registry: dict[str, Extractor] = {}
    for source in types:
        if source.name in registry:
            raise ValueError(f"source type '{source.name}' is declared twice")
        registry[source.name] = bind(source)
    return registry


REGISTRY: dict[str, Extractor] = build(SOURCE_TYPES)

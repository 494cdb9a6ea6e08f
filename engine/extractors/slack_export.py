"""Slack workspace exports known by their shape: a channel folder's `YYYY-MM-DD.json` day
files, whose parent folder (the export's root) holds `users.json` and `channels.json`."""

from __future__ import annotations

import re

from engine.extractors.sniffing import Recogniser, SiblingCheck, head_text

DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}\.json\Z")
EXPORT_LISTINGS = ("../users.json", "../channels.json")


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """A day file (a JSON array named by its day) inside a channel folder of an export."""
    return (
        DAY_FILE.match(name) is not None
        and all(siblings(listing) for listing in EXPORT_LISTINGS)
        and head_text(head).lstrip()[:1] in ("[", "")
    )


RECOGNISER = Recogniser(
    (".json",),
    recognise,
    about="a `YYYY-MM-DD.json` day file in a channel folder of a folder holding "
    "`users.json` and `channels.json`",
)

"""Every recogniser, by the name a `SourceType.recogniser` gives it: how files are known by
their content wherever they lie under a root (`engine.extractors.sniffing`).

`CONTENT_TYPES` is built once, at import, from `engine.sources.SOURCE_TYPES`, in declaration
order (the first type whose recogniser claims a file takes it); a type naming a recogniser
that does not exist is an import error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from engine.extractors import (
    cgm,
    discord,
    documents,
    garmin,
    google_chat,
    ical,
    imessage,
    mail,
    markdown,
    meta_messages,
    signal,
    slack_export,
    telegram,
    vcard,
    whatsapp,
    zoom_captions,
)
from engine.extractors.sniffing import Recogniser
from engine.sources import SOURCE_TYPES, SourceType

RECOGNISERS: Mapping[str, Recogniser] = {
    "slack_export": Recogniser(
        (".json",),
        slack_export.recognise,
        about="a `YYYY-MM-DD.json` day file in a channel folder of a folder holding "
        "`users.json` and `channels.json`",
    ),
    "telegram": Recogniser(
        ("result.json",),
        telegram.recognise,
        about="Telegram Desktop's `result.json`: `chats`, or a chat's `name` and `messages`",
    ),
    "signal": Recogniser(
        (".jsonl", ".json", ".ndjson"),
        signal.recognise,
        about="signal-cli JSON lines: a first line holding an `envelope` object",
    ),
    "whatsapp": Recogniser(
        (".txt",),
        whatsapp.recognise,
        about="`WhatsApp Chat with NAME.txt` / `_chat.txt` (or any `.txt`) whose first lines "
        "start with a message's date and time",
    ),
    "imessage": Recogniser(
        ("chat.db",),
        imessage.recognise,
        about="Messages' `chat.db` (`~/Library/Messages/`): that name, and an SQLite database",
    ),
    "subtitles": Recogniser(
        (".vtt", ".srt", zoom_captions.CAPTIONS),
        zoom_captions.recognise,
        about="WebVTT (`WEBVTT` first, Zoom's `*.transcript.vtt` too), SRT (cue number, "
        "timing line), or Zoom's `meeting_saved_closed_caption.txt` (`[Name] HH:MM:SS` first)",
    ),
    "mail": Recogniser(
        (".mbox", ".mbx", ".eml", *mail.FOLDER_FILES),
        mail.recognise,
        about="an mbox (a `From ` line, then headers: `.mbox`, or a mail folder's file "
        "without an extension, Thunderbird's `Inbox`, `Sent`, …) or an `.eml` (mail headers "
        "first, or after the `From ` line Thunderbird saves it with)",
    ),
    "garmin": Recogniser(
        (".json",),
        garmin.recognise,
        about="JSON naming `calendarDate` and a daily summary field (`totalSteps`, …)",
    ),
    "cgm": Recogniser(
        (".csv", ".tsv", ".txt"),
        cgm.recognise,
        about="a CSV whose header names a timestamp and a glucose column (Dexcom Clarity, "
        "LibreView)",
    ),
    "markdown": Recogniser(
        (".md",),
        markdown.recognise,
        reads_head=False,
        about="any `.md` (an Obsidian vault's too) but a project's README, CHANGELOG, LICENSE…",
    ),
    "vcard": Recogniser(
        (".vcf", ".vcard"),
        vcard.recognise,
        about="a `.vcf` whose first line is `BEGIN:VCARD` (Google, Apple, Android exports)",
    ),
    "ical": Recogniser(
        (".ics", ".ical"),
        ical.recognise,
        about="an `.ics` whose first line is `BEGIN:VCALENDAR`",
    ),
    "discord": Recogniser(
        (".json",),
        discord.recognise,
        about="DiscordChatExporter's JSON: an object opening with `guild` and `channel`",
    ),
    "meta_messages": Recogniser(
        (".json",),
        meta_messages.recognise,
        about="`message_N.json` with `participants`, and `messages` of `sender_name` and "
        "`timestamp_ms` (Meta's download)",
    ),
    "google_chat": Recogniser(
        (".json",),
        google_chat.recognise,
        about="`messages.json` whose messages have a `creator` and a `created_date` (Takeout)",
    ),
    "documents": Recogniser(
        (".pdf", ".docx", ".html", ".htm", ".txt"),
        documents.recognise,
        about="a PDF (`%PDF-` first), a `.docx`, a saved web page, or a `.txt` of prose",
    ),
}


def bind(types: Iterable[SourceType]) -> tuple[tuple[str, Recogniser], ...]:
    """(source type, recogniser) of every type that recognises by content, in order;
    ValueError for a recogniser that does not exist."""
    bound = []
    for source in types:
        if not source.recogniser:
            continue
        if source.recogniser not in RECOGNISERS:
            raise ValueError(f"source type '{source.name}': no recogniser '{source.recogniser}'")
        bound.append((source.name, RECOGNISERS[source.recogniser]))
    return tuple(bound)


CONTENT_TYPES: tuple[tuple[str, Recogniser], ...] = bind(SOURCE_TYPES)
# Every name ending some recogniser looks at: a file ending otherwise is never read.
SUFFIXES: tuple[str, ...] = tuple(sorted({s for _, r in CONTENT_TYPES for s in r.suffixes}))

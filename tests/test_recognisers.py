"""Every recogniser against the real shapes it must claim and the look-alikes it must not."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.extractors import mail
from engine.extractors.recognisers import CONTENT_TYPES, RECOGNISERS, SUFFIXES, bind
from engine.extractors.sniffing import HEAD_BYTES, head_lines, json_keys, no_siblings
from engine.index.recognise import candidates, exclusion
from engine.sources import SOURCE_TYPES, SourceType

FIXTURES = Path(__file__).parent / "fixtures"


def _head(fixture: str) -> bytes:
    return (FIXTURES / fixture).read_bytes()[:HEAD_BYTES]


def claims(name: str, head: bytes, siblings: object = no_siblings) -> str | None:
    """The type the first claiming recogniser gives a file, as discovery asks them."""
    for source_type, recogniser in candidates(name):
        if recogniser.test(name, head, siblings):  # type: ignore[arg-type]
            return source_type
    return None


def export_listings(relative: str) -> bool:
    return relative in ("../users.json", "../channels.json")


REAL = [
    ("slack/export/general/2024-03-11.json", "2024-03-11.json", "slack"),
    ("telegram/full/result.json", "result.json", "telegram"),
    ("telegram/export/result.json", "result.json", "telegram"),
    ("signal/signal.jsonl", "signal.jsonl", "signal"),
    ("signal/groups.jsonl", "messages.json", "signal"),
    ("whatsapp/WhatsApp Chat with Raj Patel.txt", "WhatsApp Chat with Raj Patel.txt", "whatsapp"),
    ("whatsapp/_chat.txt", "_chat.txt", "whatsapp"),
    ("whatsapp/WhatsApp Chat mit Lena Weber.txt", "notes from lena.txt", "whatsapp"),
    ("meeting/GMT20240311-100000_Recording.transcript.vtt", "x.transcript.vtt", "meeting"),
    ("meeting/interview.srt", "interview.srt", "meeting"),
    ("email_catalog/inbox.mbox", "All mail Including Spam and Trash.mbox", "email_catalog"),
    ("email_catalog/reply.eml", "reply.eml", "email_catalog"),
    ("email_catalog/newsletter.eml", "newsletter.eml", "email_catalog"),
    ("garmin/2024-03-11.json", "2024-03-11.json", "garmin"),
    ("garmin/week.json", "garmin-week.json", "garmin"),
    ("cgm/dexcom.csv", "clarity.csv", "cgm"),
    ("cgm/libreview.csv", "AlexExample_glucose.csv", "cgm"),
    ("cgm/libreview-semicolon.csv", "glucose.csv", "cgm"),
    ("note/vault/Heron survey.md", "Heron survey.md", "note"),
]


@pytest.mark.parametrize(("fixture", "name", "expected"), REAL, ids=[r[1] for r in REAL])
def test_each_real_shape_is_claimed_by_its_type(fixture: str, name: str, expected: str) -> None:
    assert claims(name, _head(fixture), export_listings) == expected


LOOK_ALIKES = [
    ("package.json", b'{"name": "webapp", "version": "1.0.0", "messages": "none"}'),
    ("tsconfig.json", b'{"compilerOptions": {"strict": true}}'),
    ("2024-03-11.json", b'[{"type": "message", "text": "no export around me"}]'),
    ("result.json", b'{"result": "ok", "name": "build"}'),
    ("data.jsonl", b'{"event": "login", "envelope": "flat string"}\n'),
    ("notes.txt", b"eggs\nmilk\n12/03/2024 dentist\n"),
    ("diary.txt", b"12/03/2024, 14:05 - Raj: only one line looks like a chat\nthen prose\nmore\n"),
    ("captions.vtt", b"Not a WebVTT file at all\n"),
    ("movie.srt", b"Some text\nwithout cues\n"),
    ("archive.mbox", b"Subject: no From line first\n\nbody\n"),
    ("message.eml", b"just some words, no headers\n"),
    ("fitness.json", b'{"calendarDate": "2024-03-11", "colour": "red"}'),
    ("report.csv", b"date,region,revenue\n2024-03-01,EU,1200\n"),
    ("README.md", b"# A project\n"),
    ("CHANGELOG.md", b"## 1.0\n"),
    ("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF"),
]


@pytest.mark.parametrize(("name", "head"), LOOK_ALIKES, ids=[n for n, _ in LOOK_ALIKES])
def test_look_alikes_are_not_claimed(name: str, head: bytes) -> None:
    assert claims(name, head) is None  # nothing beside them: no Slack export's listings


def test_a_slack_day_file_needs_both_listings_beside_its_folder() -> None:
    head = _head("slack/export/general/2024-03-11.json")
    assert claims("2024-03-11.json", head, lambda r: r == "../users.json") is None
    assert claims("2024-03-11.json", head, lambda r: r == "../channels.json") is None


def test_only_names_a_recogniser_reads_are_candidates() -> None:
    assert candidates("photo.JPG") == [] and candidates("archive.zip") == []
    assert [t for t, _ in candidates("Notes.MD")] == ["note"]
    assert [t for t, _ in candidates("x.json")] == [
        *("slack", "signal", "garmin", "discord", "messenger", "google_chat")
    ]
    named = ("result", "chat.db", "meeting_saved", *mail.FOLDER_FILES)  # known by a whole name
    assert all(name.startswith((".", *named)) for name in SUFFIXES)


def test_a_disabled_type_is_not_a_candidate() -> None:
    disabled = ("garmin", "discord", "messenger", "google_chat")
    assert [t for t, _ in candidates("x.json", disabled)] == ["slack", "signal"]


def test_every_declared_recogniser_exists_and_a_missing_one_is_an_error() -> None:
    declared = [t.name for t in SOURCE_TYPES if t.recogniser]
    assert [t for t, _ in CONTENT_TYPES] == declared
    assert {t.recogniser for t in SOURCE_TYPES if t.recogniser} <= set(RECOGNISERS)
    assert all(r.about for r in RECOGNISERS.values())
    with pytest.raises(ValueError, match="no recogniser 'nope'"):
        bind([SourceType("x", "X", "markdown", 1, recogniser="nope")])


def test_the_formats_doc_lists_every_recogniser() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "formats.md").read_text(encoding="utf-8")
    for source in SOURCE_TYPES:
        if source.recogniser:
            assert f"| {source.name} | `{source.recogniser}` |" in doc, source.name


def test_a_cut_head_drops_its_last_line_and_keeps_keys() -> None:
    head = (b'{"calendarDate": "2024-03-11",\n' * 200)[:HEAD_BYTES]
    assert not head_lines(head)[-1].endswith('"2024-0')
    assert json_keys('{"a": 1, "b\\"c": {"d": [') == {"a", 'b"c', "d"}


@pytest.mark.parametrize(
    ("relative", "rule"),
    [
        ("src/app/node_modules", "node_modules"),
        ("Library/Caches", "Library/Caches"),
        ("Users/me/AppData/Local", "AppData/Local"),
        ("Applications/Tool.app", "*.app"),
        (".local/share/Trash", ".local/share/Trash"),
        ("Library", ""),
        ("Documents/cache-notes", ""),
    ],
)
def test_exclusion_by_name_or_path_end(relative: str, rule: str, tmp_path: Path) -> None:
    patterns = ("node_modules", "Library/Caches", "AppData/Local", "*.app", ".local/share/Trash")
    assert exclusion(relative, tmp_path, patterns) == rule


def test_a_virtualenv_is_excluded_whatever_its_name(tmp_path: Path) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert exclusion("projects/tools-env", tmp_path, ()) == "virtualenv"


def test_a_mail_clients_folder_files_without_an_extension_are_mbox() -> None:
    """Thunderbird keeps each folder as an mbox named like the folder (`Inbox`, `Sent`)."""
    mbox = (FIXTURES / "email_catalog" / "inbox.mbox").read_bytes()[:HEAD_BYTES]
    recognise = RECOGNISERS["mail"].test
    assert recognise("Inbox", mbox, no_siblings) and recognise("INBOX", mbox, no_siblings)
    assert not recognise("Sent", b"sent the parcel on monday\n", no_siblings)
    assert [t for t, _ in candidates("Inbox")] == ["email_catalog"]
    assert candidates("Inbox.msf") == []  # Thunderbird's index beside it


def test_a_whatsapp_export_is_known_by_its_name_whatever_its_dates() -> None:
    """So that one in a date format no reader knows is one clear error, not silence."""
    head = "2024年3月12日 14:05 - Raj: hi\n".encode()
    assert RECOGNISERS["whatsapp"].test("WhatsApp Chat with Raj.txt", head, no_siblings)
    assert RECOGNISERS["whatsapp"].test("WhatsApp Chat mit Lena.txt", head, no_siblings)
    assert not RECOGNISERS["whatsapp"].test("WhatsApp notes.txt", head, no_siblings)

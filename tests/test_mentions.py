"""Mentions: every reader says who its file names, and a file's equal mentions merge into one."""

from __future__ import annotations

import json
from pathlib import Path, PurePath

import pytest

from engine.extractors import Siblings, get_extractor
from engine.extractors.mentions import is_phone_number, merge_mentions, spoken
from engine.extractors.slack import USERS
from engine.records import Mention
from tests.sibling_files import siblings_on_disk

FIXTURES = Path(__file__).parent / "fixtures"


def mentions_of(source_type: str, relative: str) -> list[Mention]:
    """The merged mentions of a fixture file, read as the indexer reads it."""
    path = FIXTURES / source_type / relative
    siblings = siblings_on_disk(path, source_type)
    extraction = get_extractor(source_type)(path.read_bytes(), path, siblings)
    return merge_mentions(extraction.mentions)


def by_name(mentions: list[Mention], role: str | None = None) -> dict[str, Mention]:
    return {m.name: m for m in mentions if role is None or m.role == role}


# -- merging ---------------------------------------------------------------------------------


def test_equal_mentions_merge_counts_and_span() -> None:
    merged = merge_mentions(
        [
            spoken("Ana Lima", "2024-03-11T10:00:00"),
            spoken("Ben", "2024-03-10T09:00:00"),
            spoken("Ana Lima", "2024-03-09T08:00:00"),
            spoken("Ana Lima", None),
            Mention(name="Ana Lima", count=3, first="2024-03-12", last="2024-03-13"),
        ]
    )
    assert [m.name for m in merged] == ["Ana Lima", "Ben"]  # first-seen order
    ana = merged[0]
    assert (ana.count, ana.first, ana.last) == (6, "2024-03-09T08:00:00", "2024-03-13")


def test_mentions_differing_in_role_or_id_stay_apart() -> None:
    merged = merge_mentions(
        [
            spoken("Ana", "2024-01-01", handles=("slack:U1",)),
            spoken("Ana", "2024-01-02", handles=("slack:U2",)),
            spoken("Ana", "2024-01-03", role="recipient", handles=("slack:U1",)),
        ]
    )
    assert len(merged) == 3


def test_merging_cleans_and_drops_mentions_of_nobody() -> None:
    merged = merge_mentions(
        [
            Mention(name="  ", aliases=("", " ")),
            Mention(name=" Ana\ud800 ", aliases=(" Ana\ud800 ", "ana", "ana"), emails=(" a@x ",)),
        ]
    )
    assert merged == [Mention(name="Ana\ufffd", aliases=("ana",), emails=("a@x",))]


@pytest.mark.parametrize(
    ("text", "phone"),
    [("+44 7700 900123", True), ("(555) 010-0199", True), ("Raj Patel", False), ("2024", False)],
)
def test_a_name_written_as_a_number_is_a_phone(text: str, phone: bool) -> None:
    assert is_phone_number(text) is phone
    mention = spoken(text, None)
    assert (mention.phones == (text,)) is phone and (mention.name == "") is phone


# -- each reader -----------------------------------------------------------------------------


def test_slack_export_authors_come_from_users_json() -> None:
    found = by_name(mentions_of("slack", "export/general/2024-03-11.json"))
    assert set(found) == {"Ana Lima", "Ben Okafor", "Dan W."}  # the bot is nobody
    ana = found["Ana Lima"]
    assert ana.aliases == ("ana",) and ana.handles == ("slack:U01ANA",)
    assert (ana.org, ana.role, ana.count) == ("T0EXAMPLE", "author", 2)
    assert ana.first == "2024-03-11T08:01:00" and ana.last == "2024-03-11T12:00:00"
    assert found["Ben Okafor"].count == 3


def test_slack_dm_members_are_recipients() -> None:
    mentions = mentions_of("slack", "export/mpdm-ana--ben--dan-1/2024-03-12.json")
    recipients = by_name(mentions, "recipient")
    assert set(recipients) == {"Ana Lima", "Ben Okafor", "Dan W."}
    assert recipients["Ben Okafor"].count == 2  # both messages, written by the others
    assert set(by_name(mentions, "author")) == {"Ana Lima", "Dan W."}


def test_slack_email_and_org_fallback(tmp_path: Path) -> None:
    listing = [
        {"id": "U9", "profile": {"real_name": "Zoe Park", "display_name": "zp", "email": "z@x.io"}},
        {"id": "B1", "is_bot": True, "profile": {"real_name": "CI"}},
    ]
    day = [
        {"type": "message", "user": "U9", "text": "hello", "ts": "1710144000.1"},
        {"type": "message", "user": "B1", "text": "build ok", "ts": "1710144001.1"},
        {"type": "message", "user": "U7", "text": "who am I", "ts": "1710144002.1"},
    ]
    path = PurePath("acme-export/general/2024-03-11.json")
    siblings = Siblings({USERS: json.dumps(listing).encode()})
    extraction = get_extractor("slack")(json.dumps(day).encode(), path, siblings)
    found = merge_mentions(extraction.mentions)
    assert found == [
        Mention(
            name="Zoe Park",
            aliases=("zp",),
            emails=("z@x.io",),
            handles=("slack:U9",),
            org="acme-export",  # no team id: the export's folder
            first="2024-03-11T08:00:00",
            last="2024-03-11T08:00:00",
        ),
        Mention(
            handles=("slack:U7",),
            org="acme-export",
            first="2024-03-11T08:00:02",
            last="2024-03-11T08:00:02",
        ),
    ]


def test_slack_synced_log_authors_carry_their_id() -> None:
    found = by_name(mentions_of("slack", "general.jsonl"))
    assert set(found) == {"Ana Lima", "Ben Okafor", "Chiara Rossi"}
    assert found["Chiara Rossi"].handles == ("slack:U03CHI",)
    assert found["Chiara Rossi"].count == 2


def test_slack_bots_are_nobody() -> None:
    log = "\n".join(
        json.dumps({"ts": f"17100000{n}.0", "user": uid, "user_name": name, "text": "hi"})
        for n, (uid, name) in enumerate(
            [("B03ALRTMG", "Alertmanager"), ("USLACKBOT", "Slackbot"), ("U02BEN", "Ben Okafor")]
        )
    )
    found = get_extractor("slack")(log.encode(), PurePath("incidents.jsonl")).mentions
    assert [m.name for m in found] == ["Ben Okafor"]


def test_telegram_export_authors_carry_from_id() -> None:
    found = by_name(mentions_of("telegram", "export/result.json"))
    assert found["Priya Nair"].handles == ("telegram:user4815162342",)
    assert found["Priya Nair"].count == 2  # a bare photo is no message


def test_telegram_log_authors_are_names() -> None:
    found = by_name(mentions_of("telegram", "family.jsonl"))
    assert {"Mum", "Leo", "Priya"} <= set(found)
    assert found["Mum"].count == 2 and found["Mum"].handles == ()


def test_signal_sources_and_destinations() -> None:
    mentions = mentions_of("signal", "signal.jsonl")
    maya = [m for m in mentions if m.name == "Maya Chen"]
    assert {m.role for m in maya} == {"author", "recipient"}
    assert all(m.phones == ("+15550100001",) for m in maya)
    assert any(m.handles == ("signal:a1b2c3d4-0000-4000-8000-000000000001",) for m in maya)
    assert not any("+15550100000" in m.phones for m in mentions)  # the account itself


def test_whatsapp_authors_and_a_number_as_a_phone(tmp_path: Path) -> None:
    found = by_name(mentions_of("whatsapp", "WhatsApp Chat with Raj Patel.txt"))
    assert set(found) == {"Raj Patel", "Maya Chen"} and found["Raj Patel"].count == 4
    chat = "12/03/2024, 09:14 - +44 7700 900123: hi there\n12/03/2024, 09:15 - Raj: hello\n"
    path = PurePath("WhatsApp Chat with Raj.txt")
    mentions = merge_mentions(get_extractor("whatsapp")(chat.encode(), path).mentions)
    assert mentions[0] == Mention(
        phones=("+44 7700 900123",), first="2024-03-12T09:14:00", last="2024-03-12T09:14:00"
    )
    assert mentions[1].name == "Raj"


def test_mail_from_to_and_cc(tmp_path: Path) -> None:
    found = mentions_of("email_catalog", "inbox.mbox")
    ana = next(m for m in found if m.name == "Ana Lima")
    assert (ana.emails, ana.role) == (("ana@example.com",), "author")
    recipients = {m.emails[0] for m in found if m.role == "recipient"}
    assert {"alex@example.com", "ben@example.com"} <= recipients
    eml = (
        b"From: Kim Lee <kim@example.com>\nTo: Alex <alex@example.com>\n"
        b'Cc: "Doe, Jo" <jo@example.com>, sam@example.com\nSubject: hi\n'
        b"Date: Fri, 15 Mar 2024 10:00:00 +0000\n\nHello\n"
    )
    mail = merge_mentions(get_extractor("email_catalog")(eml, PurePath("m.eml")).mentions)
    assert [(m.name, m.emails[0], m.role) for m in mail] == [
        ("Kim Lee", "kim@example.com", "author"),
        ("Alex", "alex@example.com", "recipient"),
        ("Doe, Jo", "jo@example.com", "recipient"),
        ("", "sam@example.com", "recipient"),
    ]


def test_a_mailing_names_nobody() -> None:
    eml = (
        b"From: Shop <news@shop.example>\nTo: alex@example.com\nList-Id: <news.shop.example>\n"
        b"Subject: Sale\nDate: Fri, 15 Mar 2024 10:00:00 +0000\n\nBuy now\n"
    )
    assert get_extractor("email_catalog")(eml, PurePath("n.eml")).mentions == []


def test_mail_catalog_names_without_an_address() -> None:
    found = by_name(mentions_of("email_catalog", "catalog.jsonl"))
    assert found["Dr. Weber's practice"].emails == ()
    assert found["Landlord"].emails == ("rent@flat.example",)


def test_meeting_speakers_and_attendees() -> None:
    mentions = mentions_of("meeting", "2024-03-12-design-review.md")
    speakers = by_name(mentions, "speaker")
    assert set(speakers) == {"Ana Lima", "Ben Okafor", "Dan W."}
    assert speakers["Ana Lima"].count == 2 and speakers["Ana Lima"].first == "2024-03-12"
    assert set(by_name(mentions, "attendee")) == {"Ana Lima", "Ben Okafor", "Dan W."}


def test_subtitle_speakers() -> None:
    found = by_name(mentions_of("meeting", "GMT20240311-100000_Recording.transcript.vtt"))
    assert set(found) == {"Dana Okafor", "Priya Shah"}
    assert all(m.role == "speaker" for m in found.values())


def test_an_entity_file_of_a_person_is_a_note_mention() -> None:
    assert mentions_of("entity_file", "ana-lima.md") == [
        Mention(name="Ana Lima", aliases=("Ana",), role="note")
    ]
    assert mentions_of("entity_file", "bad-project.md") == []


@pytest.mark.parametrize(
    ("relative", "text"),
    [
        ("vault/People/Raj Patel.md", "Met at the ferry.\n"),
        ("vault/work/people/Raj Patel.md", "Met at the ferry.\n"),
        ("vault/Raj Patel.md", "---\ntags: [friend, person]\n---\nMet at the ferry.\n"),
        ("vault/Raj Patel.md", "---\ntags: '#person'\n---\nMet at the ferry.\n"),
        ("vault/Raj Patel.md", "Met at the ferry. #person\n"),
        ("vault/Raj Patel.md", "---\ntype: person\n---\nMet at the ferry.\n"),
    ],
)
def test_person_notes(relative: str, text: str) -> None:
    mentions = get_extractor("note")(text.encode(), PurePath(relative)).mentions
    assert [(m.name, m.role) for m in mentions] == [("Raj Patel", "note")]


def test_a_person_note_gives_aliases_and_contact_fields() -> None:
    text = (
        "---\ntitle: Rajesh Kumar\naliases: [Raj, RK]\nemail: raj@example.com\n"
        "phone: '+44 7700 900123'\ncompany: Heron Labs\ndate: 2024-03-01\n---\nNotes.\n"
    )
    (mention,) = get_extractor("note")(text.encode(), PurePath("People/raj.md")).mentions
    assert mention == Mention(
        name="Rajesh Kumar",
        aliases=("Raj", "RK"),
        emails=("raj@example.com",),
        phones=("+44 7700 900123",),
        org="Heron Labs",
        role="note",
        first="2024-03-01",
        last="2024-03-01",
    )


@pytest.mark.parametrize(
    "text", ["Ideas for #personal growth\n", "---\ntags: [personal]\n---\nx\n", "A note.\n"]
)
def test_other_notes_name_nobody(text: str) -> None:
    assert get_extractor("note")(text.encode(), PurePath("vault/Ideas.md")).mentions == []


def test_code_docs_are_never_person_notes() -> None:
    text = b"---\ntags: [person]\n---\nx\n"
    assert get_extractor("codebase_doc")(text, PurePath("people/x.md")).mentions == []

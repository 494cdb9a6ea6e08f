"""The readers of contacts, calendars, Discord, Messenger/Instagram, Google Chat and
documents: what each makes of its tool's real shapes, the people it reports, and the
look-alikes their recognisers leave alone."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Siblings
from engine.extractors.discord import extract_discord
from engine.extractors.documents import extract_document, is_prose
from engine.extractors.google_chat import created, extract_google_chat
from engine.extractors.ical import extract_ical
from engine.extractors.meta_messages import repaired
from engine.extractors.recurrence import recurrence_words
from engine.extractors.registry import REGISTRY
from engine.extractors.vcard import extract_vcard
from engine.index.routes import DEFAULT_ROUTES, route_for
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.pdf_files import broken_xref_pdf, encrypted_pdf, text_pdf
from tests.test_recognisers import claims

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(relative: str) -> bytes:
    return (FIXTURES / relative).read_bytes()


def test_android_quoted_printable_names_and_soft_breaks() -> None:
    result = extract_vcard(fixture("contact/android.vcf"), PurePath("android.vcf"))
    assert not result.problems
    first = result.drafts[0]
    assert first.title == "Jürgen Müller"
    assert "Note: Schlüssel für die Werkstatt, Tor 2 – Code 4711" in first.content
    assert result.mentions[0].phones == ("+49 151 23456789", "+49 30 1234567")


def test_each_contact_is_a_mention_with_nicknames_and_name_forms() -> None:
    result = extract_vcard(fixture("contact/contacts.vcf"), PurePath("contacts.vcf"))
    ana, ben = result.mentions
    assert (ana.name, ana.aliases, ana.org, ana.role) == (
        "Ana Lima",
        ("Annie",),
        "Acme Ltd.",
        "contact",
    )
    assert ana.emails == ("ana.lima@example.com", "ana@acme.example")
    assert ben.aliases == ("Ben", "Benji", "Benjamin Chidi Okafor", "Benjamin Okafor")
    apple = extract_vcard(fixture("contact/apple.vcf"), PurePath("apple.vcf"))
    assert apple.drafts[0].content_date == "2024-03-11T09:30:00"  # REV
    assert "Follow-up in April." in apple.drafts[0].content  # folded, photo skipped
    assert "9j/4AAQ" not in apple.drafts[0].content


def test_a_contact_cut_short_is_kept_and_a_nameless_one_is_a_problem() -> None:
    result = extract_vcard(fixture("contact/bad-contacts.vcf"), PurePath("bad.vcf"))
    assert [d.title for d in result.drafts] == ["Dan Wu", "Lena Weber"]
    assert result.mentions[1].phones == ("+49-170-5550199",)  # vCard 4.0's tel: URI
    assert len(result.problems) == 2
    with pytest.raises(ExtractError, match="no BEGIN:VCARD"):
        extract_vcard(b"just text\n", PurePath("x.vcf"))


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        ({"FREQ": ["DAILY"]}, "every day"),
        (
            {"FREQ": ["WEEKLY"], "INTERVAL": [2], "BYDAY": ["TU", "TH"]},
            "every 2 weeks on Tuesday and Thursday",
        ),
        (
            {"FREQ": ["MONTHLY"], "BYDAY": ["-1FR"], "COUNT": [3]},
            "every month on the last Friday, 3 times",
        ),
        ({"FREQ": ["MONTHLY"], "BYMONTHDAY": [15]}, "every month on the 15th"),
        (
            {"FREQ": ["YEARLY"], "BYMONTH": [3], "BYMONTHDAY": [12]},
            "every year on the 12th in March",
        ),
    ],
)
def test_recurrence_rules_in_words(rule: dict[str, list[object]], words: str) -> None:
    assert recurrence_words(rule) == words


def test_a_series_is_one_chunk_and_cancelled_events_are_skipped() -> None:
    result = extract_ical(fixture("calendar/basic.ics"), PurePath("basic.ics"))
    titles = [d.title for d in result.drafts]
    assert titles == [
        "Heron survey sync",
        "Heron survey sync (moved)",
        "Camping weekend",
        "Book club",
    ]
    series = result.drafts[0]
    assert series.content_date == "2024-03-11T10:00:00"  # 10:00 GMT
    assert "Repeats: every week on Monday and Wednesday, until 2024-06-24" in series.content
    assert "Lunch with Raj" not in " ".join(titles)
    roles = [(m.role, m.name, m.emails) for m in result.mentions[:3]]
    assert roles == [
        ("organiser", "Ana Lima", ("ana.lima@example.com",)),
        ("attendee", "Ben Okafor", ("ben.okafor@example.org",)),
        ("attendee", "", ("dan@example.com",)),  # Google writes the address as its CN
    ]


def test_a_broken_event_is_a_problem_and_the_others_are_read() -> None:
    result = extract_ical(fixture("calendar/bad-calendar.ics"), PurePath("bad.ics"))
    assert [d.title for d in result.drafts] == ["Dentist", "Broken start", "No start at all"]
    assert [d.content_date for d in result.drafts[1:]] == [None, None]  # kept undated
    assert len(result.problems) == 1 and len(result.notes) == 1
    with pytest.raises(ExtractError):
        extract_ical(b"BEGIN:VCARD\nEND:VCARD\n", PurePath("x.ics"))


def test_discord_authors_are_mentions_with_their_handles() -> None:
    name = "Climbing Crew - Text Channels - trip-planning [1101234567890999999].json"
    result = extract_discord(fixture(f"discord/{name}"), PurePath(name))
    assert result.drafts[0].title == "#trip-planning · 2024-03-11"
    assert "[file: stanage-topo.pdf]" in result.drafts[0].content
    ana = result.mentions[0]
    assert (ana.name, ana.aliases, ana.handles) == (
        "Ana",
        ("ana.lima",),
        ("discord:482734561234567890",),
    )
    assert (ana.count, ana.org, ana.first, ana.last) == (
        3,
        "Climbing Crew",
        "2024-03-11T09:01:12",
        "2024-03-12T19:30:00",
    )


def test_meta_text_is_repaired_and_text_written_right_is_kept() -> None:
    assert repaired("Ren\u00c3\u00a9e \u00f0\u009f\u008e\u0089") == "Renée 🎉"
    assert repaired("Renée 🎉") == "Renée 🎉"  # a correct export reads the same
    assert repaired("caf\u00e9") == "café"  # latin-1 that is no UTF-8: kept
    thread = {
        "participants": [{"name": "Renée"}, {"name": "Alex"}],
        "messages": [
            {"sender_name": "Renée", "timestamp_ms": 1710151200000, "content": "À demain"}
        ],
        "title": "Renée",
    }
    result = REGISTRY["messenger"](json.dumps(thread).encode(), PurePath("message_1.json"))
    assert result.drafts[0].content == "Renée: À demain"
    assert result.drafts[0].title == "Renée · 2024-03-11"


def test_the_messenger_fixture_reads_as_written_in_the_app() -> None:
    path = "messenger/message_1.json"
    result = REGISTRY["messenger"](fixture(path), PurePath(path))
    first, later = result.drafts  # a day's silence starts a new window
    assert first.content.splitlines()[:2] == [
        "Alex Example: Hi Renée! Are you free this weekend?",
        "Renée Dubois: Tu viens au marché de Noël? Crème brûlée stand is back",
    ]
    assert "Reacted" not in later.content and "Parfait, à samedi ! 🎉" in later.content
    assert [m.name for m in result.mentions] == ["Alex Example", "Renée Dubois"]


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        (
            "Downloads/instagram-alex.example-2024-03-15-abcd/your_instagram_activity/messages/inbox/maya_1/message_1.json",
            "instagram",
        ),
        (
            "Downloads/instagram-alex.example-2024-03-15-abcd/messages/inbox/maya_1/message_1.json",
            "instagram",
        ),
        (
            "Downloads/facebook-alex-2024-03-15/your_facebook_activity/messages/inbox/renee_1/message_1.json",
            None,
        ),
    ],
)
def test_instagram_is_known_by_its_folders(relative: str, expected: str | None) -> None:
    assert route_for(relative, DEFAULT_ROUTES) == expected  # Messenger: by its content


@pytest.mark.parametrize(
    "text",
    [
        "Wednesday, March 13, 2024 at 2:05:31\u202fPM UTC",
        "Wednesday, March 13, 2024 at 2:05:31 PM UTC",
    ],
)
def test_google_chat_dates_in_both_spacings(text: str) -> None:
    assert created(text) == "2024-03-13T14:05:31"


def test_google_chat_without_group_info_is_named_after_its_folder() -> None:
    path = PurePath("Google Chat/Groups/Space AAAAq1w2e3r/messages.json")
    data = fixture("google_chat/messages.json")
    alone = extract_google_chat(data, path)
    assert alone.drafts[0].title == "Space AAAAq1w2e3r · 2024-03-13"
    info = fixture("google_chat/group_info.json")
    named = extract_google_chat(data, path, Siblings({"group_info.json": info}))
    assert named.drafts[0].title == "Heron survey team · 2024-03-13"
    assert named.mentions[0].emails == ("ana.lima@example.com",)


def test_an_encrypted_or_broken_pdf_is_one_clear_error() -> None:
    with pytest.raises(ExtractError, match="encrypted PDF"):
        extract_document(encrypted_pdf(), PurePath("private.pdf"))
    with pytest.raises(ExtractError) as caught:
        extract_document(broken_xref_pdf(), PurePath("broken.pdf"))
    assert str(caught.value) == (
        "not a readable PDF: damaged, cut short or not a PDF at all (pypdf could not repair it)"
    )
    with pytest.raises(ExtractError, match="no text layer|without a text layer"):
        extract_document(text_pdf([[]]), PurePath("scan.pdf"))


def test_a_pdf_page_is_its_location() -> None:
    result = extract_document(text_pdf([["one"], ["two"]], title="Two pages"), PurePath("x.pdf"))
    assert [(d.title, d.location) for d in result.drafts] == [
        ("Two pages › page 1", "page:1"),
        ("Two pages › page 2", "page:2"),
    ]


def test_docx_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "docx", None)
    with pytest.raises(ExtractError, match=r"memex\[documents\]"):
        extract_document(fixture("document/Garden plan.docx"), PurePath("Garden plan.docx"))


PROSE_DECOYS = {
    "shopping list.txt": "eggs\nmilk\n12/03/2024 dentist\n",
    "server.txt": "\n".join(
        f"2024-03-12 10:00:{i:02d} INFO request served in 12 ms" for i in range(20)
    ),
    "settings.txt": "\n".join(f"option_{i} = value number {i} for the tool" for i in range(20)),
    "requirements.txt": "numpy>=1.26\napsw>=3.46\n",
    "LICENSE.txt": "Permission is hereby granted, free of charge, to any person obtaining a copy. "
    * 5,
}


@pytest.mark.parametrize("name", PROSE_DECOYS)
def test_text_files_that_are_no_documents_stay_out(name: str) -> None:
    assert claims(name, PROSE_DECOYS[name].encode()) is None


def test_a_project_page_is_no_saved_page_and_prose_is() -> None:
    template = b"<!doctype html><html><head><title>App</title></head><body><div id=root></div>"
    assert claims("index.html", template) is None
    assert claims("letter.txt", fixture("document/letter to the council.txt")) == "document"
    assert is_prose(fixture("document/letter to the council.txt").decode())


REAL = [
    ("contact/contacts.vcf", "contacts.vcf", "contact"),
    ("calendar/basic.ics", "ana.lima@example.com.ics", "calendar"),
    (
        "discord/Climbing Crew - Text Channels - trip-planning [1101234567890999999].json",
        "x.json",
        "discord",
    ),
    ("messenger/message_1.json", "message_1.json", "messenger"),
    ("google_chat/messages.json", "messages.json", "google_chat"),
    ("document/Heron survey report 2024.pdf", "report.pdf", "document"),
    ("document/Garden plan.docx", "Garden plan.docx", "document"),
    ("document/Lakeside loop - Trail notes.html", "Lakeside loop.html", "document"),
]


@pytest.mark.parametrize(
    ("relative", "name", "expected"), REAL, ids=[r[2] + ":" + r[1] for r in REAL]
)
def test_each_new_shape_is_claimed_by_its_type(relative: str, name: str, expected: str) -> None:
    assert claims(name, fixture(relative)[:4096]) == expected


HOME_EXPORTS = {
    "Downloads/contacts.vcf": ("contact/contacts.vcf", "contact"),
    "Downloads/ana.lima@example.com.ics": ("calendar/basic.ics", "calendar"),
    "Documents/Discord/trip-planning.json": (
        "discord/Climbing Crew - Text Channels - trip-planning [1101234567890999999].json",
        "discord",
    ),
    "Downloads/facebook-alex-2024-03-15/your_facebook_activity/messages/inbox/renee_1/message_1.json": (
        "messenger/message_1.json",
        "messenger",
    ),
    "Downloads/instagram-alex-2024-03-15/your_instagram_activity/messages/inbox/maya_1/message_1.json": (
        "instagram/message_1.json",
        "instagram",
    ),
    "Takeout/Google Chat/Groups/Space AAAAq1w2e3r/messages.json": (
        "google_chat/messages.json",
        "google_chat",
    ),
    "Documents/reports/Heron survey report 2024.pdf": (
        "document/Heron survey report 2024.pdf",
        "document",
    ),
    "Documents/Garden plan.docx": ("document/Garden plan.docx", "document"),
    "Downloads/Lakeside loop - Trail notes.html": (
        "document/Lakeside loop - Trail notes.html",
        "document",
    ),
    "Documents/letter to the council.txt": ("document/letter to the council.txt", "document"),
}
HOME_DECOYS = {
    "Downloads/shopping list.txt": PROSE_DECOYS["shopping list.txt"],
    "src/app/requirements.txt": "numpy\n",
    "src/app/index.html": "<!doctype html><html><head><title>App</title></head><body></body></html>",
    "src/app/package.json": '{"name": "app", "messages": []}',
    "Takeout/Google Chat/Groups/Space AAAAq1w2e3r/group_info.json": None,
}


def test_a_home_folder_of_these_exports_indexes_each_with_its_type(
    tmp_path: Path, settings_factory: Callable[..., Settings]
) -> None:
    home = tmp_path / "home"
    for relative, (source, _) in HOME_EXPORTS.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_bytes(fixture(source))
    for relative, text in HOME_DECOYS.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        body = fixture("google_chat/group_info.json") if text is None else text.encode()
        (home / relative).write_bytes(body)
    settings = settings_factory(home, embedder__name="hashing")
    stats = reindex(settings=settings)
    assert not stats.errors, stats.errors
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT source_file, source_type FROM index_state").fetchall()
        titles = {
            r[0] for r in conn.execute("SELECT title FROM chunks WHERE source_type = 'google_chat'")
        }
    finally:
        conn.close()
    found = {Path(path).relative_to(home).as_posix(): kind for path, kind in rows}
    assert found == {relative: kind for relative, (_, kind) in HOME_EXPORTS.items()}
    assert "Heron survey team · 2024-03-13" in titles  # group_info.json read beside it

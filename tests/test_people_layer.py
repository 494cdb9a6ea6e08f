"""Six people across Slack, mail, contacts, a calendar and WhatsApp, under different spellings
and with no people file: each is one card holding every spelling, and the two Priyas, who
share a first name, stay two.

Each file is written in its tool's shape where an export lands in a home folder; the links
between spellings are the ones real data has: an address (Slack profile, mail, calendar,
vCard), a phone number in another form (vCard, a WhatsApp sender saved by number), the
contact's own nickname (vCard), a full name with no organisation to tell it apart.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path

from engine.core import read_people
from engine.index.runs import reindex
from engine.people import carded
from engine.records import Person
from engine.settings import Settings

SLACK = "Downloads/acme-slack-export"
USERS = [
    ("U01RAJ", "Rajesh Patel", "raj", "raj.patel@acme.example"),
    ("U02PRI", "Priya Nair", "priya", "priya.nair@acme.example"),
    ("U03BEN", "Benjamin Okafor", "Ben", "benjamin.okafor@acme.example"),
    ("U04TOM", "Tomas Ruiz", "tomas", "tomas@ruiz.example"),
]
CONTACTS = """BEGIN:VCARD
VERSION:3.0
N:Patel;Rajesh;;;
FN:Rajesh Patel
NICKNAME:Raj
EMAIL;type=INTERNET:raj.patel@acme.example
TEL;type=CELL:+44 7700 900123
END:VCARD
BEGIN:VCARD
VERSION:3.0
N:Shah;Priya;;;
FN:Priya Shah
EMAIL;type=INTERNET:priya.shah@gmail.com
TEL;type=CELL:07700 900555
END:VCARD
BEGIN:VCARD
VERSION:3.0
N:Okafor;Ben;;;
FN:Ben Okafor
EMAIL;type=INTERNET:ben@okafor.example
EMAIL;type=INTERNET:benjamin.okafor@acme.example
END:VCARD
BEGIN:VCARD
VERSION:3.0
N:Weber;Lena;;;
FN:Lena Weber
EMAIL;type=INTERNET:lena.weber@example.de
END:VCARD
BEGIN:VCARD
VERSION:3.0
N:Ruiz;Tomás;;;
FN:Tomás Ruiz
NICKNAME:Tommy
EMAIL;type=INTERNET:tomas@ruiz.example
END:VCARD
"""
CALENDAR = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Google Inc//Google Calendar 70.9054//EN
BEGIN:VEVENT
DTSTART:20240312T090000Z
DTEND:20240312T093000Z
DTSTAMP:20240301T080000Z
UID:ferry-planning@google.com
SUMMARY:Ferry planning
ORGANIZER;CN=Priya N.:mailto:priya.nair@acme.example
ATTENDEE;CN=Raj Patel:mailto:raj.patel@acme.example
ATTENDEE;CN=Lena Weber:mailto:lena.weber@example.de
END:VEVENT
END:VCALENDAR
"""
MAIL = """From raj.patel@acme.example Mon Mar 11 08:00:00 2024
From: Raj Patel <raj.patel@acme.example>
To: Priya Nair <priya.nair@acme.example>, Ben Okafor <ben@okafor.example>
Date: Mon, 11 Mar 2024 08:00:00 +0000
Subject: Ferry tickets
Message-ID: <m1@acme.example>

The late sailing on Friday, bikes on the same ticket.

From priya.shah@gmail.com Tue Mar 12 19:00:00 2024
From: Priya <priya.shah@gmail.com>
To: Tomás Ruiz <tomas@ruiz.example>
Date: Tue, 12 Mar 2024 19:00:00 +0000
Subject: Climbing on Thursday
Message-ID: <m2@gmail.com>

Bouldering at the Arch, seven o'clock.
"""
WHATSAPP = """12/03/2024, 18:01 - Lena Weber: Are we still on for Thursday?
12/03/2024, 18:03 - Priya Shah: Yes, seven at the Arch
12/03/2024, 18:04 - +44 7700 900123: I'll bring the rope
12/03/2024, 18:05 - Tommy: count me in
12/03/2024, 18:06 - +44 7700 900555: and chalk
"""
# Who each is, by an address only they have, and every spelling their card must hold.
EXPECTED = {
    "raj.patel@acme.example": {"Rajesh Patel", "Raj Patel", "raj", "Raj"},
    "priya.nair@acme.example": {"Priya Nair", "Priya N."},
    "priya.shah@gmail.com": {"Priya Shah"},
    "benjamin.okafor@acme.example": {"Benjamin Okafor", "Ben Okafor", "Ben"},
    "lena.weber@example.de": {"Lena Weber"},
    "tomas@ruiz.example": {"Tomás Ruiz", "Tomas Ruiz", "Tommy"},
}


def write(home: Path, relative: str, text: str) -> None:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def slack_export(home: Path) -> None:
    users = [
        {
            "id": uid,
            "team_id": "TACME",
            "name": display,
            "real_name": real,
            "profile": {"real_name": real, "display_name": display, "email": email},
        }
        for uid, real, display, email in USERS
    ]
    write(home, f"{SLACK}/users.json", json.dumps(users))
    write(home, f"{SLACK}/channels.json", json.dumps([{"id": "C1", "name": "general"}]))
    day = [
        {"type": "message", "user": uid, "text": f"ferry note {n}", "ts": f"17101{n}0000.0001"}
        for n, (uid, *_rest) in enumerate(USERS)
    ]
    write(home, f"{SLACK}/general/2024-03-11.json", json.dumps(day))


def home_layer(home: Path) -> None:
    slack_export(home)
    write(home, "Documents/contacts.vcf", CONTACTS)
    write(home, "Downloads/invite.ics", CALENDAR)
    write(home, "Takeout/Mail/All mail Including Spam and Trash.mbox", MAIL)
    write(home, "Downloads/WhatsApp Chat with Climbing Crew.txt", WHATSAPP)


def folded(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def cards(settings: Settings) -> list[Person]:
    return carded(read_people(settings), settings)


def test_six_people_are_six_cards_with_every_spelling(
    tmp_path: Path, settings_factory: Callable[..., Settings]
) -> None:
    home = tmp_path / "home"
    home_layer(home)
    settings = settings_factory(home, embedder__name="hashing")
    stats = reindex(settings=settings)
    assert not stats.errors, stats.errors
    found = cards(settings)
    for email, spellings in EXPECTED.items():
        holders = [p for p in found if email in p.emails]
        assert len(holders) == 1, (email, [p.name for p in holders])
        names = {folded(n) for n in holders[0].names}  # "Tomas" is "Tomás" to a search
        assert {folded(s) for s in spellings} <= names, (email, holders[0].names)
    assert len(found) == len(EXPECTED), [p.name for p in found]


def test_the_two_priyas_stay_two(tmp_path: Path, settings_factory: Callable[..., Settings]) -> None:
    home = tmp_path / "home"
    home_layer(home)
    settings = settings_factory(home, embedder__name="hashing")
    reindex(settings=settings)
    priyas = [p for p in cards(settings) if p.name.startswith("Priya")]
    assert sorted(p.name for p in priyas) == ["Priya Nair", "Priya Shah"]
    nair, shah = sorted(priyas, key=lambda p: p.name)
    assert (
        "priya.shah@gmail.com" not in nair.emails and "priya.nair@acme.example" not in shah.emails
    )
    assert "+447700900555" in shah.phones  # the national form and the WhatsApp sender's

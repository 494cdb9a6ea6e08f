"""Identity that does not over-merge: an address, phone or handle several people carry joins
none of them, a sender "via" a group is that sender, organisations match on their whole
name or domain, and `memex people --all` says which identifiers were not used to join."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.embedders.hashing import HashingEmbedder
from engine.index.runs import reindex
from engine.people import build_directory, parse_people
from engine.people.normalise import via_sender
from engine.people.orgs import org_keys, org_name
from engine.people.shared import identifiers_on_several, names_agree, names_conflict
from engine.records import Mention, Person
from engine.settings import Settings
from tests.conftest import cli_args, make_settings

Row = tuple[str, str, Mention]


@pytest.fixture
def settings(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory()


def build(settings: Settings, rows: list[Row], curated: str = "") -> list[Person]:
    return build_directory(rows, parse_people(curated.encode()) if curated else [], settings)


def names(people: list[Person]) -> list[str]:
    return sorted(p.name for p in people)


# -- names and organisations -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("lena okafor", "okafor lena", True),  # "Okafor, Lena"
        ("l okafor", "lena okafor", True),  # an initial
        ("ben okafor", "benjamin okafor", True),  # a short form is the start of the long
        ("lena okafor", "lena m okafor", True),
        ("anna berg", "per berg", False),
        ("jane doe", "tom hill", False),
    ],
)
def test_two_full_names_agree_word_by_word(a: str, b: str, agree: bool) -> None:
    assert names_agree(tuple(a.split()), tuple(b.split())) is agree


def test_names_one_mention_gives_together_never_conflict() -> None:
    assert names_conflict([("anna berg",), ("per berg",)])
    assert not names_conflict([("robert smith", "bob"), ("bob smith",)])  # the nickname
    assert not names_conflict([("lena",), ("anna berg",)])  # one word alone


@pytest.mark.parametrize(
    ("written", "sender"),
    [
        ("'Ann Lee' via Oslo Runners", "Ann Lee"),
        ("Ann Lee via LinkedIn", "Ann Lee"),
        ("“Ann Lee” via Oslo Runners", "Ann Lee"),
        ("Ann Lee", None),
        ("via Oslo", None),
    ],
)
def test_a_sender_via_a_group_is_the_sender(written: str, sender: str | None) -> None:
    assert via_sender(written) == sender


def test_organisations_compare_by_their_whole_name_or_domain() -> None:
    assert org_name("The Heliotrope Co., Ltd.") == "heliotrope"
    assert org_name("Heliotrope AS") == org_name("heliotrope") == "heliotrope"
    assert org_name("AB Volvo") == "volvo"
    assert org_name("University of Oslo") != org_name("University of Bergen")
    uio = org_keys("UiO", ["ann@uio.no"]) & org_keys("University of Oslo", ["bo@uio.no"])
    assert uio == {"domain:uio.no"}
    assert not org_keys("Acme", ["a@gmail.com"]) & org_keys("Bolt", ["b@gmail.com"])


# -- the join rules --------------------------------------------------------------------------


def test_a_support_inbox_signed_by_several_people_joins_none(settings: Settings) -> None:
    inbox = ("support@acme.example",)
    people = build(
        settings,
        [
            ("/m/a.mbox", "email_catalog", Mention("Jane Doe", emails=inbox, count=3)),
            ("/m/a.mbox", "email_catalog", Mention("Tom Hill", emails=inbox, count=2)),
            ("/m/b.mbox", "email_catalog", Mention("Acme Support", emails=inbox)),
            ("/m/b.mbox", "email_catalog", Mention("Jane Doe", emails=("jane@acme.example",))),
        ],
    )
    assert names(people) == ["Acme Support", "Jane Doe", "Tom Hill"]
    jane = next(p for p in people if p.name == "Jane Doe")
    assert jane.emails == ("jane@acme.example", "support@acme.example")  # her own first
    shared = dict(identifiers_on_several(people))
    assert set(shared["support@acme.example"]) == {"Jane Doe", "Tom Hill", "Acme Support"}


def test_one_person_under_several_spellings_still_joins_on_their_address(
    settings: Settings,
) -> None:
    mine = ("lena@okafor.example",)
    people = build(
        settings,
        [
            ("/m/a.mbox", "email_catalog", Mention("Lena Okafor", emails=mine, count=4)),
            ("/m/b.mbox", "email_catalog", Mention("Okafor, Lena", emails=mine)),
            ("/m/c.mbox", "email_catalog", Mention("L. Okafor", emails=mine)),
            ("/m/c.mbox", "email_catalog", Mention("lena", emails=mine)),
        ],
    )
    assert len(people) == 1 and people[0].name == "Lena Okafor"
    assert identifiers_on_several(people) == []


def test_senders_via_a_mailing_list_stay_themselves(settings: Settings) -> None:
    group = ("oslo-runners@googlegroups.com",)
    people = build(
        settings,
        [
            ("/m/a.mbox", "email_catalog", Mention("'Ann Lee' via Oslo Runners", emails=group)),
            ("/m/a.mbox", "email_catalog", Mention("'Bo Ek' via Oslo Runners", emails=group)),
            ("/m/b.mbox", "email_catalog", Mention("Ann Lee", emails=("ann@lee.example",))),
        ],
    )
    assert names(people) == ["Ann Lee", "Bo Ek"]  # Ann Lee's two sightings joined by name
    ann = next(p for p in people if p.name == "Ann Lee")
    assert ann.emails[0] == "ann@lee.example" and "oslo-runners@googlegroups.com" in ann.emails


def test_a_family_phone_joins_only_whom_the_people_file_gives_it(settings: Settings) -> None:
    phone = ("+47 912 34 567",)
    rows = [
        ("/w/a.txt", "whatsapp", Mention("Anna Berg", phones=phone, count=5)),
        ("/s/b.json", "signal", Mention("Per Berg", phones=phone, count=4)),
        ("/c/all.vcf", "contact", Mention("Anna Berg", phones=phone, role="contact")),
    ]
    assert names(build(settings, rows)) == ["Anna Berg", "Per Berg"]
    people = build(settings, rows, '[{"name": "Anna Berg", "phones": ["+4791234567"]}]')
    assert names(people) == ["Anna Berg", "Per Berg"]
    anna = next(p for p in people if p.name == "Anna Berg")
    per = next(p for p in people if p.name == "Per Berg")
    assert anna.curated and anna.phones == ("+4791234567",)
    assert dict(anna.sources).keys() == {"whatsapp", "contact"} and per.messages == 4


def test_the_same_person_in_two_slack_workspaces_joins_by_email(settings: Settings) -> None:
    def slack(team: str, user: str, email: str) -> Row:
        who = Mention("Priya Raman", emails=(email,), handles=(f"slack:{user}",), org=team)
        return (f"/s/{team}/users.json", "slack", who)

    joined = build(settings, [slack("T1", "U1", "priya@x.no"), slack("T2", "U7", "priya@x.no")])
    assert len(joined) == 1 and joined[0].handles == ("slack:U1", "slack:U7")
    apart = build(settings, [slack("T1", "U1", "priya@x.no"), slack("T2", "U7", "priya@y.no")])
    assert len(apart) == 2  # two workspaces of two companies: two namesakes


def test_two_universities_are_two_organisations(settings: Settings) -> None:
    rows = [
        ("/c/a.vcf", "contact", Mention("Kari Nordmann", org="University of Oslo", role="contact")),
        (
            "/c/b.vcf",
            "contact",
            Mention("Kari Nordmann", org="University of Bergen", role="contact"),
        ),
    ]
    assert len(build(settings, rows)) == 2
    same = ("/c/c.vcf", "contact", Mention("Kari Nordmann", org="the University of Oslo"))
    assert len(build(settings, [rows[0], same])) == 1


# -- memex people --all ----------------------------------------------------------------------


def test_people_all_says_which_identifiers_joined_no_one(tmp_path: Path) -> None:
    root = tmp_path / "home"
    root.mkdir()
    (root / "support.mbox").write_bytes(
        b"From support@acme.example Mon Mar  4 09:00:00 2024\n"
        b"From: Jane Doe <support@acme.example>\nTo: me@home.example\n"
        b"Subject: Your ticket\nDate: Mon, 4 Mar 2024 09:00:00 +0000\n\nWe fixed it.\n\n"
        b"From support@acme.example Tue Mar  5 09:00:00 2024\n"
        b"From: Tom Hill <support@acme.example>\nTo: me@home.example\n"
        b"Subject: Re: Your ticket\nDate: Tue, 5 Mar 2024 09:00:00 +0000\n\nClosed now.\n"
    )
    (tmp_path / "index").mkdir()
    settings = make_settings(root, tmp_path / "index" / "memex.db", **{"embedder.name": "hashing"})
    reindex(settings=settings, embedder=HashingEmbedder())
    out, err = io.StringIO(), io.StringIO()
    assert run(["people", "--all", *cli_args(settings)], out, err) == 0, err.getvalue()
    text = out.getvalue()
    assert "Jane Doe" in text and "Tom Hill" in text
    shared = [line for line in text.splitlines() if "not used to join" in line]
    assert len(shared) == 1 and "support@acme.example" in shared[0]
    assert "Jane Doe" in shared[0] and "Tom Hill" in shared[0]
    out = io.StringIO()
    assert run(["people", "--json", *cli_args(settings)], out, io.StringIO()) == 0
    payload = json.loads(out.getvalue())
    assert payload["shared"] == [
        {"identifier": "support@acme.example", "names": ["Jane Doe", "Tom Hill"]}
    ]

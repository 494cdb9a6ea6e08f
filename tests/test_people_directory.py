"""The people directory (engine/people/): normalising, the join rules, the people file's
corrections, what each person holds, slugs and the card threshold."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.people import PeopleFileError, build_directory, carded, parse_people
from engine.people.curated import load_people, people_file_errors, read_people_file
from engine.people.normalise import (
    country_code,
    dominant_country_code,
    fold,
    nickname_split,
    normalise_email,
    normalise_handle,
    normalise_phone,
    slugify,
)
from engine.people.profile import conversation_title
from engine.records import Mention, Person
from engine.settings import Settings

Row = tuple[str, str, Mention]


@pytest.fixture
def settings(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory()


def build(settings: Settings, rows: list[Row], curated: list[Person] | None = None) -> list[Person]:
    return build_directory(rows, curated or [], settings)


def named(people: list[Person], name: str) -> Person:
    found = [p for p in people if p.name == name]
    assert len(found) == 1, [p.name for p in people]
    return found[0]


def curated(raw: str) -> list[Person]:
    return parse_people(raw.encode())


# -- normalising -----------------------------------------------------------------------------


def test_emails_are_lower_cased_and_keep_their_dots() -> None:
    assert normalise_email(" <Priya.Raman@GMail.com> ") == "priya.raman@gmail.com"
    assert normalise_email("mailto:Bob@Example.org") == "bob@example.org"
    assert normalise_email("priyaraman@gmail.com") != normalise_email("priya.raman@gmail.com")
    assert normalise_email("not an address") == ""
    assert normalise_email("bob@localhost") == ""


@pytest.mark.parametrize(
    ("written", "code", "expected"),
    [
        ("+47 912 34 567", "", "+4791234567"),
        ("0047 912 34 567", "", "+4791234567"),
        ("(+47) 912-34-567", "", "+4791234567"),
        ("tel:+44 20 7946 0958", "", "+442079460958"),
        ("020 7946 0958", "44", "+442079460958"),  # a trunk 0 joins the country code
        ("07700 900123", "44", "+447700900123"),
        ("912 34 567", "47", "+4791234567"),  # no trunk prefix (Norway)
        ("020 7946 0958", "", "02079460958"),  # no code known: its own national form
        ("1 555 123 4567", "47", "+15551234567"),  # 11 digits, no 0: international
        ("12345", "47", ""),  # too short to be a number
    ],
)
def test_phone_forms(written: str, code: str, expected: str) -> None:
    assert normalise_phone(written, code) == expected


def test_country_codes_are_read_by_their_prefix_free_lengths() -> None:
    assert [country_code(n) for n in ("+15551234567", "+74951234567", "+4791234567")] == [
        "1",
        "7",
        "47",
    ]
    assert country_code("+35312345678") == "353"
    assert dominant_country_code(["+47 1234 5678", "+4799999999", "+44 20 7946 0958"]) == "47"
    assert dominant_country_code(["91234567"]) == ""


def test_names_fold_case_and_accents_and_nicknames_split() -> None:
    assert fold("José NÚÑEZ") == "jose nunez"
    assert slugify("Tomás Ruiz") == "tomas-ruiz" and slugify("Dr. Kari Nilsen") == "dr-kari-nilsen"
    assert slugify("Алексей") == "алексеи"
    assert nickname_split('Lars "Lasse" Eriksen') == ("Lars Eriksen", "Lasse")
    assert nickname_split("Priya Raman (Heliotrope)") == ("Priya Raman",)
    assert nickname_split("Siobhán O'Brien") == ("Siobhán O'Brien",)
    assert normalise_handle(" Slack:U024BE7LH ") == "slack:U024BE7LH"
    assert normalise_handle("slack:") == ""


def test_conversation_titles_are_readable() -> None:
    assert conversation_title("/d/WhatsApp Chat with Raj.txt") == "WhatsApp Chat with Raj"
    assert conversation_title("/d/slack/general/2026-05-01.json") == "general 2026-05-01"
    assert conversation_title("/d/Telegram/DataExport_2026/result.json") == "DataExport_2026"
    assert conversation_title("C:\\Users\\me\\chats\\_chat.txt") == "chats"


# -- the join rules --------------------------------------------------------------------------


def test_the_same_email_joins_whatever_the_names(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/m/a.mbox", "mail", Mention("Priya Raman", emails=("Priya@Heliotrope.no",))),
            ("/s/g.json", "slack", Mention("praman", emails=("priya@heliotrope.no",))),
        ],
    )
    assert len(people) == 1
    assert people[0].name == "Priya Raman" and people[0].aliases == ("praman", "Priya")
    assert people[0].emails == ("priya@heliotrope.no",)


def test_gmail_dots_are_not_dropped(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/m/a.mbox", "mail", Mention("P R", emails=("priya.raman@gmail.com",), org="a")),
            ("/m/b.mbox", "mail", Mention("P R", emails=("priyaraman@gmail.com",), org="b")),
        ],
    )
    assert len(people) == 2


def test_the_same_phone_in_any_form_joins(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/w/chat.txt", "whatsapp", Mention("Raj", phones=("+47 912 34 567",))),
            ("/s/sig.json", "signal", Mention("Rajesh K", phones=("0047 91234567",))),
            ("/c/all.vcf", "contact", Mention("Rajesh Kumar", phones=("912 34 567",))),
        ],
    )
    assert len(people) == 1 and people[0].phones == ("+4791234567",)


def test_a_national_form_joins_with_the_dominant_country_code(settings: Settings) -> None:
    rows = [
        ("/c/all.vcf", "contact", Mention("Ann Lee", phones=("+44 20 7946 0958",))),
        ("/c/all.vcf", "contact", Mention("Bo Ek", phones=("+44 20 7946 0000",))),
        ("/w/chat.txt", "whatsapp", Mention("Annie", phones=("020 7946 0958",))),
    ]
    assert len(build(settings, rows)) == 2
    forced = settings.with_values(**{"people.country_code": "47"})
    assert len(build(forced, rows)) == 3  # +47 20… is another number


def test_the_same_handle_joins(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/s/a.json", "slack", Mention("Raj Patel", handles=("slack:U1",))),
            ("/s/b.json", "slack", Mention("raj", handles=("Slack:U1",))),
            ("/s/b.json", "slack", Mention("raj", handles=("slack:u1",))),  # ids are exact
        ],
    )
    assert sorted(len(p.sources) and p.messages for p in people) == [1, 2]


def test_a_full_name_joins_within_one_organisation_or_none(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/s/a.json", "slack", Mention("Priya Raman", handles=("slack:U1",), org="Heliotrope")),
            ("/c/all.vcf", "contact", Mention("priya raman", org="Heliotrope AS", role="contact")),
            ("/m/a.mbox", "mail", Mention("Príya Ráman", emails=("p@x.no",))),  # no org
        ],
    )
    assert len(people) == 1 and people[0].emails == ("p@x.no",)


def test_organisations_compare_only_within_one_source_type(settings: Settings) -> None:
    rows = [
        ("/s/users.json", "slack", Mention("Priya Raman", handles=("slack:U1",), org="T024BE7")),
        ("/c/all.vcf", "contact", Mention("Priya Raman", org="Heliotrope AS", role="contact")),
        ("/c/old.vcf", "contact", Mention("Priya Raman", org="Heliotrope", role="contact")),
    ]
    assert len(build(settings, rows)) == 1  # a workspace id is no company name
    other = ("/c/x.vcf", "contact", Mention("Priya Raman", org="Statnett", role="contact"))
    assert len(build(settings, [*rows, other])) == 3  # two companies: none can be told apart


def test_two_priyas_in_different_organisations_stay_two(settings: Settings) -> None:
    rows = [
        ("/s/a.json", "slack", Mention("Priya Raman", handles=("slack:U1",), org="Heliotrope")),
        ("/s/b.json", "slack", Mention("Priya Raman", handles=("slack:U9",), org="Statnett")),
        ("/m/a.mbox", "mail", Mention("Priya Raman", emails=("p@x.no",))),
    ]
    people = build(settings, rows)
    assert len(people) == 3  # the one without an organisation could be either: no join
    assert len(build(settings, rows[:2])) == 2


def test_a_first_name_alone_never_joins(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/w/a.txt", "whatsapp", Mention("Priya")),
            ("/s/a.json", "slack", Mention("Priya Raman", handles=("slack:U1",))),
            ("/w/b.txt", "whatsapp", Mention("Priya", phones=("+4791234567",))),
        ],
    )
    assert sorted(p.name for p in people) == ["Priya", "Priya", "Priya Raman"]


def test_a_curated_alias_of_exactly_one_person_joins(settings: Settings) -> None:
    people = build(
        settings,
        [
            (
                "/c/all.vcf",
                "contact",
                Mention("Jonas Berg", aliases=("Jonte",), emails=("j@b.no",), role="contact"),
            ),
            ("/w/chat.txt", "whatsapp", Mention("Jonte", count=40)),
        ],
    )
    assert len(people) == 1 and people[0].messages == 41


def test_an_alias_two_people_could_be_joins_neither(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/w/a.txt", "whatsapp", Mention("Priya", count=3)),
            ("/s/a.json", "slack", Mention("Priya Nair", handles=("slack:U2",))),
        ],
        curated('[{"name": "Priya Raman", "aliases": ["Priya"]}]'),
    )
    assert sorted(p.name for p in people) == ["Priya", "Priya Nair", "Priya Raman"]


def test_the_people_file_alias_joins_when_no_one_else_carries_it(settings: Settings) -> None:
    people = build(
        settings,
        [
            ("/w/a.txt", "whatsapp", Mention("Priya", count=3, first="2026-01-02")),
            ("/s/a.json", "slack", Mention("Priya Raman", handles=("slack:U1",), org="H")),
        ],
        curated('[{"name": "Priya Raman", "aliases": ["Priya"], "relationship": "coworker"}]'),
    )
    assert len(people) == 1
    priya = people[0]
    assert priya.curated and priya.relationship == "coworker" and priya.messages == 4
    assert dict(priya.sources) == {"whatsapp": 1, "slack": 1} and priya.first == "2026-01-02"


# -- the people file's corrections -----------------------------------------------------------


def test_the_people_file_merges_what_the_rules_did_not(settings: Settings) -> None:
    rows = [
        ("/m/a.mbox", "mail", Mention("Priya R", emails=("priya@gmail.com",), org="a")),
        ("/s/a.json", "slack", Mention("praman", handles=("slack:U1",))),
        ("/w/a.txt", "whatsapp", Mention("P", phones=("+4791234567",))),
    ]
    assert len(build(settings, rows)) == 3
    fixed = curated(
        '[{"name": "Priya Raman", "emails": ["Priya@gmail.com"], "handles": ["slack:U1"],'
        ' "phones": ["0047 912 34 567"], "unknown_key": 1}]'
    )
    people = build(settings, rows, fixed)
    assert len(people) == 1 and people[0].name == "Priya Raman"
    assert set(people[0].aliases) == {"Priya R", "praman", "P"}


def test_the_people_file_splits_off_what_not_lists(settings: Settings) -> None:
    rows = [
        ("/s/a.json", "slack", Mention("Priya Raman", handles=("slack:U1",), org="H")),
        ("/m/a.mbox", "mail", Mention("Priya Raman", emails=("other.priya@x.no",))),
        ("/w/a.txt", "whatsapp", Mention("Pri", phones=("+4791234567",))),
    ]
    fixed = curated(
        '[{"name": "Priya Raman", "aliases": ["Pri"], "not": ["other.priya@x.no", "Pri"]}]'
    )
    people = build(settings, rows, fixed)
    priya = next(p for p in people if p.curated)
    assert priya.handles == ("slack:U1",) and priya.emails == () and priya.phones == ()
    assert len(people) == 3


def test_hidden_people_are_never_shown(settings: Settings) -> None:
    rows = [
        ("/m/a.mbox", "mail", Mention("Newsletter", emails=("news@shop.no",), count=90)),
        ("/m/a.mbox", "mail", Mention("Ann Lee", emails=("ann@x.no",))),
    ]
    fixed = curated('[{"name": "Shop", "emails": ["news@shop.no"], "hidden": true}]')
    assert [p.name for p in build(settings, rows, fixed)] == ["Ann Lee"]


def test_a_bad_people_file_is_one_clear_error_and_loses_nothing(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    (root / "profile").mkdir(parents=True)
    people_file = root / "profile" / "relationships.json"
    people_file.write_text('{"people": [{"name": "Ann"},', encoding="utf-8")
    settings = settings_factory(root)
    with pytest.raises(PeopleFileError, match=r"relationships.json: not a JSON people file"):
        read_people_file(people_file)
    [(path, message)] = people_file_errors(settings)
    assert path == str(people_file) and "line 1" in message and "\n" not in message
    assert load_people(settings) == []
    assert people_file.read_text(encoding="utf-8") == '{"people": [{"name": "Ann"},'
    people_file.write_text('{"people": {"name": "Ann"}}', encoding="utf-8")
    assert "expected a list of people" in people_file_errors(settings)[0][1]


# -- what a person holds ---------------------------------------------------------------------


def test_a_person_holds_sources_dates_conversations_and_company(settings: Settings) -> None:
    day = "/s/general/2026-05-0{}.json"
    rows: list[Row] = []
    for n in range(1, 8):
        rows.append((day.format(n), "slack", Mention("Raj Patel", handles=("slack:U1",),
                                                        count=2, first=f"2026-05-0{n}",
                                                        last=f"2026-05-0{n}")))  # fmt: skip
        if n % 2:
            rows.append((day.format(n), "slack", Mention("Mei Chen", handles=("slack:U2",))))
    rows.append(("/m/a.mbox", "mail", Mention("Raj Patel", emails=("raj@x.no",), count=3)))
    rows.append(("/c/all.vcf", "contact", Mention("Raj Patel", emails=("raj@x.no",))))
    raj = named(build(settings, rows), "Raj Patel")
    assert dict(raj.sources) == {"slack": 7, "mail": 1, "contact": 1}
    assert raj.messages == 7 * 2 + 3 + 1
    assert (raj.first, raj.last) == ("2026-05-01", "2026-05-07")
    titles = [c.title for c in raj.conversations]
    assert titles == [f"general 2026-05-0{n}" for n in (7, 6, 5, 4, 3)]
    assert raj.seen_with == (("mei-chen", "Mei Chen"),)


def test_the_name_is_the_most_used_full_name_unless_the_people_file_says(
    settings: Settings,
) -> None:
    rows = [
        ("/s/a.json", "slack", Mention("raj", handles=("slack:U1",), count=50)),
        ("/s/a.json", "slack", Mention("Rajesh Kumar", handles=("slack:U1",), count=2)),
        ("/s/b.json", "slack", Mention("Raj Kumar", handles=("slack:U1",), count=9)),
    ]
    raj = build(settings, rows)[0]
    assert raj.name == "Raj Kumar" and raj.aliases == ("raj", "Rajesh Kumar")
    fixed = curated('[{"name": "Rajesh K.", "handles": ["slack:U1"]}]')
    assert build(settings, rows, fixed)[0].name == "Rajesh K."


def test_slugs_are_stable_and_distinct(settings: Settings) -> None:
    rows = [
        ("/s/a.json", "slack", Mention("Ann Lee", handles=("slack:U2",), org="a")),
        ("/s/b.json", "slack", Mention("Ann Lee", handles=("slack:U1",), org="b")),
    ]
    first = {p.handles[0]: p.slug for p in build(settings, rows)}
    again = {p.handles[0]: p.slug for p in build(settings, [*reversed(rows), *rows])}
    assert first == again == {"slack:U1": "ann-lee", "slack:U2": "ann-lee-2"}
    fixed = curated('[{"name": "Ann Lee", "handles": ["slack:U2"]}]')
    assert {p.handles[0]: p.slug for p in build(settings, rows, fixed)}["slack:U2"] == "ann-lee"


def test_the_card_threshold(settings: Settings) -> None:
    rows = [
        ("/m/a.mbox", "mail", Mention("Once Only", emails=("o@x.no",))),
        ("/m/a.mbox", "mail", Mention("Two Sources", emails=("t@x.no",))),
        ("/s/a.json", "slack", Mention("Two Sources", emails=("t@x.no",))),
        ("/s/a.json", "slack", Mention("Chatty", handles=("slack:U3",), count=10)),
    ]
    people = build(settings, rows, curated('[{"name": "Curated Only"}]'))
    assert {p.name for p in carded(people, settings)} == {"Two Sources", "Chatty", "Curated Only"}
    strict = settings.with_values(**{"people.card_min_messages": 11})
    assert {p.name for p in carded(people, strict)} == {"Two Sources", "Curated Only"}


def test_a_person_round_trips_through_its_dict(settings: Settings) -> None:
    rows = [
        ("/s/general/2026-05-01.json", "slack", Mention("Raj Patel", handles=("slack:U1",),
                                                      first="2026-05-01", last="2026-05-01")),
        ("/s/general/2026-05-01.json", "slack", Mention("Mei Chen", handles=("slack:U2",))),
    ]  # fmt: skip
    fixed = curated('[{"name": "Raj Patel", "handles": ["slack:U1"], "not": ["x@y.no"]}]')
    for person in build(settings, rows, fixed):
        assert Person.from_dict(person.as_dict()) == person


def test_a_first_name_nobody_else_has_calls_a_person_with_a_card(settings: Settings) -> None:
    amara = ("/t/r.json", "telegram", Mention("Amara Diallo", handles=("telegram:1",), count=12))
    once = ("/m/a.mbox", "mail", Mention("Hanne Berg", emails=("h@x.no",)))  # no card
    people = build(settings, [amara, once], curated('[{"name": "Sofie Lindqvist"}]'))
    assert named(people, "Amara Diallo").aliases == ("Amara",)
    assert named(people, "Hanne Berg").aliases == () == named(people, "Sofie Lindqvist").aliases
    other = ("/m/a.mbox", "mail", Mention("Amara Nwosu", emails=("a@x.no",)))
    assert named(build(settings, [amara, other]), "Amara Diallo").aliases == ()


def test_the_people_file_order_comes_first_then_messages(settings: Settings) -> None:
    rows = [
        ("/s/a.json", "slack", Mention("Few Words", handles=("slack:U1",), count=2)),
        ("/s/a.json", "slack", Mention("Many Words", handles=("slack:U2",), count=20)),
    ]
    people = build(settings, rows, curated('[{"name": "Zed Last"}, {"name": "Ann First"}]'))
    assert [p.name for p in people] == ["Zed Last", "Ann First", "Many Words", "Few Words"]

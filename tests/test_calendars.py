"""Calendars event by event: a broken property is that item's problem, in words, and the rest
of the file (and of the item) is kept; to-dos and journal entries are read too."""

from __future__ import annotations

from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Extraction
from engine.extractors.ical import extract_ical
from engine.extractors.recurrence import readable_rules, recurrence_words

FIXTURES = Path(__file__).parent / "fixtures" / "calendar"


def read(name: str) -> Extraction:
    return extract_ical((FIXTURES / name).read_bytes(), PurePath(name))


def calendar(*events: str) -> bytes:
    body = "".join(f"BEGIN:VEVENT\r\nUID:{n}\r\n{e}END:VEVENT\r\n" for n, e in enumerate(events))
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{body}END:VCALENDAR\r\n".encode()


GOOD = "SUMMARY:Dentist\r\nDTSTART:20240326T083000Z\r\n"


def test_google_export_with_doubled_rules_and_starts_keeps_every_event() -> None:
    result = read("Family.ics")
    assert [d.title for d in result.drafts] == [
        "Swimming lessons",
        "Mia's birthday party",
        "Easter on the island",
    ]
    swimming, party, _ = result.drafts
    # RFC 2445 allowed several RRULEs (their union): both are read, no problem
    assert "Repeats: every week on Tuesday; every week on Thursday" in swimming.content
    assert party.content_date == "2024-03-09T10:00:00"  # the first of its two starts
    assert result.problems == [
        "line 42: the event 'Mia's birthday party' has two start times; dated by the first"
    ]


def test_outlook_rules_with_a_space_are_read_and_an_unknown_frequency_is_a_problem() -> None:
    result = read("Calendar.ics")
    standup, budget, heron = result.drafts
    assert "Repeats: every week on Monday and Tuesday, until 2024-06-28" in standup.content
    assert "Repeats" not in budget.content and "every other Thursday" in budget.content
    assert budget.content_date == "2024-03-07T13:00:00"
    assert heron.people == ("Lena Vogel", "Rajesh Kumar")
    assert result.problems == [
        "line 46: the event 'Budget review' has a repeat rule that cannot be read "
        "(FREQ=BIWEEKLY;BYDAY=TH); kept without it"
    ]


def test_to_dos_and_journal_entries_are_searchable() -> None:
    result = read("Tasks.ics")
    permit, waders, kingfisher = result.drafts
    assert permit.content.startswith("To-do: Renew the boathouse permit\nDue: 2024-03-29")
    assert "Form B7 at the council office; bring the survey map." in permit.content
    assert permit.content_date == "2024-03-29"  # no start: dated by its due date
    assert "Completed: 2024-03-08 12:00 (UTC)" in waders.content
    assert "Where: Outdoor shop, High Street" in waders.content
    assert kingfisher.content_date == "2024-03-14"
    assert "fishing for ten minutes" in kingfisher.content  # a folded line joined
    assert kingfisher.metadata["kind"] == "journal entry"
    assert not result.problems


def test_a_file_icalendar_refuses_whole_is_read_item_by_item() -> None:
    result = read("bad-thunderbird.ics")  # a to-do's DUE breaks icalendar's strict to-dos
    assert [(d.title, d.content_date) for d in result.drafts] == [
        ("Call the plumber", None),
        ("Send the heron report", None),
        ("Dentist", "2024-03-26T08:30:00"),
    ]
    assert "ask for a Thursday slot" in result.drafts[0].content
    assert result.drafts[1].metadata["kind"] == "to-do"
    assert result.problems == [
        "line 12: the to-do 'Send the heron report' has a due date that cannot be read "
        "(2024-03-22); kept without it"
    ]
    assert result.notes == ["line 4: the event 'Call the plumber' has no start time; kept undated"]


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (
            "SUMMARY:Standup\r\nDTSTART:2024031X\r\n",
            "the event 'Standup' has a start time that cannot be read (2024031X); kept undated",
        ),
        (
            "SUMMARY:Standup\r\nDTSTART:20240311T090000Z\r\nDTEND:garbage\r\n",
            "the event 'Standup' has an end time that cannot be read (garbage); kept without it",
        ),
        (
            "SUMMARY:Standup\r\nDTSTART:20240311T090000Z\r\nno colon on this line\r\n",
            "the event 'Standup' has a line that cannot be read; kept without it",
        ),
        (
            "DTSTART:20240311T090000Z\r\nRRULE:FREQ=FORTNIGHTLY\r\n",
            "the event without a title has a repeat rule that cannot be read "
            "(FREQ=FORTNIGHTLY); kept without it",
        ),
    ],
)
def test_a_broken_property_is_a_problem_of_its_event_only(event: str, problem: str) -> None:
    result = extract_ical(calendar(GOOD, event, GOOD), PurePath("x.ics"))
    assert len(result.drafts) == 3
    assert [p.split(": ", 1)[1] for p in result.problems] == [problem]
    assert not any("Error" in p or "Wrong date format" in p for p in result.problems)


def test_a_broken_block_is_skipped_by_name_and_the_rest_kept() -> None:
    todo = "BEGIN:VTODO\r\nSUMMARY:Pay rent\r\nBEGIN:VALARM\r\nEND:VTODO\r\n"  # never closed
    data = calendar(GOOD).replace(b"END:VCALENDAR", todo.encode() + b"END:VCALENDAR")
    result = extract_ical(data, PurePath("x.ics"))
    assert [d.title for d in result.drafts] == ["Dentist"]
    assert result.problems == ["line 8: the to-do 'Pay rent' cannot be read; skipped"]


def test_a_calendar_with_nothing_readable_is_an_error_in_words() -> None:
    with pytest.raises(ExtractError, match="not a readable iCalendar file"):
        extract_ical(b"BEGIN:VCALENDAR\r\nnot a property\r\n", PurePath("x.ics"))


def test_rules_are_repaired_without_their_spaces() -> None:
    rules, unreadable = readable_rules(["FREQ=WEEKLY;BYDAY=MO, TU", "FREQ=NEVER"])
    assert [dict(r) for r in rules] == [{"FREQ": ["WEEKLY"], "BYDAY": ["MO", "TU"]}]
    assert unreadable == ["FREQ=NEVER"]


def test_a_file_cut_inside_an_event_keeps_what_it_has() -> None:
    data = calendar(GOOD, GOOD).replace(b"END:VEVENT\r\nEND:VCALENDAR\r\n", b"LOCATION:Mill")
    result = extract_ical(data, PurePath("x.ics"))  # icalendar alone returns nothing
    assert [d.content_date for d in result.drafts] == ["2024-03-26T08:30:00"] * 2
    assert "Where: Mill" in result.drafts[1].content
    assert result.problems == [
        "line 8: the event 'Dentist' is cut short (the file ends inside it); kept"
    ]


def test_a_rule_naming_no_real_month_is_read_without_it() -> None:
    assert recurrence_words({"FREQ": ["YEARLY"], "BYMONTH": [13]}) == "every year"

"""Zoom's saved captions (`meeting_saved_closed_caption.txt`): speaker turns, the meeting
named and dated by its recording folder, speakers as mentions, recognised by its first line."""

from __future__ import annotations

from pathlib import Path

from engine.extractors.meeting import extract_transcript
from engine.extractors.recognisers import RECOGNISERS
from engine.extractors.sniffing import no_siblings
from engine.extractors.zoom_captions import caption_turns

FIXTURE = (
    Path(__file__).parent
    / "fixtures/meeting/2024-03-11 10.00.00 Weekly sync/meeting_saved_closed_caption.txt"
)


def test_captions_become_turns_of_one_meeting() -> None:
    result = extract_transcript(FIXTURE.read_bytes(), FIXTURE)
    [draft] = result.drafts
    assert draft.title == "Weekly sync" and draft.content_date == "2024-03-11T10:00:00"
    assert draft.content.splitlines() == [
        "Meeting: Weekly sync",
        "Ana Lima: Morning everyone, let's start with the ferry booking. We need the late "
        "sailing on Friday.",
        "Ben Okafor: I can book it today, the nine o'clock one.",
        "Dan Reyes: Put the bikes on the same ticket please.",
        "Ben Okafor: Will do.",
    ]
    assert draft.location == "line:1"
    counts = {m.name: (m.role, m.count) for m in result.mentions}
    assert counts == {
        "Ana Lima": ("speaker", 1),
        "Ben Okafor": ("speaker", 2),
        "Dan Reyes": ("speaker", 1),
    }


def test_text_before_the_first_caption_and_blank_captions_are_dropped() -> None:
    turns = caption_turns("stray line\n[A] 9:00:01\n\n[B] 9:00:02\nhello\n")
    assert [(t.speaker, t.text) for t in turns] == [("B", "hello")]


def test_recognised_by_its_name_and_first_line() -> None:
    test = RECOGNISERS["subtitles"].test
    head = FIXTURE.read_bytes()
    assert test("meeting_saved_closed_caption.txt", head, no_siblings)
    assert not test("meeting_saved_closed_caption.txt", b"just some text\n", no_siblings)
    assert test("talk.vtt", b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nhi\n", no_siblings)

"""The extractors' explicit limits: nesting depth, YAML front matter, numbers out of range.

Each input here would otherwise escape an extractor as RecursionError, OverflowError,
AttributeError or csv.Error (or take minutes and gigabytes); it is an `ExtractError` for the
file or a problem for the one record, and the rest of the file is read.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

import pytest

from engine.extractors import ExtractError, Extraction, get_extractor
from engine.extractors.chunking import MAX_JSON_DEPTH, parse_date
from engine.extractors.markdown import MAX_FRONT_MATTER_ALIASES, MAX_FRONT_MATTER_BYTES

GOOD_SLACK = {"ts": "1780000000.000100", "channel": "eng", "user_name": "Ana", "text": "hello"}


def extract(source_type: str, data: bytes | str, name: str) -> Extraction:
    raw = data.encode() if isinstance(data, str) else data
    return get_extractor(source_type)(raw, PurePosixPath("/data") / name)


# -- nesting depth ------------------------------------------------------------------------------


def test_deep_json_is_an_extract_error() -> None:
    with pytest.raises(ExtractError, match="nested deeper than"):
        extract("garmin", "[" * 100_000, "2024-03-11.json")
    with pytest.raises(ExtractError, match="nested deeper than"):
        extract("voice", '{"a": ' * 50_000, "memo.json")


def test_a_deep_jsonl_line_is_a_problem_for_that_line() -> None:
    deep = '{"text": "x", "extra": ' + "[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5) + "}"
    lines = [
        json.dumps(GOOD_SLACK),
        "[" * 100_000,
        deep,
        json.dumps(GOOD_SLACK | {"ts": "1780000060"}),
    ]
    result = extract("slack", "\n".join(lines), "eng.jsonl")
    assert [p.split(":")[0] for p in result.problems] == ["line 2", "line 3"]
    assert all("nested deeper than" in p for p in result.problems)
    assert result.drafts and "hello" in result.drafts[0].content


def test_records_nested_under_the_limit_but_deep_are_read() -> None:
    """A record nested a few hundred levels (json reads it) is refused before a recursive
    reader (structured field lines) could overflow the stack on it."""
    record = '{"title": "t", "x": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}"
    result = extract("checkin", record + '\n{"title": "fine", "mood": 3}\n', "c.jsonl")
    assert result.problems == [f"line 1: nested deeper than {MAX_JSON_DEPTH} levels"]
    assert len(result.drafts) == 1


# -- numbers out of range -----------------------------------------------------------------------


@pytest.mark.parametrize("ts", ["1e20", "1e400", "NaN", "-1e20", "inf"])
def test_a_slack_ts_out_of_range_is_a_problem_for_that_message(ts: str) -> None:
    lines = [json.dumps(GOOD_SLACK), json.dumps(GOOD_SLACK | {"ts": ts, "text": "later"})]
    result = extract("slack", "\n".join(lines), "eng.jsonl")
    assert result.problems == ["line 2: message without a usable ts"]
    assert len(result.drafts) == 1


def test_a_garmin_value_out_of_range_is_a_problem_for_that_field() -> None:
    day = '{"calendarDate": "2024-03-11", "totalSteps": 1e400, "sleepTimeSeconds": 1e400, '
    day += '"restingHeartRate": 52}'
    result = extract("garmin", day, "2024-03-11.json")
    assert result.problems == [
        "2024-03-11: totalSteps is out of range (inf)",
        "2024-03-11: sleepTimeSeconds is out of range (inf)",
    ]
    assert "resting heart rate 52 bpm" in result.drafts[0].content


@pytest.mark.parametrize(
    "value", [1e20, -1e20, float("inf"), float("nan"), "0001-01-01T00:00:00+14:00", 10**30]
)
def test_a_date_out_of_range_is_no_date(value: object) -> None:
    assert parse_date(value) is None


def test_whisper_segments_out_of_range_are_problems() -> None:
    memo = '{"segments": [{"start": 1e400, "text": "a"}, {"start": 3.0, "text": "b"}]}'
    result = extract("voice", memo, "2024-03-11 memo.json")
    assert result.problems == ["segment 1: no usable start time"]
    assert len(result.drafts) == 1


def test_a_bad_csv_is_an_extract_error() -> None:
    huge = 'Timestamp,Glucose Value (mg/dL)\n"' + "a" * 200_000 + '",1\n'
    with pytest.raises(ExtractError, match="CSV"):
        extract("cgm", huge, "clarity.csv")


def test_a_csv_with_old_mac_line_ends_is_read() -> None:
    text = "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Glucose Value (mg/dL)\r"
    text += "1,2024-03-11T08:00:00,EGV,100\r2,2024-03-11T08:05:00,EGV,1e400\r"
    result = extract("cgm", text, "clarity.csv")
    assert result.problems == ["line 3: unreadable reading"]
    assert "1 reading." in result.drafts[0].content


# -- YAML front matter --------------------------------------------------------------------------

BOMB = (
    '---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "tags: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n---\n# Body\nThe text of the note.\n"
)


def test_a_yaml_alias_bomb_is_refused_before_it_expands() -> None:
    result = extract("note", BOMB, "bomb.md")
    assert result.problems == [
        f"line 1: front matter refused (more than {MAX_FRONT_MATTER_ALIASES} YAML aliases); skipped"
    ]
    assert max(len(d.content) for d in result.drafts) < 2000
    assert [d.content.split("\n")[-1] for d in result.drafts] == ["The text of the note."]


def test_a_few_yaml_aliases_are_fine() -> None:
    text = "---\nwho: &ana Ana\nauthor: *ana\ntags: [a, b]\n---\n# H\nBody text.\n"
    result = extract("note", text, "n.md")
    assert result.problems == []
    assert "Tags: a, b" in result.drafts[0].content


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("x: " + "[" * 50_000, "nested deeper than"),
        ("- " * 5000 + "x", "nested deeper than"),
        ("date: !!timestamp 99999-01-01", "not readable YAML"),
        ("date: 2024-02-30", "not readable YAML"),
        ("n: " + "9" * 5000, "not readable YAML"),
        ("k: v\n" * 20_000, f"larger than {MAX_FRONT_MATTER_BYTES} bytes"),
    ],
    ids=["deep-flow", "deep-block", "timestamp", "bad-date", "huge-int", "large"],
)
def test_front_matter_that_cannot_be_read_is_read_as_text(front: str, reason: str) -> None:
    result = extract("note", f"---\n{front}\n---\n# Heading\nThe body.\n", "n.md")
    assert len(result.problems) == 1 and reason in result.problems[0]
    assert any("The body." in d.content for d in result.drafts)


def test_a_meeting_with_a_bomb_in_its_front_matter_is_read() -> None:
    text = BOMB.replace("tags:", "attendees:") + "Ana: hello there\n"
    result = extract("meeting", text, "2024-03-11-sync.md")
    assert result.drafts and all(len(json.dumps(d.metadata)) < 2000 for d in result.drafts)

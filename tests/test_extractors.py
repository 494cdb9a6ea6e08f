"""Extractor behaviour beyond the goldens: stable ids, damage kept local, format corners."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Extraction, get_extractor
from engine.extractors.base import FamilyReader, declared_reader
from engine.extractors.chunking import (
    Message,
    chunk_id,
    jsonl_drafts,
    load_json,
    numbered_messages,
)
from engine.extractors.mail import html_to_text, strip_quotes_and_signature
from engine.extractors.registry import REGISTRY
from engine.index.runs import reindex
from engine.records import Draft
from engine.settings import Settings
from engine.sources import SOURCE_TYPES
from tests.sibling_files import siblings_on_disk

FIXTURES = Path(__file__).parent / "fixtures"
BASE_TS = 1_710_000_000


def extract(source_type: str, data: bytes | str, name: str) -> Extraction:
    raw = data.encode() if isinstance(data, str) else data
    return get_extractor(source_type)(raw, PurePath(name))


def ids(extraction: Extraction, source_file: str = "f") -> list[str]:
    seen: dict[str, int] = {}
    found = []
    for draft in extraction.drafts:
        occurrence = seen.get(draft.content, 0)
        seen[draft.content] = occurrence + 1
        found.append(chunk_id(source_file, draft.content, occurrence))
    return found


def slack_line(i: int, text: str = "") -> str:
    return json.dumps(
        {
            "ts": f"{BASE_TS + i * 60}.000100",
            "channel": "eng",
            "user": f"U{i % 3}",
            "user_name": ["Ana", "Ben", "Chi"][i % 3],
            "text": text or f"update {i} on the battery scheduler",
        }
    )


def telegram_line(i: int, text: str = "") -> str:
    return json.dumps(
        {
            "date": BASE_TS + i * 60,
            "chat": "Family",
            "from": ["Mum", "Leo"][i % 2],
            "text": text or f"message {i} about Sunday lunch",
        }
    )


def signal_line(i: int, text: str = "") -> str:
    return json.dumps(
        {
            "envelope": {
                "sourceName": "Maya",
                "sourceNumber": "+1555",
                "timestamp": (BASE_TS + i * 60) * 1000,
                "dataMessage": {"message": text or f"note {i}"},
            }
        }
    )


CHAT_FORMATS = [
    ("slack", slack_line, "eng.jsonl"),
    ("telegram", telegram_line, "t.jsonl"),
    ("signal", signal_line, "s.jsonl"),
]


@pytest.mark.parametrize(("source_type", "line", "name"), CHAT_FORMATS)
def test_chat_window_ids_survive_inserts_above(
    source_type: str, line: Callable[..., str], name: str
) -> None:
    before = "\n".join(line(i) for i in range(10, 120))
    inserted = "\n".join(line(i, f"inserted {i}") for i in range(4, 10))  # just before, same chat
    old = ids(extract(source_type, before, name))
    new = ids(extract(source_type, inserted + "\n" + before, name))
    assert len(old) >= 8
    lost = set(old) - set(new)
    assert len(lost) <= 2, "content-defined cuts resync within the windows the inserts touch"


@pytest.mark.parametrize(("source_type", "line", "name"), CHAT_FORMATS)
def test_chat_window_ids_ignore_other_conversations_inserted_above(
    source_type: str, line: Callable[..., str], name: str
) -> None:
    before = [line(i) for i in range(10, 120)]
    other = [json.loads(line(i, f"elsewhere {i}")) for i in range(10, 40)]
    for record in other:  # the same shape, another channel / chat / group
        record.update({"channel": "random", "chat": "Work"})
        if "envelope" in record:
            record["envelope"]["dataMessage"]["groupInfo"] = {"groupName": "Work"}
    old = ids(extract(source_type, "\n".join(before), name))
    new = ids(extract(source_type, "\n".join([json.dumps(r) for r in other] + before), name))
    assert set(old) < set(new)


@pytest.mark.parametrize(("source_type", "line", "name"), CHAT_FORMATS)
def test_chat_appends_change_only_the_last_window(
    source_type: str, line: Callable[..., str], name: str
) -> None:
    before = [line(i) for i in range(0, 100)]
    old = ids(extract(source_type, "\n".join(before), name))
    new = ids(extract(source_type, "\n".join(before + [line(i) for i in range(100, 110)]), name))
    assert set(old[:-1]) <= set(new)


RECORD_LINES = {
    "observation": lambda i: {"id": i, "date": "2024-02-02", "text": f"observation {i}"},
    "event": lambda i: {"date": "2024-03-01", "title": f"event {i}", "people": ["Ana"]},
    "email_catalog": lambda i: {
        "date": "2024-03-01",
        "from": "a@b.c",
        "subject": f"mail {i}",
        "summary": "body",
    },
    "checkin": lambda i: {"date": "2024-03-01", "mood": i},
    "podcast_digest": lambda i: {"date": "2024-03-01", "episode": f"ep {i}", "summary": "s"},
}


@pytest.mark.parametrize("source_type", sorted(RECORD_LINES))
def test_record_ids_do_not_move_when_lines_are_inserted(source_type: str) -> None:
    make = RECORD_LINES[source_type]
    lines = [json.dumps(make(i)) for i in range(10, 20)]
    old = extract(source_type, "\n".join(lines), "x.jsonl")
    new = extract(source_type, "\n".join([json.dumps(make(1)), "{broken", *lines]), "x.jsonl")
    assert set(ids(old)) <= set(ids(new))
    assert new.problems and len(new.drafts) == len(old.drafts) + 1
    assert new.drafts[-1].location == "line:12"  # the location follows the line, the id does not


UNREADABLE = [
    ("garmin", b'{"calendarDate": "2024-03-11", "totalSteps": 10', "2024-03-11.json"),
    ("garmin", b'{"foo": 1}', "2024-03-11.json"),
    ("voice", b"not json", "2024-03-11.json"),
    ("voice", b'{"language": "en"}', "2024-03-11.json"),
    ("telegram", b'{"about": "x"}', "result.json"),
    ("slack", b'{"not": "an array"}', "2024-03-11.json"),
    ("cgm", b"a,b,c\n1,2,3\n", "x.csv"),
    ("email_catalog", b"\x00\x01binary", "x.eml"),
    ("email_catalog", b"Subject: x\n\nbody", "x.mbox"),
    ("interview_meta", b"[]", "x.json"),
    ("note", b"\x00\x00\x00junk", "x.md"),
]


@pytest.mark.parametrize(("source_type", "data", "name"), UNREADABLE)
def test_unreadable_files_raise_extract_error(source_type: str, data: bytes, name: str) -> None:
    with pytest.raises(ExtractError):
        extract(source_type, data, name)


def test_a_bad_file_is_recorded_and_the_rest_indexed(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    root = settings.roots[0]
    (root / "data" / "garmin").mkdir(parents=True)
    shutil.copy(FIXTURES / "garmin" / "2024-03-11.json", root / "data" / "garmin")
    (root / "data" / "garmin" / "2024-03-12.json").write_text('{"totalSteps": ')
    (root / "data" / "signal").mkdir(parents=True)
    shutil.copy(FIXTURES / "signal" / "bad.jsonl", root / "data" / "signal" / "chats.jsonl")
    stats = reindex(settings=settings)
    errors = dict(stats.errors)
    assert "not JSON" in errors[str(root / "data" / "garmin" / "2024-03-12.json")]
    assert "line 4" in errors[str(root / "data" / "signal" / "chats.jsonl")]  # problems reported
    assert stats.chunks == 2  # the good Garmin day and the good Signal window


def test_slack_export_names_threads_and_noise() -> None:
    path = PurePath(FIXTURES / "slack" / "export" / "general" / "2024-03-11.json")
    siblings = siblings_on_disk(Path(path), "slack")
    result = get_extractor("slack")(Path(path).read_bytes(), path, siblings)
    content = result.drafts[0].content
    lines = content.split("\n")
    assert lines[0].startswith("Ana Lima: Kick-off") and "@Dan W." in lines[0]  # users.json only
    assert lines[1].startswith("Dan W.: ↳") and lines[2].startswith("Ben Okafor: ↳")  # thread
    assert "has joined" not in content and "Deployed build" not in content
    assert "deleted" not in content
    assert "search spec v1 (https://docs.example.com/d/search-spec)" in content
    assert "[file: latency-q1.csv]" in content


def test_slack_export_without_users_json_uses_ids(tmp_path: Path) -> None:
    day = tmp_path / "export" / "general" / "2024-03-11.json"
    day.parent.mkdir(parents=True)
    day.write_text(
        json.dumps(
            [{"type": "message", "user": "U9", "text": "hi <@U8>", "ts": "1710144060.000200"}]
        )
    )
    result = get_extractor("slack")(day.read_bytes(), day)
    assert result.drafts[0].content == "U9: hi @U8"


def test_telegram_text_entities_and_marks() -> None:
    text = [
        {"type": "bold", "text": "Big"},
        " news: ",
        {"type": "text_link", "text": "here", "href": "https://x.example"},
    ]
    line = json.dumps(
        {
            "date": "2024-03-01T10:00:00",
            "chat": "c",
            "from": "A",
            "text": text,
            "forwarded_from": "B",
        }
    )
    result = extract("telegram", line, "t.jsonl")
    assert result.drafts[0].content == "A: (forwarded from B) Big news: here (https://x.example)"
    assert result.drafts[0].title == "c · 2024-03-01"


def test_email_quotes_and_signatures_are_dropped() -> None:
    body = (
        "Yes, Friday works.\n\nOn Tue, 5 Mar 2024, Bob <b@x> wrote:\n> Does Friday work?\n> Bob\n"
    )
    assert strip_quotes_and_signature(body) == "Yes, Friday works."
    assert strip_quotes_and_signature("Thanks!\n-- \nAna\nSearch lead") == "Thanks!"
    assert (
        strip_quotes_and_signature("See below.\n\nFrom: Bob\nSent: Monday\nTo: me\n\nold")
        == "See below."
    )
    assert strip_quotes_and_signature("From: the start\nof a poem") == "From: the start\nof a poem"


def test_html_to_text_keeps_inline_words_on_one_line() -> None:
    html = "<p>Hello <b>Ana</b>,</p><p>see <a href='x'>the doc</a><br>bye</p><script>x()</script>"
    assert html_to_text(html) == "Hello Ana,\nsee the doc\nbye"


def test_cgm_converts_mmol_and_reads_us_dates() -> None:
    csv = (
        "Glucose Data,Generated on,03-13-2024 18:04 UTC\n"
        "Device,Serial Number,Device Timestamp,Record Type,Historic Glucose mmol/L,"
        "Scan Glucose mmol/L\n"
        "Libre,1,03-13-2024 08:00 AM,0,5.0,\nLibre,1,03-13-2024 02:00 PM,0,10.0,\n"
    )
    draft = extract("cgm", csv, "libre.csv").drafts[0]
    assert draft.content_date == "2024-03-13"
    assert draft.metadata["min_mgdl"] == pytest.approx(90.1)
    assert draft.metadata["max_mgdl"] == pytest.approx(180.2)
    assert "time in range 70–180 mg/dL 50%" in draft.content


def test_a_csv_the_csv_module_cannot_read_is_told_in_words() -> None:
    header = "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Glucose Value (mg/dL)\n"
    huge = header + '1,2024-03-12T08:00:00,EGV,"' + "x" * 140_000 + '"\n'
    with pytest.raises(ExtractError) as caught:
        extract("cgm", huge, "clarity.csv")
    assert str(caught.value) == "not a readable CSV: a field is longer than 131,072 characters"


def test_garmin_summary_reads_as_a_sentence_with_units() -> None:
    data = json.dumps(
        {
            "calendarDate": "2024-03-11",
            "totalSteps": 8432,
            "sleepTimeSeconds": 25200,
            "restingHeartRate": 55,
            "totalDistanceMeters": 6100,
        }
    )
    draft = extract("garmin", data, "2024-03-11.json").drafts[0]
    assert draft.content == (
        "Garmin daily summary for Monday 2024-03-11: 8,432 steps; "
        "6.1 km covered; resting heart rate 55 bpm; slept 7 h 0 min."
    )


def test_voice_windows_are_about_a_minute() -> None:
    segments = [{"start": s, "end": s + 10, "text": f"part {s}"} for s in range(0, 300, 10)]
    result = extract("voice", json.dumps({"segments": segments}), "2024-03-11-walk.json")
    assert [d.location for d in result.drafts] == [
        "t:00:00:00",
        "t:00:01:00",
        "t:00:02:00",
        "t:00:03:00",
        "t:00:04:00",
    ]
    assert all(d.content_date == "2024-03-11" for d in result.drafts)


def test_subtitles_merge_one_speaker_and_keep_cue_time() -> None:
    vtt = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ana>One.\n\n"
        "00:00:02.000 --> 00:00:03.000\n<v Ana>Two.\n\n"
        "00:01:05.000 --> 00:01:06.000\n<v Ben>Three.\n"
    )
    draft = extract("meeting", vtt, "2024-03-14-sync.vtt").drafts[0]
    assert draft.content == "Meeting: sync\nAna: One. Two.\nBen: Three."
    assert draft.location == "t:00:00:01" and draft.content_date == "2024-03-14"


def test_note_front_matter_is_searchable_text() -> None:
    note = "---\ntitle: Bike fit\naliases: [saddle height]\ntags: [cycling]\n---\nRaise 5 mm.\n"
    draft = extract("note", note, "notes/bike.md").drafts[0]
    assert draft.title == "Bike fit"
    assert "Aliases: saddle height" in draft.content and "Tags: cycling" in draft.content


def test_signal_quotes_name_their_author_and_sync_messages_join_the_chat() -> None:
    lines = [
        {
            "envelope": {
                "sourceName": "Omar",
                "sourceNumber": "+2",
                "timestamp": 1710400000000,
                "dataMessage": {"message": "Tickets are live"},
            },
            "account": "+1",
        },
        {
            "envelope": {
                "sourceNumber": "+1",
                "timestamp": 1710400060000,
                "syncMessage": {
                    "sentMessage": {
                        "destinationNumber": "+2",
                        "timestamp": 1710400060000,
                        "message": "Buying two",
                        "quote": {"authorNumber": "+2", "text": "Tickets are live"},
                    }
                },
            },
            "account": "+1",
        },
    ]
    result = extract("signal", "\n".join(json.dumps(x) for x in lines), "s.jsonl")
    assert [d.title for d in result.drafts] == ["Omar · 2024-03-14"]
    assert (
        result.drafts[0].content.split("\n")[1]
        == 'Me: ↳ (reply to Omar: "Tickets are live") Buying two'
    )


def test_jsonl_drafts_records_each_bad_line_in_file_order() -> None:
    def draft_for(number: int, record: dict[str, object]) -> Draft | None:
        return Draft(str(record["keep"]), location=f"line:{number}") if record["keep"] else None

    data = b'{"keep": "a"}\nnot json\n{"keep": ""}\n[1]\n\n{"keep": "b"}\n'
    result = jsonl_drafts(data, draft_for, "nothing to keep")
    assert [(d.content, d.location) for d in result.drafts] == [("a", "line:1"), ("b", "line:6")]
    assert result.problems == [
        "line 2: not JSON (a value is missing)",
        "line 3: nothing to keep",
        "line 4: not a JSON object",
    ]


JSON_MODULE_WORDS = re.compile(
    r"Expecting|Unterminated|Invalid|Illegal|Extra data|Exceeds|delimiter"
)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "a value is missing (line 1)"),
        ('{"a": 1,\n', "a key is not in double quotes (line 2)"),
        ('{"a" 1}', "a colon is missing after a key"),
        ("[1 2]", "a comma is missing between two items"),
        ('[\n"cut short', "a string is never closed (line 2)"),
        ('["a\nb"]', "a string holds a raw line break or control character"),
        ('["\\x"]', "a string holds a broken backslash escape"),
        ('["\\u12"]', "a string holds a broken backslash escape"),
        ("[1] x", "more follows the end of the document"),
        ("9" * 5000, "a number is too long to read"),
    ],
)
def test_json_that_cannot_be_read_is_told_in_words(text: str, words: str) -> None:
    with pytest.raises(ExtractError) as caught:
        load_json(text)
    assert str(caught.value).startswith(f"not JSON: {words}")
    assert not JSON_MODULE_WORDS.search(str(caught.value))


def test_numbered_messages_skip_noise_and_record_only_the_given_errors() -> None:
    def to_message(number: int, text: str) -> Message | None:
        if text == "broken":
            raise ValueError(text)
        if text == "odd":
            raise KeyError(text)
        return Message("2024-03-01T10:00:00", "Ana", text, "eng") if text else None

    result = Extraction()
    messages = numbered_messages(
        enumerate(["hi", "", "broken", "yo"], start=1),
        to_message,
        result,
        "unusable",
        where="message",
    )
    assert [m.text for m in messages] == ["hi", "yo"]
    assert result.problems == ["message 3: unusable"]
    with pytest.raises(KeyError):
        numbered_messages([(1, "odd")], to_message, result, "unusable", errors=(ValueError,))


def test_families_register_one_extractor_per_source_type() -> None:
    family = [t.name for t in SOURCE_TYPES if isinstance(declared_reader(t), FamilyReader)]
    assert len(family) >= 8  # markdown, records and structured types
    assert len({id(REGISTRY[name]) for name in family}) == len(family)
    for name in family:
        assert REGISTRY[name] is get_extractor(name)
    quote = extract("quote", '{"text": "Less, but better."}', "q.jsonl").drafts[0]
    assert quote.title == "Quote: Less, but better."

"""Documents in their real shapes: recorder file names, Obsidian notes, mailings, LibreView."""

from __future__ import annotations

import codecs
import shutil
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Extraction, get_extractor
from engine.extractors.chunking import date_from_name, decode
from engine.extractors.filenames import datetime_from_name, recording_title
from engine.extractors.mail import html_to_text, strip_footer

FIXTURES = Path(__file__).parent / "fixtures"


def extract_file(source_type: str, path: Path) -> Extraction:
    return get_extractor(source_type)(path.read_bytes(), path)


def extract(source_type: str, data: bytes | str, name: str) -> Extraction:
    raw = data.encode() if isinstance(data, str) else data
    return get_extractor(source_type)(raw, PurePath(name))


# -- recorder file names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "when", "title"),
    [
        (
            "GMT20240311-100000_Recording.transcript.vtt",
            "2024-03-11T10:00:00",
            "Zoom recording · 2024-03-11 10:00",
        ),
        ("GMT20240311-100000_Recording.cc.vtt", "2024-03-11T10:00:00", None),
        (
            "Meeting Recording 2024-03-11 10-00-00.vtt",
            "2024-03-11T10:00:00",
            "Meeting recording · 2024-03-11 10:00",
        ),
        ("Weekly sync-20240311_100000-Meeting Recording.vtt", "2024-03-11T10:00:00", "Weekly sync"),
        ("2024_03_11 09_30 Standup.srt", "2024-03-11T09:30:00", "Standup"),
        (
            "Design review (2024-03-11 at 14:05 GMT+1) - Transcript.vtt",
            "2024-03-11T14:05:00",
            "Design review",
        ),
        ("20240311_100000.srt", "2024-03-11T10:00:00", "Meeting recording · 2024-03-11 10:00"),
        ("2024-03-14-weekly-sync.vtt", "2024-03-14", "weekly sync"),
        ("2024-03-11.vtt", "2024-03-11", "2024-03-11"),
        ("interview.srt", None, "interview"),
        ("2024-02-30 then 2024-03-01 notes.vtt", "2024-03-01", None),  # the first valid date
        ("call 12345678_123456.vtt", None, None),  # not a year: an id
    ],
)
def test_recorder_names_give_date_and_title(name: str, when: str | None, title: str | None) -> None:
    assert datetime_from_name(name) == when
    assert date_from_name(name) == (when[:10] if when else None)
    if title is not None:
        assert recording_title(PurePath(name).stem.removesuffix(".transcript")) == title


def test_a_zoom_transcript_is_dated_and_titled() -> None:
    path = FIXTURES / "meeting" / "GMT20240311-100000_Recording.transcript.vtt"
    drafts = extract_file("meeting", path).drafts
    assert [(d.title, d.content_date) for d in drafts] == [
        ("Zoom recording · 2024-03-11 10:00", "2024-03-11T10:00:00")
    ]
    assert drafts[0].content.split("\n")[1] == (
        "Dana Okafor: Morning everyone, let's start with the ferry schedule."
    )


def test_a_zoom_transcript_in_its_recording_folder_takes_the_meetings_topic(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "Zoom" / "2024-03-11 10.00.00 Weekly sync"
    folder.mkdir(parents=True)
    name = "GMT20240311-100000_Recording.transcript.vtt"
    shutil.copy(FIXTURES / "meeting" / name, folder / name)
    drafts = extract_file("meeting", folder / name).drafts
    assert [(d.title, d.content_date) for d in drafts] == [
        ("Weekly sync", "2024-03-11T10:00:00")  # the start from the file's own UTC stamp
    ]
    other = tmp_path / "Downloads"  # no recording folder: the recorder's label and date
    other.mkdir()
    shutil.copy(FIXTURES / "meeting" / name, other / name)
    assert extract_file("meeting", other / name).drafts[0].title == (
        "Zoom recording · 2024-03-11 10:00"
    )


def test_a_meeting_recording_srt_is_dated_and_titled() -> None:
    path = FIXTURES / "meeting" / "Meeting Recording 2024-03-12 14-30-00.srt"
    draft = extract_file("meeting", path).drafts[0]
    assert (draft.title, draft.content_date) == (
        "Meeting recording · 2024-03-12 14:30",
        "2024-03-12T14:30:00",
    )


def test_a_markdown_meeting_takes_its_date_from_a_recorder_name() -> None:
    draft = extract("meeting", "Ana: hello\nBen: hi\n", "Planning-20240311_093000.md").drafts[0]
    assert (draft.title, draft.content_date) == ("Planning", "2024-03-11T09:30:00")


# -- Obsidian -----------------------------------------------------------------------------------

VAULT = FIXTURES / "note" / "vault"


def test_obsidian_created_is_the_date() -> None:
    drafts = extract_file("note", VAULT / "Heron survey.md").drafts
    assert {d.content_date for d in drafts} == {"2024-03-11T09:14:00"}
    note = "---\ncreated: 2024-03-01\ndate: 2024-03-05\n---\nBody.\n"
    assert extract("note", note, "n.md").drafts[0].content_date == "2024-03-05"  # date wins


def test_obsidian_wikilinks_read_as_text_and_stay_in_metadata() -> None:
    first, counts = extract_file("note", VAULT / "Heron survey.md").drafts
    assert "Walked the north shore with Raj and Dana Okafor." in first.content
    assert "[file: heron-map.png]" in first.content
    assert "Twelve nests at hide 2, up from nine; method in Survey method." in counts.content
    assert "[[" not in first.content + counts.content.split("```")[0]
    assert first.metadata["links"] == ["Rajesh Kumar", "Dana Okafor", "heron-map.png"]
    assert counts.metadata["links"] == ["Sites/North shore", "Survey method"]


def test_obsidian_comments_are_not_indexed_and_code_is_kept() -> None:
    first, counts = extract_file("note", VAULT / "Heron survey.md").drafts
    assert "permit" not in first.content and "%%" not in first.content
    assert "eleven" not in counts.content and "Draft numbers" not in counts.content
    assert "# not a link: [[nests]] stays as written, %% too %%" in counts.content
    assert counts.location == "line:11#counts"  # lines after a removed comment keep their numbers


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("[[Note#Heading]]", "Note › Heading"),
        ("[[#Heading]]", "Heading"),
        ("[[Log#^b12]]", "Log"),
        ("![[Other note]]", "Other note"),
        ("`[[code]]` and `%%x%%`", "`[[code]]` and `%%x%%`"),
        ("a %% b %% c", "a c"),
    ],
)
def test_obsidian_syntax_corners(markdown: str, shown: str) -> None:
    assert extract("note", f"{markdown}\n", "n.md").drafts[0].content.endswith(f"\n{shown}")


def test_code_docs_keep_double_brackets_and_percent_signs() -> None:
    doc = "# Indexing\nUse `x[[0]]`; m[[1, 2]] picks rows; printf needs %% and %%.\n"
    assert "m[[1, 2]] picks rows; printf needs %% and %%." in (
        extract("codebase_doc", doc, "doc.md").drafts[0].content
    )


def test_broken_front_matter_is_skipped_and_the_body_indexed() -> None:
    result = extract_file("note", VAULT / "bad-broken-properties.md")
    assert result.problems == ["line 1: front matter is not readable YAML; skipped"]
    assert len(result.drafts) == 1
    assert "tags:" not in result.drafts[0].content and "created" not in result.drafts[0].content
    assert result.drafts[0].content.endswith(
        "The 8:15 ferry was late; Dana Okafor counted from the deck."
    )


def test_prose_between_two_rules_is_not_front_matter() -> None:
    note = "---\n- buy oat milk\n- lemons\n---\nEnd.\n"
    result = extract("note", note, "n.md")
    assert "buy oat milk" in result.drafts[0].content


# -- HTML mail ----------------------------------------------------------------------------------


def test_mailing_preheader_and_footer_are_dropped() -> None:
    draft = extract_file("email_catalog", FIXTURES / "email_catalog" / "newsletter.eml").drafts[0]
    assert draft.content.endswith("The new hide opens on 23 March; bring binoculars.")
    for boilerplate in ("Preview", "Twelve nests on", "receiving this email", "Unsubscribe", "©"):
        assert boilerplate not in draft.content
    assert "twelve nests" in draft.content


def test_hidden_html_elements_are_dropped() -> None:
    html = (
        "<div style='DISPLAY: NONE'>pre</div><p hidden>gone</p>"
        "<span style='visibility:hidden'>x</span><p>Shown</p>"
    )
    assert html_to_text(html) == "Shown"


def test_a_person_s_plain_mail_about_unsubscribing_is_kept() -> None:
    mail = "From: Ana <a@x>\nSubject: list\n\nHi Bob,\nCan you unsubscribe me from the list?\nAna\n"
    draft = extract("email_catalog", mail, "m.eml").drafts[0]
    assert "Can you unsubscribe me from the list?" in draft.content
    assert strip_footer("Unsubscribe me") == "Unsubscribe me"  # the first line always stays


# -- LibreView and decoding ---------------------------------------------------------------------


def test_libreview_notes_are_indexed() -> None:
    first = extract_file("cgm", FIXTURES / "cgm" / "libreview.csv").drafts[0]
    assert first.content.endswith("4 readings. Notes: 12:35 Lunch: pasta.")
    assert first.metadata["notes"] == 1


def test_libreview_notes_on_a_day_without_readings() -> None:
    csv = (
        "Glucose Data,Generated on,03-13-2024 18:04 UTC\n"
        "Device,Serial Number,Device Timestamp,Record Type,Historic Glucose mg/dL,Notes\n"
        "Libre,1,03-13-2024 08:00 AM,0,100,\nLibre,1,03-14-2024 02:00 PM,6,,Sensor fell off\n"
    )
    drafts = extract("cgm", csv, "libre.csv").drafts
    assert [d.content for d in drafts][
        1
    ] == "CGM notes for 2024-03-14 (LibreView): 14:00 Sensor fell off."


def test_a_utf16_libreview_export_is_read() -> None:
    result = extract_file("cgm", FIXTURES / "cgm" / "libreview-unicode-text.csv")
    assert result.problems == []
    assert "3 readings. Notes: 08:30 Run 10 km, fasted." in result.drafts[0].content


def test_a_semicolon_libreview_export_is_read() -> None:
    result = extract_file("cgm", FIXTURES / "cgm" / "libreview-semicolon.csv")
    assert [(d.content_date, d.metadata["readings"]) for d in result.drafts] == [
        ("2024-03-14", 2),
        ("2024-03-15", 1),
    ]
    assert result.drafts[0].metadata["max_mgdl"] == pytest.approx(111.7)  # 6,2 mmol/L


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_decode_reads_wide_encodings_with_a_bom(codec: str) -> None:
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}
    bom |= {"utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}
    assert decode(bom[codec] + "Glukose 5,8 – ok".encode(codec)) == "Glukose 5,8 – ok"


def test_decode_still_refuses_binary() -> None:
    with pytest.raises(ExtractError, match="binary"):
        decode(codecs.BOM_UTF16_LE + b"\x00\x00" * 10)
    with pytest.raises(ExtractError, match="binary"):
        decode(b"\x00\x01\x02 junk")


# -- mbox ---------------------------------------------------------------------------------------


def test_mbox_line_numbers_across_many_messages() -> None:
    """Counted on from the previous message (linear), and still exact."""
    messages, expected, line = [], [], 1
    for index in range(300):
        body = "\n".join(f"line {n}" for n in range(index % 7))
        text = f"From a@x Mon Mar 11 10:00:00 2024\nFrom: a@x\nSubject: m{index}\n\n{body}\n"
        messages.append(text)
        expected.append(f"line:{line}")
        line += text.count("\n")
    result = extract("email_catalog", "".join(messages), "box.mbox")
    assert [d.location for d in result.drafts] == expected

"""Chat exports in their real shapes: Signal groups and mentions, Slack DMs, Telegram damage."""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Any

import pytest

from engine.extractors import ExtractError, Extraction, get_extractor
from engine.extractors.signal import with_mentions
from tests.sibling_files import siblings_on_disk

FIXTURES = Path(__file__).parent / "fixtures"


def extract_file(source_type: str, path: Path) -> Extraction:
    """As the indexer reads it: with the siblings its type declares, read from disk."""
    return get_extractor(source_type)(path.read_bytes(), path, siblings_on_disk(path, source_type))


def extract(source_type: str, text: str, name: str) -> Extraction:
    return get_extractor(source_type)(text.encode(), PurePath(name))


# -- Signal -------------------------------------------------------------------------------------


def test_signal_group_lines_without_a_name_join_the_named_group() -> None:
    """The first line's `groupInfo` has only `groupId`; a later line names the group."""
    result = extract_file("signal", FIXTURES / "signal" / "groups.jsonl")
    assert [d.title for d in result.drafts] == ["Heron survey · 2024-03-15"]
    assert result.drafts[0].content.split("\n")[0] == "Omar: Ferry at 8:15, meet at the pier"
    assert "c2lnbmFs" not in json.dumps([d.title for d in result.drafts])


def test_signal_mentions_become_names() -> None:
    content = extract_file("signal", FIXTURES / "signal" / "groups.jsonl").drafts[0].content
    assert "Maya Chen: @Omar can you bring the spotting scope?" in content
    # after an emoji: signal-cli counts in UTF-16 units, an emoji is two of them
    assert "Me: 🎉 thanks @Maya Chen, I'll pack the waders" in content
    assert "\ufffc" not in content


@pytest.mark.parametrize(
    ("text", "mentions", "expected"),
    [
        (
            "\ufffc and \ufffc",
            [{"start": 6, "length": 1, "number": "+2"}, {"start": 0, "length": 1, "uuid": "u1"}],
            "@Ana and @Omar",
        ),
        ("hi \ufffc", [{"start": 3, "length": 1, "name": "+9"}], "hi @+9"),
        ("hi \ufffc", [{"start": 30, "length": 1, "name": "x"}], "hi "),  # out of range: left out
        ("hi \ufffc", "not a list", "hi "),
        ("hi \ufffc", [{"start": True, "length": 1}, {"start": 3, "length": -1}], "hi "),
    ],
)
def test_with_mentions_splices_names_in_utf16_units(
    text: str, mentions: Any, expected: str
) -> None:
    names = {"+2": "Omar", "u1": "Ana"}
    assert with_mentions(text, mentions, names) == expected


# -- Slack --------------------------------------------------------------------------------------


def test_slack_dm_is_titled_by_its_members() -> None:
    path = FIXTURES / "slack" / "export" / "D06DM0001" / "2024-03-11.json"
    draft = extract_file("slack", path).drafts[0]
    assert draft.title == "DM · Ana Lima, Ben Okafor · 2024-03-11"
    assert "D06DM0001" not in draft.title
    assert draft.content == (
        "Ana Lima: Can you review the ranking PR before Friday?\nBen Okafor: Yes, tomorrow morning"
    )  # Ben has no user_profile in the day file: his name comes from users.json


def test_slack_group_dm_is_titled_by_its_members() -> None:
    path = FIXTURES / "slack" / "export" / "mpdm-ana--ben--dan-1" / "2024-03-12.json"
    draft = extract_file("slack", path).drafts[0]
    assert draft.title == "Group DM · Ana Lima, Ben Okafor, Dan W. · 2024-03-12"


def test_slack_dm_without_listings_falls_back(tmp_path: Path) -> None:
    day = [{"type": "message", "user": "U1", "text": "hi", "ts": "1710144060.000200"}]
    for folder in ("D0NOLIST", "mpdm-ana--raj-1"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "2024-03-11.json").write_text(json.dumps(day))
    dm = extract_file("slack", tmp_path / "D0NOLIST" / "2024-03-11.json").drafts[0]
    group = extract_file("slack", tmp_path / "mpdm-ana--raj-1" / "2024-03-11.json").drafts[0]
    assert dm.title == "#D0NOLIST · 2024-03-11"  # no dms.json: nothing better than the id
    assert group.title == "Group DM · ana, raj · 2024-03-11"  # the handles in the name


def test_slack_channels_keep_their_hash_titles() -> None:
    path = FIXTURES / "slack" / "export" / "general" / "2024-03-11.json"
    assert extract_file("slack", path).drafts[0].title == "#general · 2024-03-11"


# -- Telegram -----------------------------------------------------------------------------------


def test_a_cut_off_telegram_export_keeps_the_complete_chats() -> None:
    result = extract_file("telegram", FIXTURES / "telegram" / "truncated" / "result.json")
    assert [d.title for d in result.drafts] == [
        "Heron survey · 2024-03-10",
        "Rajesh Kumar · 2024-03-11",
    ]
    assert result.drafts[1].location == "line:49"
    assert any("the 2 complete chats before it are kept" in p for p in result.problems)


def test_a_telegram_export_cut_before_any_chat_is_an_extract_error() -> None:
    text = (FIXTURES / "telegram" / "truncated" / "result.json").read_text()
    with pytest.raises(ExtractError, match="not JSON"):
        extract("telegram", text[: text.index('"name": "Heron survey"') + 10], "result.json")
    with pytest.raises(ExtractError, match="not JSON"):
        extract("telegram", '{"about": "x", "chats": ', "result.json")


def test_telegram_document_without_file_name_keeps_the_file_s_name() -> None:
    result = extract_file("telegram", FIXTURES / "telegram" / "truncated" / "result.json")
    assert result.drafts[0].content == (
        "Dana Okafor: Timetable for the site visit [file: ferry-timetable-march.pdf]"
    )  # and the sticker, named only by its file, is not a line


def _chat_with(message: dict[str, Any]) -> str:
    base = {"id": 1, "type": "message", "date": "2024-03-01T10:00:00", "from": "Jo", "text": ""}
    return json.dumps({"name": "c", "type": "personal_chat", "messages": [base | message]})


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"file": "files/a b.pdf", "file_name": "plan.pdf"}, ["Jo: [file: plan.pdf]"]),
        ({"file": "files\\scan 3.jpg"}, ["Jo: [file: scan 3.jpg]"]),
        ({"file": "(File not included. Change data exporting settings to download.)"}, []),
        ({"file": "video_files/giphy.mp4", "media_type": "animation"}, []),
    ],
)
def test_telegram_file_notes(message: dict[str, Any], expected: list[str]) -> None:
    result = extract("telegram", _chat_with(message), "result.json")
    assert [d.content for d in result.drafts] == expected

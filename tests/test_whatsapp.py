"""The WhatsApp reader over the line shapes of the common phones and locales."""

from __future__ import annotations

from pathlib import PurePath

import pytest

from engine.extractors import ExtractError
from engine.extractors.whatsapp import extract_whatsapp

NNBSP = "\u202f"
LRM = "\u200e"


def read(text: str, name: str = "WhatsApp Chat with Raj Patel.txt") -> list[tuple[str, str]]:
    """(content date, content) of each chunk."""
    result = extract_whatsapp(text.encode(), PurePath("Downloads") / name)
    assert not result.problems, result.problems
    return [(d.content_date or "", d.content) for d in result.drafts]


@pytest.mark.parametrize(
    ("line", "when"),
    [
        ("12/03/2024, 14:05 - Raj: hi", "2024-03-12T14:05:00"),  # Android UK
        ("3/14/24, 9:05 PM - Raj: hi", "2024-03-14T21:05:00"),  # Android US
        (f"[3/14/24, 9:05:12{NNBSP}PM] Raj: hi", "2024-03-14T21:05:12"),  # iOS US
        ("[12.03.24, 21:06:40] Raj: hi", "2024-03-12T21:06:40"),  # iOS German
        ("12.03.24, 14:05 - Raj: hi", "2024-03-12T14:05:00"),  # Android German
        ("12-03-2024 14:05 - Raj: hi", "2024-03-12T14:05:00"),  # dashes, no comma
        ("2024-03-12, 14:05 - Raj: hi", "2024-03-12T14:05:00"),  # year first
        ("12/03/2024, 2:05 pm - Raj: hi", "2024-03-12T14:05:00"),  # lower-case mark
        ("12/03/2024, 12:30 am - Raj: hi", "2024-03-12T00:30:00"),  # midnight hour
        ("12/03/2024, 12:30 p.m. - Raj: hi", "2024-03-12T12:30:00"),  # Spanish-style mark
    ],
)
def test_line_shapes(line: str, when: str) -> None:
    assert read(line + "\n") == [(when, "Raj: hi")]


def test_day_month_order_is_settled_by_any_field_over_twelve() -> None:
    month_first = "03/04/2024, 10:00 - A: first\n03/15/2024, 10:00 - A: second\n"
    assert [d for d, _ in read(month_first)] == ["2024-03-04T10:00:00", "2024-03-15T10:00:00"]
    day_first = "03/04/2024, 10:00 - A: first\n15/03/2024, 10:00 - A: second\n"
    assert sorted(d for d, _ in read(day_first)) == ["2024-03-15T10:00:00", "2024-04-03T10:00:00"]
    neither = "03/04/2024, 10:00 - A: only\n"
    assert read(neither)[0][0] == "2024-04-03T10:00:00"  # the locale-neutral default: DD/MM


def test_multi_line_messages_system_lines_and_media() -> None:
    text = (
        "12/03/2024, 09:14 - Messages and calls are end-to-end encrypted. Tap to learn more.\n"
        "12/03/2024, 09:15 - Raj added Maya\n"
        "12/03/2024, 09:16 - Raj: first line\nsecond line\n\nafter a blank line\n"
        "12/03/2024, 09:17 - Maya: <Media omitted>\n"
        "12/03/2024, 09:18 - Maya: IMG-20240312-WA0001.jpg (file attached)\n"
        "12/03/2024, 09:19 - Maya: budget.xlsx (file attached)\n"
        "12/03/2024, 09:20 - Maya: This message was deleted\n"
    )
    [(_, content)] = read(text)
    assert content == (
        "Raj: first line\nsecond line\n\nafter a blank line\nMaya: [file: budget.xlsx]"
    )


def test_ios_notices_name_the_group_and_are_skipped() -> None:
    text = (
        f"[3/8/24, 9:05:12{NNBSP}PM] Climbing Crew: {LRM}Messages and calls are end-to-end "
        "encrypted.\n"
        f"{LRM}[3/8/24, 9:05:13{NNBSP}PM] Dana: {LRM}Dana added Leo\n"
        f"[3/8/24, 9:06:40{NNBSP}PM] Dana: {LRM}image omitted\n"
        f"[3/8/24, 9:06:41{NNBSP}PM] Leo: {LRM}<attached: 00000015-grades.pdf>\n"
        f"[3/8/24, 9:07:00{NNBSP}PM] Leo: see{LRM} you there\n"
        f"[3/14/24, 9:00:00{NNBSP}AM] Leo: a day above 12 says the file is month first\n"
    )
    result = extract_whatsapp(text.encode(), PurePath("_chat.txt"))
    draft = result.drafts[0]
    assert draft.title == "Climbing Crew · 2024-03-08"
    assert draft.content == "Leo: [file: grades.pdf]\nLeo: see you there"


@pytest.mark.parametrize(
    ("path", "chat"),
    [
        ("WhatsApp Chat with Raj Patel.txt", "Raj Patel"),
        ("WhatsApp Chat mit Lena Weber.txt", "Lena Weber"),
        ("WhatsApp Chat - Book Club/_chat.txt", "Book Club"),
        ("exports/_chat.txt", "WhatsApp chat"),
    ],
)
def test_the_chat_is_named_after_the_file_or_its_folder(path: str, chat: str) -> None:
    result = extract_whatsapp(b"12/03/2024, 14:05 - Raj: hi\n", PurePath(path))
    assert result.drafts[0].metadata["conversation"] == chat


def test_an_impossible_date_is_one_problem_and_the_rest_is_read() -> None:
    text = "31/02/2024, 10:00 - Sam: no such day\n01/04/2024, 10:01 - Sam: fine\n"
    result = extract_whatsapp(text.encode(), PurePath("WhatsApp Chat with Sam.txt"))
    assert result.problems == ["line 1: no such date or time (day is out of range for month)"]
    assert [d.content for d in result.drafts] == ["Sam: fine"]


def test_an_unknown_date_format_is_one_clear_error() -> None:
    with pytest.raises(ExtractError, match="not a WhatsApp chat export"):
        extract_whatsapp("2024年3月12日 14:05 - Raj: hi\n".encode(), PurePath("x.txt"))


def test_appending_messages_keeps_the_earlier_windows() -> None:
    lines = [f"12/03/2024, 10:{m:02} - Raj: message number {m}" for m in range(40)]
    before = extract_whatsapp("\n".join(lines).encode(), PurePath("c.txt")).drafts
    lines.append("12/03/2024, 10:59 - Raj: one more")
    after = extract_whatsapp("\n".join(lines).encode(), PurePath("c.txt")).drafts
    assert [d.content for d in after[: len(before) - 1]] == [d.content for d in before[:-1]]


def test_a_message_that_only_mentions_a_notice_is_kept() -> None:
    text = (
        "12/03/2024, 10:00 - Raj: what's the security code for the gate?\n"
        "12/03/2024, 10:01 - Maya: I created group chats for both teams\n"
        "12/03/2024, 10:02 - Maya: This message was deleted\n"
    )
    [(_, content)] = read(text)
    assert content == (
        "Raj: what's the security code for the gate?\nMaya: I created group chats for both teams"
    )

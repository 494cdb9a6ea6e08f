"""The WhatsApp reader over the line shapes of the common phones and locales."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, whatsapp
from engine.extractors.filenames import WHATSAPP_EXPORT_NAMES
from engine.extractors.whatsapp import extract_whatsapp
from engine.index.runs import reindex
from engine.people.directory import build_directory
from engine.settings import Settings
from engine.store import db
from engine.store import people as store

FIXTURES = Path(__file__).parent / "fixtures"

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
    assert result.problems == ["line 1: no such date or time ('31/02/2024, 10:00')"]
    assert [d.content for d in result.drafts] == ["Sam: fine"]


def test_an_unknown_date_shape_is_one_error_quoting_its_first_line() -> None:
    text = f"\n{LRM}Tuesday 12 March 2024 14:05 - Raj: hi\nTuesday 12 March 2024 14:06 - Maya: yo\n"
    with pytest.raises(ExtractError) as raised:
        extract_whatsapp(text.encode(), PurePath("WhatsApp Chat with Raj.txt"))
    assert str(raised.value) == (
        "not a WhatsApp chat export: no line starts with a date and time in a shape WhatsApp "
        "writes (such as '12/03/2024, 14:05 - '); the first line reads "
        "'Tuesday 12 March 2024 14:05 - Raj: hi'"
    )


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


RLM, NBSP = "\u200f", "\u00a0"


@pytest.mark.parametrize(
    ("line", "when"),
    [
        # digits of other scripts, direction marks between the fields, the Arabic comma
        (f"[٢٧{RLM}/٣{RLM}/٢٠٢٢، ٩:٤١:٣٥{NNBSP}م] Raj: hi", "2022-03-27T21:41:35"),  # iOS ar
        (f"٢٧{RLM}/٣{RLM}/٢٠٢٢، ١٢:٠٥ ص - Raj: hi", "2022-03-27T00:05:00"),  # Android ar
        ("۲۰۲۲/۳/۲۷, ۱۴:۵۶ - Raj: hi", "2022-03-27T14:56:00"),  # Persian digits, Gregorian
        ("[۱۴۰۱/۱/۷، ۲:۵۶:۰۱ ب.ظ] Raj: hi", "2022-03-27T14:56:01"),  # Solar Hijri (iOS fa)
        ("[۱۴۰۱/۱۲/۲۹، ۹:۰۰:۰۰ ق.ظ] Raj: hi", "2023-03-20T09:00:00"),  # the year's last day
        ("२७/३/२२, २:५६ अपराह्न - Raj: hi", "2022-03-27T14:56:00"),  # Devanagari
        ("২৭/৩/২২, ৯:০৫ PM - Raj: hi", "2022-03-27T21:05:00"),  # Bengali
        (f"\u202b[18/03/2022,{NBSP}14:56:01]\u202c Raj: hi", "2022-03-18T14:56:01"),  # embedding
        (f"\u2067[18/03/2022, 14:56:01]\u2069{RLM} Raj: hi", "2022-03-18T14:56:01"),  # isolates
        # calendars
        ("[18/3/2565 14:56:01] Raj: hi", "2022-03-18T14:56:01"),  # Thai, Buddhist era
        ("[16/2/2565 BE, 14:56:01] Raj: hi", "2022-02-16T14:56:01"),  # the era named (iOS)
        ("16/2/2565 BE 14:56 - Raj: hi", "2022-02-16T14:56:00"),
        ("16/2/65 B.E., 2:56 PM - Raj: hi", "2022-02-16T14:56:00"),
        ("[16/2/2565 พ.ศ. 14:56:01] Raj: hi", "2022-02-16T14:56:01"),
        ("R4/03/18 14:56 - Raj: hi", "2022-03-18T14:56:00"),  # Japanese era, Reiwa 4
        ("H31/4/30 9:00 - Raj: hi", "2019-04-30T09:00:00"),  # Heisei 31
        ("令和4年3月18日 14:56 - Raj: hi", "2022-03-18T14:56:00"),
        ("令和元年5月1日 10:00 - Raj: hi", "2019-05-01T10:00:00"),  # the era's first year
        ("2022年3月18日 14:56 - Raj: hi", "2022-03-18T14:56:00"),
        # the time first
        ("[14:56:01, 3/18/22] Raj: hi", "2022-03-18T14:56:01"),
        ("14:56, 18/03/2022 - Raj: hi", "2022-03-18T14:56:00"),
        # 12-hour clocks: counted from 0, and the marks of other locales, before or after
        ("3/18/22, 0:24 PM - Raj: hi", "2022-03-18T12:24:00"),
        ("3/18/22, 0:24 AM - Raj: hi", "2022-03-18T00:24:00"),
        ("18.03.22, 2:56 nachm. - Raj: hi", "2022-03-18T14:56:00"),
        ("18.03.22, 9:56 vorm. - Raj: hi", "2022-03-18T09:56:00"),
        (f"18/3/22, 2:56{NNBSP}p.{NBSP}m. - Raj: hi", "2022-03-18T14:56:00"),  # Spanish
        ("18/3/22, 2:56 μ.μ. - Raj: hi", "2022-03-18T14:56:00"),  # Greek
        ("2022. 3. 18. 오후 2:56 - Raj: hi", "2022-03-18T14:56:00"),  # Korean
        ("[2022/03/18 午後2:56:01] Raj: hi", "2022-03-18T14:56:01"),  # Japanese
        ("2022/3/18 上午9:05 - Raj: hi", "2022-03-18T09:05:00"),  # Chinese
        ("18/03/2022 2:56 ÖS - Raj: hi", "2022-03-18T14:56:00"),  # Turkish
        # the separators of other locales
        ("18.03.2022 14.56 - Raj: hi", "2022-03-18T14:56:00"),  # Danish, Finnish clock
        ("2022-03-18 14:56 - Raj: hi", "2022-03-18T14:56:00"),  # Swedish
    ],
)
def test_the_shapes_of_other_locales(line: str, when: str) -> None:
    assert read(line + "\n") == [(when, "Raj: hi")]


def test_the_text_keeps_its_own_digits_and_loses_only_the_marks() -> None:
    [(_, content)] = read(f"[٢٧{RLM}/٣{RLM}/٢٠٢٢، ٩:٤١:٣٥ م] سارة: البوابة رقم ٣{LRM}\n")
    assert content == "سارة: البوابة رقم ٣"


def test_two_digit_buddhist_years_are_read_when_the_common_era_would_be_the_future() -> None:
    thai = "18/3/65 14:56 - A: first\n19/3/65 09:00 - A: second\n"
    assert [d for d, _ in read(thai)] == ["2022-03-18T14:56:00", "2022-03-19T09:00:00"]
    assert read("18/3/24 14:56 - A: hi\n")[0][0] == "2024-03-18T14:56:00"


def test_day_and_month_are_ordered_by_the_file_running_in_time() -> None:
    """No field above 12 anywhere: the order under which the messages run forward wins."""
    us = "3/4/22, 10:00 AM - A: one\n3/5/22, 10:00 AM - A: two\n4/1/22, 10:00 AM - A: three\n"
    assert [d[:10] for d, _ in read(us)] == ["2022-03-04", "2022-03-05", "2022-04-01"]
    uk = "3/4/22, 10:00 - A: one\n4/4/22, 10:00 - A: two\n1/5/22, 10:00 - A: three\n"
    assert sorted(d[:10] for d, _ in read(uk)) == ["2022-04-03", "2022-04-04", "2022-05-01"]


def test_twelve_hour_lines_counted_from_zero_are_all_read() -> None:
    lines = [f"3/18/22, 0:{m:02} PM - Tom: message {m}" for m in range(10)]
    result = extract_whatsapp("\n".join(lines).encode(), PurePath("WhatsApp Chat with Tom.txt"))
    assert not result.problems
    assert result.drafts[0].metadata["messages"] == 10
    assert result.drafts[0].metadata["first"] == "2022-03-18T12:00:00"


def test_a_date_of_the_islamic_calendar_is_a_problem_in_words() -> None:
    text = "[١٤٤٣/٨/٢٤، ٩:٤١:٣٥ م] Raj: hi\n[27/3/2022, 9:42:00 PM] Raj: read\n"
    result = extract_whatsapp(text.encode(), PurePath("WhatsApp Chat with Raj.txt"))
    assert result.problems == [
        "line 1: the Islamic (Hijri) calendar is not read ('١٤٤٣/٨/٢٤، ٩:٤١:٣٥ م')"
    ]
    assert [d.content for d in result.drafts] == ["Raj: read"]


@pytest.mark.parametrize(
    ("name", "chat"),
    [
        ("Chat WhatsApp s uživatelem Petr Novák.txt", "Petr Novák"),
        ("Чат WhatsApp с контактом Анна Иванова.txt", "Анна Иванова"),
        ("WhatsApp-chat met Sanne de Vries.txt", "Sanne de Vries"),
        ("Conversa do WhatsApp com Ana Souza.txt", "Ana Souza"),
        ("Chat de WhatsApp con Lucía.txt", "Lucía"),
        ("Discussion WhatsApp avec Élodie.txt", "Élodie"),
        ("Chat WhatsApp con Luca.txt", "Luca"),
        ("WhatsApp-chatt med Erik.txt", "Erik"),
        ("WhatsApp-chat med Sofie.txt", "Sofie"),
        ("Czat WhatsApp z Kasia.txt", "Kasia"),
        ("Ayşe ile WhatsApp Sohbeti.txt", "Ayşe"),
        ("دردشة WhatsApp مع سارة.txt", "سارة"),
        ("گفتگوی WhatsApp با مریم.txt", "مریم"),
        ("Rahul के साथ WhatsApp चैट.txt", "Rahul"),
        ("Chat WhatsApp dengan Budi.txt", "Budi"),
        ("健太とのWhatsAppトーク.txt", "健太"),
        ("与王芳的WhatsApp聊天.txt", "王芳"),
        ("WhatsApp Chat with Raj Patel (1).txt", "Raj Patel"),  # a second download
        (f"WhatsApp Chat with {LRM}Raj{LRM}.txt", "Raj"),
    ],
)
def test_the_chat_is_named_from_the_file_name_in_any_language(name: str, chat: str) -> None:
    result = extract_whatsapp(b"12/03/2024, 14:05 - Raj: hi\n", PurePath("Downloads") / name)
    assert result.drafts[0].metadata["conversation"] == chat
    assert whatsapp.recognise(name, b"Tuesday 12 March - Raj: hi\n", lambda _: False)


def test_the_file_name_table_holds_twenty_languages() -> None:
    languages = {n.language.split(" (")[0] for n in WHATSAPP_EXPORT_NAMES}
    assert len(languages) >= 20
    assert all(n.shape.count("{name}") == 1 for n in WHATSAPP_EXPORT_NAMES)


@pytest.mark.parametrize(
    ("path", "chat"),
    [
        ("Downloads/WhatsApp Chat - Climbing Crew.zip!/_chat.txt", "Climbing Crew"),
        ("Downloads/Чат WhatsApp с контактом Анна.zip!/_chat.txt", "Анна"),
        ("Downloads/WhatsApp Chat with Raj.zip!/WhatsApp Chat with Raj.txt", "Raj"),
        ("Downloads/Book club.ZIP!/_chat.txt", "Book club"),  # the archive as the user named it
    ],
)
def test_a_zipped_chat_is_named_without_its_archive(path: str, chat: str) -> None:
    text = "[3/18/24, 9:06:40 PM] Dana: Who's in?\n"
    result = extract_whatsapp(text.encode(), PurePath(path))
    assert [d.title for d in result.drafts] == [f"{chat} · 2024-03-18"]


def test_a_zipped_chat_is_titled_by_its_name_in_the_index_and_the_people_directory(
    tmp_path: Path, settings_factory: Callable[..., Settings]
) -> None:
    home = tmp_path / "home"
    (home / "Downloads").mkdir(parents=True)
    chat = (FIXTURES / "whatsapp" / "WhatsApp Chat - Harbour Walk" / "_chat.txt").read_bytes()
    with zipfile.ZipFile(home / "Downloads" / "WhatsApp Chat - Harbour Walk.zip", "w") as archive:
        archive.writestr("_chat.txt", chat)
    settings = settings_factory(home, embedder__name="hashing")
    stats = reindex(settings=settings)
    assert not stats.errors, stats.errors
    conn = db.connect(settings.db_path, create=False)
    try:
        titles = {r[0] for r in conn.execute("SELECT title FROM chunks")}
        people = build_directory(list(store.all_mentions(conn)), [], settings)
    finally:
        conn.close()
    assert titles == {"Harbour Walk · 2022-03-18", "Harbour Walk · 2022-03-19"}
    nora = next(p for p in people if p.name == "Nora Quinn")
    assert [c.title for c in nora.conversations] == ["WhatsApp Chat - Harbour Walk"]


def test_the_docs_list_every_file_name_of_the_table_and_which_were_seen() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    rows = {
        cells[2].strip("` "): cells[3].strip() == "seen"
        for cells in (line.split("|") for line in docs.splitlines())
        if len(cells) == 5 and "NAME" in cells[2]
    }
    table = {n.shape.replace("{name}", "NAME"): n.checked for n in WHATSAPP_EXPORT_NAMES}
    assert {shape: rows.get(shape) for shape in table} == table

"""Text of any encoding and line ending: the one decoder every reader uses, and the subtitle,
plain-text and note fixtures saved in legacy encodings, with CR-only lines and short timings."""

from __future__ import annotations

import sys
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Extraction
from engine.extractors.documents import extract_document
from engine.extractors.documents import recognise as recognise_document
from engine.extractors.encodings import decode
from engine.extractors.markdown import extract_markdown
from engine.extractors.sniffing import HEAD_BYTES, no_siblings
from engine.extractors.subtitles import cue_turns, extract_subtitles
from engine.extractors.subtitles import recognise as recognise_subtitles
from engine.sources import SOURCE_TYPES

FIXTURES = Path(__file__).parent / "fixtures"
# What UTF-8 or cp1251 text looks like when read in the wrong encoding.
MOJIBAKE = ("Ã", "Â", "Ð", "Ñ", "â€", "\ufffd")

# Real sentences of each language, saved in the legacy encoding its Windows or East Asian
# tools write; long enough to say what they are, as a subtitle or a note is.
LEGACY_TEXTS = [
    (
        "cp1252",
        "Bonjour à tous, voilà le début de la réunion. Nous avons reçu les résultats de "
        "l'enquête et la majorité des participants sont satisfaits. Il faudra néanmoins "
        "améliorer l'accueil à l'entrée du bâtiment.",
    ),
    ("cp1252", "¿Qué tal? Mañana vamos a la playa con Iñigo y su niño pequeño.\n"),
    ("cp1252", "It’s the “final” draft – please don’t forward it… Thanks!\n"),
    ("cp1251", "Мы приехали в Казань рано утром. Погода была холодной, но солнечной.\n"),
    ("gb2312", "我们明天在会议室见面。\n好的，谢谢！请把报告发给我。\n"),
    ("shift_jis", "買い物リスト\n\n明日は東京駅で友達と会う予定です。\n"),
    ("big5", "我們明天在會議室見面。謝謝你的幫忙，這次旅行非常愉快，天氣也很好。\n"),
    ("cp949", "안녕하세요. 오늘 회의는 세 시에 시작합니다.\n"),
    (
        "cp1250",
        "Zażółć gęślą jaźń. Dzień dobry, jak się masz? Jutro spotkanie zostanie "
        "przeniesione na czwartek, ponieważ biuro będzie zamknięte.",
    ),
    ("cp1253", "Καλημέρα σας, τι κάνετε σήμερα;\n"),
    (
        "cp1254",
        "Günaydın, bugün nasılsınız? Yarınki toplantı perşembeye ertelendi çünkü ofis "
        "kapalı olacak. Daha sonra size tüm görevlerin listesini göndereceğim.",
    ),
    ("cp1255", "שלום, מה שלומך היום? הפגישה של מחר נדחתה ליום חמישי כי המשרד יהיה סגור.\n"),
    (
        "cp1256",
        "مرحبا، كيف حالك اليوم؟ تم تأجيل اجتماع الغد إلى يوم الخميس لأن المكتب سيكون مغلقا.\n",
    ),
    ("cp874", "สวัสดีครับ วันนี้อากาศดีมาก การประชุมพรุ่งนี้เลื่อนไปเป็นวันพฤหัสบดีเพราะสำนักงานปิด\n"),
]


@pytest.mark.parametrize(("encoding", "text"), LEGACY_TEXTS, ids=[e for e, _ in LEGACY_TEXTS])
def test_legacy_encodings_are_read_as_written(encoding: str, text: str) -> None:
    assert decode(text.encode(encoding)) == text


def test_utf8_is_read_without_the_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "charset_normalizer", None)  # importing it would fail
    assert decode("\ufeffcafé 会議\n".encode()) == "café 会議\n"
    with pytest.raises(ImportError):
        decode("café".encode("cp1252"))


def test_utf8_with_a_stray_cp1252_byte_keeps_both() -> None:
    data = "Résumé of the café meeting, naïve approach.\n".encode() * 3 + b"It\x92s fine\n"
    assert decode(data).endswith("naïve approach.\nIt’s fine\n")


def test_line_endings_of_every_system_are_one_break() -> None:
    assert decode(b"one\r\ntwo\rthree\nfour\r") == "one\ntwo\nthree\nfour\n"
    assert decode("one\r\ntwo".encode("utf-16")) == "one\ntwo"


def test_a_head_cut_inside_a_character_drops_it() -> None:
    assert decode("日本語".encode()[:-1], head=True) == "日本"
    assert decode("Записки".encode("cp1251") * 600, head=True).startswith("Записки")


def test_binary_content_is_an_error() -> None:
    with pytest.raises(ExtractError, match="binary"):
        decode(b"text\x00\x01\x02")


def _clean(text: str) -> bool:
    return not any(mark in text for mark in MOJIBAKE)


def test_a_gb2312_subtitle_is_searchable_in_chinese() -> None:
    name = "产品周会 2024-03-18 10-00-00.srt"
    data = (FIXTURES / "meeting" / name).read_bytes()
    result = extract_subtitles(data, PurePath(name))
    content = result.drafts[0].content
    assert "用户调研" in content and "星期五" in content and _clean(content)
    assert recognise_subtitles(name, data[:HEAD_BYTES], no_siblings)


def test_a_cp1252_subtitle_keeps_its_accents_and_ligatures() -> None:
    name = "Réunion de chantier 2024-03-19 09-00-00.srt"
    data = (FIXTURES / "meeting" / name).read_bytes()
    content = extract_subtitles(data, PurePath(name)).drafts[0].content
    assert "Les œuvres de la façade" in content and "c’est" in content and _clean(content)


def test_a_subtitle_with_old_mac_line_endings_is_read_whole() -> None:
    name = "kingfisher-interview-mac.srt"
    data = (FIXTURES / "meeting" / name).read_bytes()
    assert b"\n" not in data
    result = extract_subtitles(data, PurePath(name))
    assert not result.problems
    assert "Dana Okafor: Then we move the hide" in result.drafts[0].content
    assert recognise_subtitles(name, data[:HEAD_BYTES], no_siblings)


def test_srt_timings_without_milliseconds_or_with_a_dot_are_read() -> None:
    name = "2024_03_20 09_30 Standup.srt"
    data = (FIXTURES / "meeting" / name).read_bytes()
    result = Extraction()
    turns = cue_turns(decode(data), result)
    assert [t.when for t in turns] == ["t:00:00:01", "t:00:00:05", "t:00:01:02"]
    assert not result.problems
    assert recognise_subtitles(name, data[:HEAD_BYTES], no_siblings)


def test_a_cp1251_text_note_is_claimed_and_read() -> None:
    name = "Заметки о поездке в Казань.txt"
    data = (FIXTURES / "document" / name).read_bytes()
    assert recognise_document(name, data[:HEAD_BYTES], no_siblings)
    content = "\n".join(d.content for d in extract_document(data, PurePath(name)).drafts)
    assert "мечеть Кул-Шариф" in content and _clean(content)


def test_a_shift_jis_markdown_note_is_read() -> None:
    name = "2024-03-23 京都旅行メモ.md"
    data = (FIXTURES / "note" / name).read_bytes()
    note = next(t for t in SOURCE_TYPES if t.name == "note")
    drafts = extract_markdown(note, data, PurePath(name)).drafts
    assert [d.title for d in drafts] == [
        "京都旅行メモ",
        "京都旅行メモ › 行った場所",
        "京都旅行メモ › 次回",
    ]
    assert "清水寺" in drafts[1].content and _clean(drafts[1].content)

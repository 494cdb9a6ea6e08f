"""What the keyword index holds for a text in each language (engine/language), word by word."""

from __future__ import annotations

import apsw
import pytest

from engine.language import analyze, detect, irregular, syncope
from engine.language.codes import CANDIDATES, STEMMERS, has_cjk, normalised
from engine.store.sql.schema import TOKENIZER

# (language, text, words the index holds for it)
STEMMED = [
    ("de", "Die Rechnungen und Fahrräder", ["die", "rechnung", "und", "fahrrad"]),
    ("no", "Jeg kjøpte billettene", ["jeg", "kjøpt", "billett"]),
    ("sv", "Har du bokat biljetterna", ["har", "du", "bok", "biljet"]),
    ("ru", "Мы купили билеты", ["мы", "куп", "билет"]),
    ("es", "Compré los billetes", ["compr", "los", "billet"]),
    ("fr", "J'ai réservé la table", ["j", "ai", "réserv", "la", "tabl"]),
    ("nl", "De veerboten vertrekken", ["de", "veerboot", "vertrek"]),
]


@pytest.mark.parametrize(("language", "text", "words"), STEMMED)
def test_a_language_with_a_stemmer_is_indexed_by_its_stems(
    language: str, text: str, words: list[str]
) -> None:
    assert analyze.search_text(text, language) == " ".join(words)


def test_the_inflections_people_type_meet_the_written_form() -> None:
    pairs = [
        ("de", "Rechnungen", "Rechnung"),
        ("no", "billettene", "billett"),
        ("sv", "biljetterna", "biljett"),
        ("nl", "veerboten", "veerboot"),
        ("ru", "билеты", "билет"),
        ("es", "comprar", "Compré"),
        ("fr", "réserver", "réservé"),
    ]
    for language, typed, written in pairs:
        assert analyze.query_words(typed, language) == analyze.query_words(written, language)


def test_nordic_definite_forms_meet_their_bare_word() -> None:
    pairs = [
        ("no", "flyet", "fly"),
        ("no", "skiene", "ski"),
        ("no", "møtet", "møte"),
        ("sv", "hyran", "hyra"),
        ("sv", "kontraktet", "kontrakt"),
        ("sv", "lösenordet", "lösenord"),
        ("sv", "nyckeln", "nyckel"),
        ("sv", "cykeln", "cykel"),
    ]
    for language, definite, bare in pairs:
        assert analyze.query_words(definite, language) == analyze.query_words(bare, language)
    # An ending that is part of the word stays: "station", "biljett".
    assert analyze.query_words("station", "sv") == analyze.query_words("stationen", "sv")
    assert analyze.query_words("biljett", "sv") == ["biljet"]


def test_a_nordic_nouns_dropped_vowel_meets_its_other_stem() -> None:
    # Each pair: the base form and an inflection that drops its last "e" (and a doubled
    # consonant), which Snowball stems apart; each one's variants hold the other's stem.
    pairs = [
        ("sv", "nyckel", "nycklarna"),
        ("sv", "fönster", "fönstren"),
        ("sv", "vinter", "vintrar"),
        ("no", "nøkkel", "nøklene"),
        ("no", "sykkel", "sykler"),
        ("da", "cykel", "cykler"),
    ]
    for language, base, inflected in pairs:
        base_stem = " ".join(analyze.query_words(base, language))
        other_stem = " ".join(analyze.query_words(inflected, language))
        assert base_stem != other_stem  # what the variants are for
        assert other_stem in syncope.variants(base, base_stem, language), (base, inflected)
        assert base_stem in syncope.variants(inflected, other_stem, language), (inflected, base)


def test_only_nordic_words_of_that_shape_get_variants() -> None:
    assert syncope.variants("Regel", "regel", "de") == []  # not a syncopating language
    assert syncope.variants("barn", "barn", "sv") == []  # no unstressed -el/-er/-en
    assert syncope.variants("bok", "bok", "no") == []  # too short
    assert syncope.variants("vinter", "vint", "sv") == ["vintr"]  # never the stem itself


def test_a_plural_that_changes_the_noun_meets_its_singular() -> None:
    pairs = [
        ("nl", "kind", "kinderen"),
        ("nl", "ei", "eieren"),
        ("no", "bok", "bøkene"),
        ("no", "mann", "menn"),
        ("sv", "hand", "händerna"),
        ("sv", "bok", "böcker"),
        ("da", "fod", "fødder"),
    ]
    for language, singular, plural in pairs:
        one = " ".join(analyze.query_words(singular, language))
        other = " ".join(analyze.query_words(plural, language))
        assert one != other  # Snowball stems them apart: what the list is for
        assert other in irregular.variants(one, language), (singular, plural)
        assert one in irregular.variants(other, language), (plural, singular)


def test_only_listed_nouns_get_other_stems() -> None:
    assert irregular.variants("boek", "nl") == []  # a regular plural: "boeken" stems to it
    assert irregular.variants("kind", "de") == []  # no list for the language
    assert irregular.variants("bok", "nn") == irregular.variants("bok", "no")  # Nynorsk


def test_english_is_left_to_fts5s_porter_and_needs_no_search_text() -> None:
    assert analyze.search_text("See you at the meetings", "en") is None
    assert analyze.search_text("Nothing to stem", "ja") is None  # no stemmer, no CJK


def test_han_kana_and_hangul_are_indexed_as_characters_and_pairs() -> None:
    assert analyze.search_text("去北京", "zh") == "去 去北 北 北京 京"
    assert analyze.search_text("부산에서", "ko") == "부 부산 산 산에 에 에서 서"
    assert analyze.search_text("京都に", "ja") == "京 京都 都 都に に"
    # In an English chunk too, beside its words as written.
    assert analyze.search_text("Meeting in 北京", "en") == "meeting in 北 北京 京"


def test_a_query_run_is_searched_by_its_pairs_and_a_lone_character_by_itself() -> None:
    assert analyze.query_words("北京开会", "zh") == ["北京", "京开", "开会"]
    assert analyze.query_words("北", "zh") == ["北"]
    assert analyze.query_words("부산", "ko") == ["부산"]


def test_each_word_stands_for_the_bytes_it_came_from() -> None:
    text = "Noël à 北京!"
    data = text.encode()
    found = analyze.spans(text, "fr")
    assert [data[s:e].decode() for s, e, _ in found] == ["Noël", "à", "北", "北京", "京"]


SAMPLES = [
    (lang, text)
    for lang, text, _ in STEMMED
    + [
        ("zh", "我们明天去北京开会，讨论预算。", []),
        ("ja", "新幹線の切符を予約しました。ラーメン！", []),
        ("ko", "주말에 한강 공원에서 자전거 타자", []),
        ("el", "Τα εισιτήρια για την Αθήνα", []),
        ("tr", "Biletleri dün aldım", []),
        ("fi", "Ostin junaliput eilen", []),
        ("pl", "Kupiłem bilety na pociąg", []),
        ("de", "E-Mail an Jürgen: 10:30 Uhr, ﬁnal", []),
    ]
]


@pytest.mark.parametrize(("language", "text"), SAMPLES)
def test_every_search_text_word_is_one_fts5_token(language: str, text: str) -> None:
    """The search text goes through FTS5's own tokenizer unchanged in count and order: a
    word never splits or vanishes there, so positions and lengths are the analyzer's."""
    conn = apsw.Connection(":memory:")
    tokenize = conn.fts5_tokenizer(TOKENIZER[0], list(TOKENIZER[1]))
    written = analyze.search_text(text, language) or text
    words = [w for _, _, w in analyze.spans(text, language)] if written != text else None
    tokens = tokenize(written.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False)
    if words is not None:
        assert len(tokens) == len(words)
        for word in words:
            one = tokenize(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False)
            assert len(one) == 1, word


def test_every_stemmer_named_exists() -> None:
    for code in STEMMERS:
        assert analyze.stemmer(code) is not None
    assert analyze.stemmer("en") is None and analyze.stemmer("zh") is None


def test_codes_are_read_as_memex_keeps_them() -> None:
    assert normalised("nb") == normalised("NN") == normalised("nb-NO") == "no"
    assert normalised("de_DE") == "de"
    assert "no" in CANDIDATES and "en" in CANDIDATES and "nn" not in CANDIDATES
    assert has_cjk("x北") and not has_cjk("Ærø")


WINDOWS = {
    "no": "God morgen! Har noen sett laderen min? Jeg har kjøpt billettene til Bergen",
    "sv": "Har du bokat biljetterna till Göteborg? Mormor fyller åttio på lördag",
    "de": "Die Rechnung für den Strom ist endlich bezahlt. Wer hat die Fahrräder?",
    "fr": "J'ai réservé une table pour samedi soir. Le train pour Lyon est annulé",
    "es": "Compré los billetes de avión ayer por la noche. La reunión es el jueves",
    "ru": "Мы купили билеты на поезд до Москвы. Завтра собрание в девять утра",
    "zh": "我们明天去北京开会讨论预算。请把合同发给我看看",
    "ja": "明日は京都に行きます。新幹線の切符を予約しました",
    "ko": "부산에서 만나요. 내일 회의가 있어요",
    "en": "See you at the meeting tomorrow, and bring the invoices with you",
}


def test_a_window_of_messages_is_told_its_language() -> None:
    detector = detect.Detector()
    for language, text in WINDOWS.items():
        assert detector.judge(text)[0] == language, text


def test_a_short_line_takes_its_files_language() -> None:
    detector = detect.Detector()
    found = detector.languages([WINDOWS["sv"], "ok", "haha ja", WINDOWS["sv"]])
    assert found == ["sv"] * 4
    assert detector.languages(["ok"]) == ["en"]  # nothing to go by: the default


def test_the_setting_limits_or_pins_the_languages() -> None:
    assert detect.Detector(["nb", "sv"]).judge(WINDOWS["de"])[0] in ("no", "sv")
    pinned = detect.Detector(["nb"])
    assert pinned.languages([WINDOWS["zh"], WINDOWS["en"]]) == ["no", "no"]
    assert detect.Detector(["sv", "en"]).languages(["ok"]) == ["sv"]  # the first is the default


def test_a_query_is_told_its_language_only_when_sure() -> None:
    present = ["en", "no", "sv", "de", "ru", "zh"]
    assert detect.query_language("紫色大象在月球上跳舞", present) == "zh"
    assert detect.query_language("Жёлтый слон танцует на крыше", ["en"]) == "ru"
    assert detect.query_language("부산", ["en"]) not in ("", "en")
    assert detect.query_language("billettene", present) == ""  # one word: any language
    assert detect.query_language("Der violette Elefant tanzt auf dem Mond", present) == "de"
    assert detect.query_language("Der violette Elefant tanzt auf dem Mond", ["en"]) == ""
    assert detect.query_language("what did we say about the budget", present) in ("", "en")

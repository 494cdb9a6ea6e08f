"""The as-written order of keyword hits (engine/search/retrieve/as_written.py), hit by hit."""

from __future__ import annotations

from engine.search.hits import ChunkRow
from engine.search.retrieve import as_written


def row(seq: int, content: str, title: str = "") -> ChunkRow:
    return ChunkRow(seq, f"c{seq}", "f", "notes", content, None, title, "", None)


def test_a_word_counts_whole_as_a_words_start_and_half_but_for_an_ending() -> None:
    words = sorted({"plantene", "réservé", "invited", "reservation"})
    assert as_written.word_share("plante", words) == 1.0
    assert as_written.word_share("réserver", words) == 0.5  # "réserv" + an ending
    assert as_written.word_share("invitado", words) == 0.0  # "invit" is a stem, not the word
    assert as_written.word_share("plan", words) == 1.0  # it begins "plantene"
    assert as_written.word_share("plat", words) == 0.0  # too short to lose an ending
    assert as_written.word_share("reserved", words) == 0.5  # "reserv…ation", accents count


def test_hits_holding_the_words_as_written_come_first_in_bm25s_order_otherwise() -> None:
    rows = {
        1: row(1, "We invited the neighbours; the invitation went out"),  # "invita…": half
        2: row(2, "Los invitados llegarán a las nueve"),
        3: row(3, "Ana invited Bo"),
        4: row(4, "Nada", title="Invitados de la boda"),  # the title counts too
    }
    assert as_written.reorder([1, 2, 3, 4], rows, ["invitado"]) == [2, 4, 1, 3]
    assert as_written.reorder([1, 2, 3, 4], rows, []) == [1, 2, 3, 4]  # English alone
    assert as_written.reorder([5, 3, 2], rows, ["invitado"]) == [2, 5, 3]  # no row: no share


def test_case_and_composition_do_not_matter_but_accents_do() -> None:
    decomposed = "Re\u0301serve\u0301 pour samedi"  # "Réservé" with combining accents
    assert as_written.held_share(row(1, decomposed), ["réserver"]) == 0.5
    assert as_written.held_share(row(1, "RESERVED"), ["réserver"]) == 0.0

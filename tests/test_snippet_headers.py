"""A snippet starts with the chunk's own text, never the header lines the extractors write
for the index ("Note: …", "Section: …"): the result's title says those."""

from __future__ import annotations

from engine.search.present.snippets import END, START, make_snippet

CONTENT = "Note: Pricing model\nSection: Current\n\nWe charge per seat, billed yearly.\n"


def marked(text: str, word: str) -> str:
    return text.replace(word, f"{START}{word}{END}")


def test_an_unmarked_snippet_starts_at_the_body() -> None:
    snippet, matched = make_snippet(CONTENT, None, 200)
    assert snippet == "We charge per seat, billed yearly." and matched == ()


def test_a_marked_snippet_leaves_the_headers_out() -> None:
    snippet, matched = make_snippet(CONTENT, marked(CONTENT, "seat"), 200)
    assert snippet == "We charge per **seat**, billed yearly." and matched == ("seat",)


def test_a_word_marked_only_in_a_header_gives_the_body() -> None:
    snippet, matched = make_snippet(CONTENT, marked(CONTENT, "Pricing"), 200)
    assert snippet == "We charge per seat, billed yearly." and matched == ()


def test_a_chunk_that_is_all_header_keeps_its_text() -> None:
    only = "Note: Pricing model\n"
    assert make_snippet(only, None, 200)[0] == "Note: Pricing model"

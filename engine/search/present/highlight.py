"""The query's terms marked in a chunk's text as FTS5's highlight() marks them, without FTS5.

`highlight(chunks_fts, 0, …) … WHERE chunks_fts MATCH ? AND rowid IN (…)` seeks every OR-ed
term's doclist for each result, a sizeable share of a warm search. The same marks come from
tokenizing the ten texts with the index's own tokenizer (through apsw, with byte offsets)
and following fts5_aux.c's rules:

- each term is a phrase (`fts.match_expression` quotes every term): its instances are the
  runs of consecutive tokens equal to the phrase's query tokens;
- instances that overlap are merged into one marked span, adjacent ones are not;
- the open mark goes before the span's first token, the close mark after its last, the
  text between tokens is kept as it is.

A chunk whose index words are not its own text's (a language with a stemmer, or Han, Kana
or Hangul: engine/language/analyze.py) is tokenized by the same analysis as its search
text, each word then through the index's tokenizer, and marked where its words stand in
the text; a pair of characters and the characters in it overlap, and their marks join.

A row with no instance in its content gets no entry, as a row FTS5's MATCH would not return
(or would return unmarked, matched by its title) makes the same snippet either way.
`tests/test_highlight.py` compares both over the demo index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import apsw

from engine.language.analyze import changes_text, spans
from engine.language.codes import ENGLISH
from engine.store.sql.schema import TOKENIZER

START, END = b"\x02", b"\x03"  # the marks `fts_sql.highlight_sql` asks FTS5 for


class Highlighter:
    """Marks terms in texts with the tokenizer of the index behind `conn`."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._tokenize = conn.fts5_tokenizer(TOKENIZER[0], list(TOKENIZER[1]))

    def phrases(self, terms: Sequence[str]) -> list[tuple[str, ...]]:
        """Each term's query tokens (a term with none matches nothing and is dropped)."""
        found = []
        for term in terms:
            tokens = self._tokens(term, apsw.FTS5_TOKENIZE_QUERY)
            if tokens:
                found.append(tuple(t for _, _, t in tokens))
        return found

    def marked(
        self,
        texts: Mapping[int, str],
        phrases: Sequence[tuple[str, ...]],
        languages: Mapping[int, str] | None = None,
    ) -> dict[int, str]:
        """key -> its text with every instance of the phrases marked, for the texts that
        hold one; `languages`: each text's language (English when not given)."""
        out = {}
        for key, text in texts.items():
            language = (languages or {}).get(key) or ENGLISH
            found = self.mark(text, phrases, language)
            if found is not None:
                out[key] = found
        return out

    def mark(
        self, text: str, phrases: Sequence[tuple[str, ...]], language: str = ENGLISH
    ) -> str | None:
        """The text with every instance of the phrases marked, or None when it holds none."""
        data = text.encode("utf-8", errors="replace")  # a lone surrogate: "?"
        if changes_text(text, language):
            tokens = self._analyzed(text, language)
        else:
            tokens = self._tokens_of(data)
        found = merged(instances([t for _, _, t in tokens], phrases))
        byte_spans = merged([(tokens[first][0], tokens[last][1]) for first, last in found])
        if not byte_spans:
            return None
        pieces, at = [], 0
        for start, end in byte_spans:
            pieces += [data[at:start], START, data[start:end], END]
            at = end
        pieces.append(data[at:])
        return b"".join(pieces).decode("utf-8", errors="replace")

    def _analyzed(self, text: str, language: str) -> list[tuple[int, int, str]]:
        """(start byte, end byte, token) of each index word of the text in its language, as
        FTS5 tokenizes the word (a word it makes no token of is left out)."""
        out = []
        for start, end, word in spans(text, language):
            tokens = self._tokens(word, apsw.FTS5_TOKENIZE_AUX)
            if tokens:
                out.append((start, end, tokens[0][2]))
        return out

    def _tokens(self, text: str, reason: int) -> list[tuple[int, int, str]]:
        return self._tokens_of(text.encode("utf-8", errors="replace"), reason)

    def _tokens_of(
        self, data: bytes, reason: int = apsw.FTS5_TOKENIZE_AUX
    ) -> list[tuple[int, int, str]]:
        """(start byte, end byte, token) of each token, as FTS5 re-tokenizes for highlight()."""
        found: list[tuple[int, int, str]] = self._tokenize(
            data, reason, None, include_offsets=True, include_colocated=False
        )
        return found


def instances(tokens: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> list[tuple[int, int]]:
    """(first, last) token positions of every instance of every phrase, by first position."""
    firsts = {phrase[0] for phrase in phrases}
    where: dict[str, list[int]] = {}
    for position, token in enumerate(tokens):
        if token in firsts:
            where.setdefault(token, []).append(position)
    found = []
    for phrase in phrases:
        size = len(phrase)
        for position in where.get(phrase[0], ()):
            if size == 1 or tuple(tokens[position : position + size]) == phrase:
                found.append((position, position + size - 1))
    found.sort()
    return found


def merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans joined (fts5CInstIterNext); adjacent ones stay apart. Over byte
    ranges (end exclusive), ranges that touch join too: only the characters and pairs of
    a run of Han, Kana or Hangul ever touch, and one mark reads better there."""
    out: list[tuple[int, int]] = []
    for first, last in spans:
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out

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

A row with no instance in its content gets no entry, as a row FTS5's MATCH would not return
(or would return unmarked, matched by its title) makes the same snippet either way.
`tests/test_highlight.py` compares both over the demo index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import apsw

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
        self, texts: Mapping[int, str], phrases: Sequence[tuple[str, ...]]
    ) -> dict[int, str]:
        """key -> its text with every instance of the phrases marked, for the texts that
        hold one."""
        out = {}
        for key, text in texts.items():
            found = self.mark(text, phrases)
            if found is not None:
                out[key] = found
        return out

    def mark(self, text: str, phrases: Sequence[tuple[str, ...]]) -> str | None:
        """The text with every instance of the phrases marked, or None when it holds none."""
        data = text.encode("utf-8", errors="replace")  # a lone surrogate: "?"
        tokens = self._tokens_of(data)
        spans = merged(instances([t for _, _, t in tokens], phrases))
        if not spans:
            return None
        pieces, at = [], 0
        for first, last in spans:
            start, end = tokens[first][0], tokens[last][1]
            pieces += [data[at:start], START, data[start:end], END]
            at = end
        pieces.append(data[at:])
        return b"".join(pieces).decode("utf-8", errors="replace")

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
    """Overlapping spans joined (fts5CInstIterNext); adjacent ones stay apart."""
    out: list[tuple[int, int]] = []
    for first, last in spans:
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out

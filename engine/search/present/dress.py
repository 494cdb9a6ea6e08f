"""Dressing the ranked candidates as results: their rows, snippets, highlights, profiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from engine.people import profile_text
from engine.records import Person, SearchResult
from engine.search.hits import PROFILE_PREFIX, ChunkRow, Hit
from engine.search.present.highlight import Highlighter
from engine.search.present.snippets import has_marks, make_snippet
from engine.search.retrieve import part_vectors
from engine.settings import Settings
from engine.sources import PROFILE_TYPE


@dataclass(frozen=True)
class Dressing:
    """How results are dressed: snippet width, whether to keep the explain notes, the
    people file a profile result points to, and what marks the query's terms (as FTS5's
    highlight() would, engine/search/present/highlight.py)."""

    snippet_chars: int
    explain: bool
    people_file: str
    highlighter: Highlighter

    @classmethod
    def of(cls, settings: Settings, conn: apsw.Connection) -> Dressing:
        """As the settings say, marking with the tokenizer of `conn`'s index."""
        snippet, people = settings.search.snippet_chars, str(settings.people_file)
        return cls(snippet, False, people, Highlighter(conn))


def results(
    conn: apsw.Connection,
    hits: Sequence[Hit],
    terms: list[str],
    qvec: np.ndarray | None,
    how: Dressing,
    people: Mapping[str, Person],
) -> list[SearchResult]:
    """The hits as results, in order: snippets centred on the marked terms, or on the
    part nearest the query when no term is marked."""
    rows = {h.row.seq: h.row for h in hits if h.row is not None}
    texts = {seq: row.content for seq, row in rows.items()}
    languages = {seq: str(row.meta().get("language") or "") for seq, row in rows.items()}
    phrases = how.highlighter.phrases(terms) if terms else []
    marked = how.highlighter.marked(texts, phrases, languages) if phrases else {}
    # The part nearest the query places a snippet only where no term is marked.
    unmarked = [seq for seq in rows if not has_marks(marked.get(seq))]
    focus = {} if qvec is None else part_vectors.best_spans(conn, unmarked, qvec, texts)
    out = []
    for h in hits:
        if h.row is None:
            out.append(profile_result(h, people[h.person or ""], how))
            continue
        seq = h.row.seq
        snippet, matched = make_snippet(
            h.row.content, marked.get(seq), how.snippet_chars, focus.get(seq)
        )
        out.append(chunk_result(h, h.row, snippet, matched, how))
    return out


def chunk_result(
    h: Hit, row: ChunkRow, snippet: str, matched: tuple[str, ...], how: Dressing
) -> SearchResult:
    """A chunk hit as a result, with its snippet and matched terms (and its language in
    the explain notes too)."""
    language = str(row.meta().get("language") or "")
    explain = h.explain() if how.explain else None
    if explain is not None and language:
        explain = {**explain, "language": language}
    return SearchResult(
        id=row.id,
        content=row.content,
        source_file=row.source_file,
        source_type=row.source_type,
        score=h.score,
        matched_terms=matched,
        content_date=row.content_date,
        title=row.title,
        snippet=snippet,
        location=row.location,
        profile=None,
        explain=explain,
        sections=h.sections,
        related=h.related,
        language=language,
    )


def profile_result(h: Hit, person: Person, how: Dressing) -> SearchResult:
    """A person's profile card as a result."""
    text = profile_text(person)
    return SearchResult(
        id=f"{PROFILE_PREFIX}{h.person}",
        content=text,
        source_file=how.people_file,
        source_type=PROFILE_TYPE,
        score=h.score,
        title=person.name,
        snippet=text[: how.snippet_chars],
        profile=person.as_dict(),
        explain=h.explain() if how.explain else None,
    )

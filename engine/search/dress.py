"""Dressing the ranked candidates as results: their rows, snippets, highlights, profiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import apsw
import numpy as np

from engine.people import profile_text
from engine.records import Person, SearchResult
from engine.search import part_vectors, stages
from engine.search.highlight import Highlighter
from engine.search.snippets import make_snippet
from engine.settings import Settings
from engine.store.sql import chunks

ROW_NAMES = (
    "seq",
    "id",
    "source_file",
    "source_type",
    "content",
    "content_date",
    "title",
    "location",
    "metadata",
)


@dataclass(frozen=True)
class Dressing:
    """How results are dressed: snippet width, whether to keep the explain notes, the
    people file a profile result points to, and what marks the query's terms (as FTS5's
    highlight() would, engine/search/highlight.py)."""

    snippet_chars: int
    explain: bool
    people_file: str
    highlighter: Highlighter

    @classmethod
    def of(cls, settings: Settings, conn: apsw.Connection) -> Dressing:
        """As the settings say, marking with the tokenizer of `conn`'s index."""
        snippet, people = settings.search.snippet_chars, str(settings.people_file)
        return cls(snippet, False, people, Highlighter(conn))


def chunk_rows(conn: apsw.Connection, keys: Sequence[str]) -> dict[int, dict[str, Any]]:
    """seq -> what a result shows, for the candidate keys that are chunks."""
    seqs = [int(k) for k in keys if k.isdigit()]
    if not seqs:
        return {}
    cursor = conn.execute(chunks.rows_by_seq_sql(len(seqs)), seqs)
    return {row[0]: dict(zip(ROW_NAMES, row, strict=True)) for row in cursor}


def located(
    candidates: list[stages.Candidate], rows: dict[int, dict[str, Any]]
) -> list[stages.Candidate]:
    """The candidates whose rows this snapshot holds, with their type, file and date (a
    vector hit from a cache a commit ahead may be missing here: it is dropped)."""
    return [
        replace(
            c,
            source_type=rows[int(c.key)]["source_type"],
            source_file=rows[int(c.key)]["source_file"],
            content_date=rows[int(c.key)]["content_date"],
        )
        for c in candidates
        if int(c.key) in rows
    ]


def results(
    conn: apsw.Connection,
    candidates: Sequence[stages.Candidate],
    rows: Mapping[int, Mapping[str, Any]],
    terms: list[str],
    qvec: np.ndarray | None,
    how: Dressing,
    people: Mapping[str, Person],
) -> list[SearchResult]:
    """The candidates as results, in order: snippets centred on the marked terms, or on the
    part nearest the query when no term is marked."""
    seqs = [int(c.key) for c in candidates if c.key.isdigit()]
    texts = {seq: rows[seq]["content"] for seq in seqs}
    marked = how.highlighter.marked(texts, how.highlighter.phrases(terms)) if terms else {}
    focus = {} if qvec is None else part_vectors.best_spans(conn, seqs, qvec, rows)
    out = []
    for c in candidates:
        if c.key.startswith("profile:"):
            out.append(profile_result(c, people[c.key.split(":", 1)[1]], how))
            continue
        row = rows[int(c.key)]
        snippet, matched = make_snippet(
            row["content"], marked.get(row["seq"]), how.snippet_chars, focus.get(row["seq"])
        )
        out.append(chunk_result(c, row, snippet, matched, how))
    return out


def chunk_result(
    c: stages.Candidate,
    row: Mapping[str, Any],
    snippet: str,
    matched: tuple[str, ...],
    how: Dressing,
) -> SearchResult:
    """A chunk candidate as a result, with its snippet and matched terms."""
    return SearchResult(
        id=row["id"],
        content=row["content"],
        source_file=row["source_file"],
        source_type=row["source_type"],
        score=c.score,
        matched_terms=matched,
        content_date=row["content_date"],
        title=row["title"],
        snippet=snippet,
        location=row["location"],
        profile=None,
        explain=dict(c.explain) if how.explain else None,
        sections=c.sections,
        related=c.related,
    )


def profile_result(c: stages.Candidate, person: Person, how: Dressing) -> SearchResult:
    """A person's profile card as a result."""
    text = profile_text(person)
    return SearchResult(
        id=c.key,
        content=text,
        source_file=how.people_file,
        source_type="profile",
        score=c.score,
        title=person.name,
        snippet=text[: how.snippet_chars],
        profile=person.as_dict(),
        explain=dict(c.explain) if how.explain else None,
    )

"""Postings in numpy arrays: the FTS5 index's terms, rows and weighted frequencies, read
from the index itself, for BM25 in memory (engine/search/retrieve/keyword_index.py).

The terms are the FTS5 index's own: the bulk is read through fts5vocab (every term
instance, in index order, as one string of numbers per batch of terms: 11.4 M instances of
100k chunks in ~2 s), and rows added later are tokenized by the index's tokenizer through
apsw (`engine.store.sql.schema.TOKENIZER`). A row's frequency of a term is Σ over the
columns of the column's BM25 weight × the term's hits there, as FTS5's bm25() counts it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt

from engine.store.sql import fts as fts_sql

IntArray = npt.NDArray[np.int64]
RowArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float32]
BATCH_INSTANCES = 4_000_000  # term instances parsed at a time (~130 MB of temporaries)
Tokenize = Callable[[str, int], list[str]]


class PostingsError(Exception):
    """The index changed or disagreed while it was read; the caller reads it again later."""


class Vocabulary:
    """Term ⇄ id. The terms read with the index are sorted (ids in that order) and found by
    bisection, so they may lie in a mapped file undecoded (engine/store/mapped.py `Strings`);
    terms met later get the next ids, a dict and a sorted list of their own, so a prefix
    finds both."""

    def __init__(self, terms: Sequence[str] = ()) -> None:
        self.base = terms  # sorted
        self._later: dict[str, int] = {}
        self._later_sorted: list[str] = []

    def __len__(self) -> int:
        return len(self.base) + len(self._later)

    def find(self, term: str) -> int | None:
        """The term's id, or None when no row holds it."""
        found = self._later.get(term)
        if found is not None:
            return found
        i = bisect.bisect_left(self.base, term)
        return i if i < len(self.base) and self.base[i] == term else None

    def term(self, id: int) -> str:
        """The term of an id."""
        if id < len(self.base):
            return self.base[id]
        return next(t for t, i in self._later.items() if i == id)

    def id(self, term: str) -> int:
        """The term's id, given one if it is new."""
        found = self.find(term)
        if found is None:
            found = self._later[term] = len(self)
            bisect.insort(self._later_sorted, term)
        return found

    def prefixed(self, prefix: str) -> list[int]:
        """The ids of every term that starts with `prefix`."""
        start = bisect.bisect_left(self.base, prefix)
        end = bisect.bisect_left(self.base, prefix + "\U0010ffff", start)
        found = list(range(start, end))
        start = bisect.bisect_left(self._later_sorted, prefix)
        end = bisect.bisect_left(self._later_sorted, prefix + "\U0010ffff", start)
        return found + [self._later[t] for t in self._later_sorted[start:end]]


@dataclass(frozen=True)
class Segment:
    """Postings sorted by term then row: `terms[i]`'s rows are `rows[offsets[i]:offsets[i + 1]]`."""

    terms: IntArray
    offsets: IntArray
    rows: RowArray
    freqs: FloatArray

    @classmethod
    def of(cls, terms: IntArray, rows: IntArray, freqs: npt.NDArray[np.floating]) -> Segment:
        """From (term, row, frequency) triplets in any order; a repeated pair adds up."""
        order = np.lexsort((rows, terms))
        terms, rows, freqs = terms[order], rows[order], freqs[order]
        return cls.sorted_of(terms, rows, freqs)

    @classmethod
    def sorted_of(cls, terms: IntArray, rows: IntArray, freqs: npt.NDArray[np.floating]) -> Segment:
        """From triplets sorted by (term, row); a repeated pair adds up."""
        if not terms.shape[0]:
            return cls.empty()
        new = np.ones(terms.shape[0], dtype=bool)
        new[1:] = (terms[1:] != terms[:-1]) | (rows[1:] != rows[:-1])
        starts = np.flatnonzero(new)
        freqs = np.add.reduceat(np.asarray(freqs, dtype=np.float32), starts)
        terms, rows = terms[starts], rows[starts]
        first = np.ones(terms.shape[0], dtype=bool)
        first[1:] = terms[1:] != terms[:-1]
        heads = np.flatnonzero(first)
        offsets = np.append(heads, terms.shape[0]).astype(np.int64)
        return cls(terms[heads].astype(np.int64), offsets, rows.astype(np.int32), freqs)

    @classmethod
    def empty(cls) -> Segment:
        return cls(
            np.zeros(0, np.int64),
            np.zeros(1, np.int64),
            np.zeros(0, np.int32),
            np.zeros(0, np.float32),
        )

    @classmethod
    def merged(cls, segments: Iterable[Segment]) -> Segment:
        """One segment holding every posting of these (rows are never in two of them)."""
        parts = [s.triplets() for s in segments]
        return cls.of(*(np.concatenate([p[i] for p in parts]) for i in range(3)))

    @classmethod
    def chained(cls, segments: Sequence[Segment]) -> Segment:
        """One segment of these, which hold ascending, disjoint ranges of terms."""
        if not segments:
            return cls.empty()
        shifts = np.cumsum([0] + [s.rows.shape[0] for s in segments[:-1]])
        offsets = [s.offsets[:-1] + shift for s, shift in zip(segments, shifts, strict=True)]
        return cls(
            np.concatenate([s.terms for s in segments]),
            np.append(np.concatenate(offsets), sum(s.rows.shape[0] for s in segments)),
            np.concatenate([s.rows for s in segments]),
            np.concatenate([s.freqs for s in segments]),
        )

    def triplets(self) -> tuple[IntArray, IntArray, FloatArray]:
        counts = np.diff(self.offsets)
        return np.repeat(self.terms, counts), self.rows.astype(np.int64), self.freqs

    def postings(self, term: int) -> tuple[RowArray, FloatArray] | None:
        """The rows holding `term` and its frequency in each, or None."""
        i = int(np.searchsorted(self.terms, term))
        if i == self.terms.shape[0] or self.terms[i] != term:
            return None
        start, end = self.offsets[i], self.offsets[i + 1]
        return self.rows[start:end], self.freqs[start:end]

    @property
    def nbytes(self) -> int:
        return int(self.terms.nbytes + self.offsets.nbytes + self.rows.nbytes + self.freqs.nbytes)


@dataclass(frozen=True)
class Loaded:
    """What `read_index` read: the vocabulary, its postings, every row's length in tokens."""

    vocabulary: Vocabulary
    segment: Segment
    lengths: IntArray


def read_index(conn: apsw.Connection, row_of: RowArray, rows: int) -> Loaded:
    """The whole FTS index as postings over rows (`row_of[seq]`: a chunk's row; `rows`: how
    many). Run inside a read transaction, with `row_of` read in it."""
    for statement in fts_sql.create_vocab_sql():
        conn.execute(statement)
    listed = conn.execute(fts_sql.vocab_terms_sql()).fetchall()
    vocabulary = Vocabulary([t for t, _ in listed])
    counts = np.fromiter((c for _, c in listed), dtype=np.int64, count=len(listed))
    lengths = np.zeros(rows, dtype=np.int64)
    parts: list[Segment] = []
    weights = np.asarray(fts_sql.COLUMN_WEIGHTS[:2], dtype=np.float32)
    for first, last in _batches(counts):
        text = conn.execute(
            fts_sql.vocab_instances_sql(), (listed[first][0], listed[last - 1][0])
        ).fetchone()[0]
        codes = np.fromstring(text or "", dtype=np.int64, sep=" ")
        if codes.shape[0] != int(counts[first:last].sum()):
            raise PostingsError("the FTS index changed while it was read")
        docs = codes >> 1
        if docs.shape[0] and (docs.max() >= row_of.shape[0] or (row_of[docs] < 0).any()):
            raise PostingsError("the FTS index holds rows the chunks table does not")
        row = row_of[docs].astype(np.int64)
        lengths += np.bincount(row, minlength=rows)
        terms = np.repeat(np.arange(first, last, dtype=np.int64), counts[first:last])
        parts.append(Segment.sorted_of(terms, row, weights[codes & 1]))
    return Loaded(vocabulary, Segment.chained(parts), lengths)


def _batches(counts: IntArray) -> list[tuple[int, int]]:
    """Consecutive term ranges [first, last) of about `BATCH_INSTANCES` instances each."""
    batches, first, total = [], 0, 0
    for i, count in enumerate(counts.tolist()):
        total += count
        if total >= BATCH_INSTANCES:
            batches.append((first, i + 1))
            first, total = i + 1, 0
    if first < counts.shape[0]:
        batches.append((first, int(counts.shape[0])))
    return batches


def tokenizer(conn: apsw.Connection, name: str, args: Sequence[str]) -> Tokenize:
    """text, FTS5 reason flags -> the index's tokens for it (no offsets, no synonyms)."""
    tokenize = conn.fts5_tokenizer(name, list(args))

    def tokens(text: str, reason: int) -> list[str]:
        found = tokenize(
            text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False
        )
        return [str(t) for t in found]

    return tokens


def segment_of_texts(
    texts: Iterable[tuple[int, Sequence[str | None]]],
    vocabulary: Vocabulary,
    tokenize: Tokenize,
    lengths: IntArray,
) -> Segment:
    """The postings of rows tokenized here: (row, its columns' texts) each; each row's
    token count is written into `lengths`."""
    terms: list[int] = []
    rows: list[int] = []
    freqs: list[float] = []
    for row, columns in texts:
        for text, weight in zip(columns, fts_sql.COLUMN_WEIGHTS, strict=False):
            if not text:
                continue
            found = tokenize(text, apsw.FTS5_TOKENIZE_DOCUMENT)
            lengths[row] += len(found)
            terms += [vocabulary.id(t) for t in found]
            rows += [row] * len(found)
            freqs += [weight] * len(found)
    return Segment.of(
        np.asarray(terms, dtype=np.int64),
        np.asarray(rows, dtype=np.int64),
        np.asarray(freqs, dtype=np.float32),
    )

"""The keyword side of warm searches: FTS5's BM25, computed in memory over its own postings.

FTS5 scores every row that matches any of the OR-ed terms, and chat words in 30–45 % of
chunks ("yeah", "get", "oh") make a query read and score tens of thousands of rows inside
SQLite. The same scoring over numpy arrays is a few gathers and adds per term, the work
done in C (docs/benchmarks.md: the warm bm25 row beside FTS5 alone).

The postings are the FTS index's own (engine/search/retrieve/postings.py: its terms, its tokenizer,
its column weights), and the score is FTS5's bm25() to the last operation (k1 1.2, b 0.75,
the IDF clamped at 1e-6, a row's length over every column), so a warm search ranks as a
one-shot one does, and SQLite stays the source of truth: nothing is written beside it.

Like the vector cache (engine/search/retrieve/vector_cache.py), one index per engine is shared by
its Searchers on its own read connection, behind a lock, and follows the index through an
`IndexMirror` (engine/search/retrieve/mirror.py): `PRAGMA data_version` is checked before each
query; when it moved, the `(seq, id)` pairs of the chunks are compared with those held,
rows gone or replaced are marked dead (they no longer count, nor score) and new rows are
tokenized into a small segment. Past `RELOAD_SHARE` of changed rows the postings are read
anew; on a disagreement they are dropped until the next commit (FTS5 answers meanwhile).

Postings read in full are written to `memex.db.keyword` beside the index (engine/store/mapped.py:
the rows' columns, the sorted vocabulary as one blob, the segment, the chunks' ids) and
mapped from there, by this process at once and by the next one in place of the read: the
mirror takes the file up when it was written under the same keyword side and tokenizer,
and applies the changes since as it applies any (engine/search/retrieve/mirror.py).

A term the query gives as a phrase of several tokens (`INV-2026-0417`) is not held here
(no positions): its rows and frequencies come from FTS5 itself, a phrase query, in the
same snapshot. A prefix (the last word while typing) is every term it begins.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import apsw
import numpy as np
import numpy.typing as npt

from engine.records import Person
from engine.search.query import fts
from engine.search.query.filters import Filters, chunk_filter_sql, columns_mask
from engine.search.retrieve import bm25, keyword_share
from engine.search.retrieve.bm25 import K1, B
from engine.search.retrieve.mirror import (
    IndexMirror,
    Memo,
    Mirrored,
    Pairs,
    SeqArray,
    chunk_pairs,
    pairs_of,
    people_key,
)
from engine.search.retrieve.postings import (
    IntArray,
    PostingsError,
    RowArray,
    Segment,
    Vocabulary,
    read_index,
    segment_of_texts,
    tokenizer,
)
from engine.settings import Settings
from engine.store import db, mapped
from engine.store.sql import chunks, database
from engine.store.sql import fts as fts_sql
from engine.store.sql import meta as meta_sql
from engine.store.sql.schema import TOKENIZER

RELOAD_SHARE = 0.25  # rows changed since the last read, beyond which the postings are read anew
MAX_SEGMENTS = 8  # segments of new rows kept apart before they are merged into one
PEOPLE_MEMO = 16  # person-filter row sets remembered until the index changes
MASK_MEMO = 16  # filters' row masks remembered until the index changes
READ_BATCH = 2048  # new rows read per statement
SAVED_FORMAT = 1  # the layout of the postings' file; another one is not taken up
SUFFIX = ".keyword"  # the postings' file: memex.db → memex.db.keyword
BoolArray = npt.NDArray[np.bool_]
Postings = bm25.Postings


@dataclass(frozen=True)
class KeywordHits:
    """One query's keyword side: the k best rows and what every row holds of the query."""

    top: dict[int, int]  # seq -> the terms it holds (bit i: terms[i]), best first
    frequencies: list[int]  # per term: the chunks holding it
    total: int  # the highest seq (the keyword share's document count)
    _found: list[Postings] = field(repr=False)  # each term's live postings
    _row_of: RowArray = field(repr=False)

    def held(self, seqs: Sequence[int]) -> dict[int, int]:
        """seq -> the terms it holds, for any chunk (0 for one this index does not hold;
        a row added after this query holds nothing of it: rows are only appended)."""
        limit = self._row_of.shape[0]
        rows = np.array([self._row_of[s] if 0 <= s < limit else -1 for s in seqs], np.int64)
        bits = bm25.held_bits(self._found, rows)
        return {s: int(b) if r >= 0 else 0 for s, r, b in zip(seqs, rows, bits, strict=True)}

    def weights(self) -> list[float]:
        """The terms' weights (engine/search/retrieve/keyword_share.py `term_weights`)."""
        return [keyword_share.weight(self.total, f) for f in self.frequencies]


class _Rows:
    """Per row of the postings: seq, id, source type, day, length in tokens, alive."""

    def __init__(self, listed: Sequence[tuple[int, str, str, str | None]]) -> None:
        self.type_codes: dict[str, int] = {}
        self.seqs = np.zeros(0, dtype=np.int64)
        self.types = np.zeros(0, dtype=np.int16)
        self.days = np.zeros(0, dtype=np.int32)
        self.lengths = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.row_of = np.full(1, -1, dtype=np.int32)
        self.dead = 0  # rows marked dead since the postings were read
        self._norm: npt.NDArray[np.float64] | None = None
        self._max_seq: int | None = None
        self.append(listed)

    @classmethod
    def of_arrays(cls, arrays: mapped.Arrays, type_codes: dict[str, int]) -> _Rows:
        """The rows kept in the postings' file (every row alive when it was written)."""
        rows = cls([])
        rows.type_codes = dict(type_codes)
        rows.seqs, rows.types, rows.days = arrays["seqs"], arrays["types"], arrays["days"]
        rows.lengths, rows.row_of = arrays["lengths"], arrays["row_of"]
        rows.alive = np.ones(rows.seqs.shape[0], dtype=bool)
        return rows

    def arrays(self) -> mapped.Arrays:
        """What the postings' file keeps of the rows."""
        return {
            "seqs": self.seqs,
            "types": self.types,
            "days": self.days,
            "lengths": self.lengths,
            "row_of": self.row_of,
        }

    def __len__(self) -> int:
        return int(self.seqs.shape[0]) - self.dead

    def append(self, listed: Sequence[tuple[int, str, str, str | None]]) -> None:
        if not listed:
            return
        first, count = self.seqs.shape[0], len(listed)
        seqs = np.fromiter((r[0] for r in listed), dtype=np.int64, count=count)
        self.seqs = np.concatenate([self.seqs, seqs])
        codes = (self.type_codes.setdefault(r[2], len(self.type_codes)) for r in listed)
        types = np.fromiter(codes, dtype=np.int16, count=count)
        self.types = np.concatenate([self.types, types])
        days = np.fromiter((db.day_number(r[3]) for r in listed), dtype=np.int32, count=count)
        self.days = np.concatenate([self.days, days])
        self.lengths = np.concatenate([self.lengths, np.zeros(count, dtype=np.int64)])
        self.alive = np.concatenate([self.alive, np.ones(count, dtype=bool)])
        top = int(seqs.max())
        if top >= self.row_of.shape[0]:
            grown = np.full(max(top + 1, self.row_of.shape[0] * 2), -1, dtype=np.int32)
            grown[: self.row_of.shape[0]] = self.row_of
            self.row_of = grown
        self.row_of[seqs] = np.arange(first, first + count, dtype=np.int32)
        self._norm = self._max_seq = None

    def kill(self, rows: IntArray) -> None:
        self.alive[rows] = False
        self.row_of[self.seqs[rows]] = -1
        self.dead += int(rows.shape[0])
        self._norm = self._max_seq = None

    @property
    def max_seq(self) -> int:
        """The highest live seq."""
        if self._max_seq is None:
            live = self.seqs[self.alive]
            self._max_seq = int(live.max()) if live.shape[0] else 0
        return self._max_seq

    @property
    def norm(self) -> npt.NDArray[np.float64]:
        """k1 × (1 − b + b × length / average length), per row, as FTS5 computes it."""
        norm = self._norm
        if norm is None:
            live = max(1, len(self))
            average = float(self.lengths[self.alive].sum()) / live
            norm = self._norm = (K1 * (1 - B + B * self.lengths / max(average, 1e-9))).astype(
                np.float64
            )
        return norm


class KeywordIndex(Mirrored):
    """BM25 over the FTS index's postings, held in memory and kept in step with it."""

    def __init__(self, path: Path | str, keep_file: bool = True) -> None:
        """`keep_file`: keep the postings in `memex.db.keyword` beside the index and take
        them up from there (False: read the index each time, write nothing)."""
        self.path = Path(path)
        self.saved_path = Path(str(self.path) + SUFFIX) if keep_file else None
        self.conn = db.connect(self.path, create=False)
        self._tokenize = tokenizer(self.conn, TOKENIZER[0], TOKENIZER[1])
        self._lock = threading.Lock()
        self.mirror = IndexMirror(chunk_pairs, keyword_side, reload_share=RELOAD_SHARE)
        self._rows: _Rows | None = None
        self._vocabulary = Vocabulary()
        self._segments: list[Segment] = []
        self._people: Memo[tuple[str, ...], BoolArray] = self.mirror.memo(PEOPLE_MEMO)
        self._masks: Memo[Filters, BoolArray] = self.mirror.memo(MASK_MEMO)

    @classmethod
    def of(cls, settings: Settings) -> KeywordIndex:
        return cls(settings.db_path)

    def __len__(self) -> int:
        """How many chunks the postings hold."""
        return 0 if self._rows is None else len(self._rows)

    @property
    def nbytes(self) -> int:
        """The postings' size in memory (the vocabulary's strings not counted)."""
        return sum(s.nbytes for s in self._segments)

    def close(self) -> None:
        """Close the index's connection once no search is using it."""
        with self._lock:
            self.conn.close()

    # -- freshness --------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Bring the postings in line with the index if it changed; True when they did."""
        with self._lock, db.read_snapshot(self.conn):
            return self._refresh()

    def _refresh(self) -> bool:
        # Inside the caller's read transaction: the version read first pins its snapshot.
        try:
            return self.mirror.follow(self.conn, self)
        except (PostingsError, apsw.Error):
            self._rows, self._segments = None, []
            return False

    def load(self) -> Pairs:
        """The postings read anew (the mirror's `Follower`, inside its snapshot)."""
        self._rows = None
        listed = self.conn.execute(chunks.keyword_rows_sql()).fetchall()
        rows = _Rows(listed)
        loaded = read_index(self.conn, rows.row_of, rows.seqs.shape[0])
        rows.lengths = loaded.lengths
        self._rows, self._vocabulary, self._segments = rows, loaded.vocabulary, [loaded.segment]
        # The pages just read (past the mmap'd head of the file) no query reads again.
        self.conn.execute(database.shrink_memory_sql())
        pairs = pairs_of([(r[0], r[1]) for r in listed])
        return self._keep(pairs) or pairs

    def _keep(self, pairs: Pairs) -> Pairs | None:
        """Write the postings just read into their file and map them from there (the
        arrays read are let go); None when there is no file to keep or it cannot be written."""
        rows, segment, key = self._rows, self._segments[0], keyword_side(self.conn)
        if self.saved_path is None or rows is None:
            return None
        terms, term_offsets = mapped.strings_array(self._vocabulary.base)
        ids, id_offsets = mapped.strings_array(pairs[1])
        arrays: mapped.Arrays = {
            **rows.arrays(),
            "terms": terms,
            "term_offsets": term_offsets,
            "segment_terms": segment.terms,
            "segment_offsets": segment.offsets,
            "segment_rows": segment.rows,
            "segment_freqs": segment.freqs,
            "ids": ids,
            "id_offsets": id_offsets,
        }
        fields = {**self._match(key), "type_codes": rows.type_codes}
        if not mapped.write(self.saved_path, fields, arrays):
            return None
        return self.saved(key)

    def _match(self, key: str | None) -> dict[str, object]:
        """What the postings' file must have been written under to be taken up."""
        return {"format": SAVED_FORMAT, "key": key, "tokenizer": [TOKENIZER[0], *TOKENIZER[1]]}

    def saved(self, key: str | None) -> Pairs | None:
        """The postings taken up from their file if it was written under `key` (the
        mirror's `Follower`); the chunks it holds."""
        found = mapped.read_if(self.saved_path, self._match(key))
        type_codes = None if found is None else found[0].get("type_codes")
        if found is None or not isinstance(type_codes, dict):
            return None
        arrays = found[1]
        try:
            rows = _Rows.of_arrays(arrays, type_codes)
            terms = mapped.Strings(arrays["terms"], arrays["term_offsets"])
            segment = Segment(
                arrays["segment_terms"],
                arrays["segment_offsets"],
                arrays["segment_rows"],
                arrays["segment_freqs"],
            )
            ids = mapped.Strings(arrays["ids"], arrays["id_offsets"]).all()
        except (KeyError, UnicodeDecodeError):
            return None
        if not _consistent(rows, segment, len(terms), len(ids)):
            return None
        self._rows, self._vocabulary, self._segments = rows, Vocabulary(terms), [segment]
        return rows.seqs, ids

    def apply(self, gone: SeqArray, new: list[int]) -> Pairs:
        """Mark the rows of the chunks `gone` dead, tokenize the chunks `new`."""
        rows = self._rows
        assert rows is not None
        rows.kill(rows.row_of[gone].astype(np.int64))
        return self._add(rows, new)

    def _add(self, rows: _Rows, seqs: list[int]) -> Pairs:
        """Tokenize these chunks into a segment of their own (merged once there are many);
        the chunks added."""
        if not seqs:
            return pairs_of([])
        listed = []
        for start in range(0, len(seqs), READ_BATCH):
            batch = seqs[start : start + READ_BATCH]
            listed += self.conn.execute(chunks.keyword_rows_by_seq_sql(len(batch)), batch)
        first = rows.seqs.shape[0]
        rows.append([r[:4] for r in listed])
        texts = ((first + i, (r[4], r[5])) for i, r in enumerate(listed))
        self._segments.append(
            segment_of_texts(texts, self._vocabulary, self._tokenize, rows.lengths)
        )
        if len(self._segments) > MAX_SEGMENTS:
            self._segments = [self._segments[0], Segment.merged(self._segments[1:])]
        return pairs_of([(r[0], r[1]) for r in listed])

    # -- search -----------------------------------------------------------------------------

    def search(
        self,
        terms: Sequence[str],
        k: int,
        filters: Filters | None = None,
        prefix: bool = False,
        require_all: bool = False,
    ) -> KeywordHits | None:
        """The k best BM25 rows for these terms (OR-ed, or AND-ed with `require_all`; the
        last a prefix with `prefix`), as `fts.bm25_sql` ranks them; None when the postings
        cannot be read (the caller asks FTS5)."""
        with self._lock, db.read_snapshot(self.conn):
            self._refresh()
            rows = self._rows
            if rows is None:
                return None
            last = len(terms) - 1
            found = [
                self._postings(t, prefix and i == last and len(t) >= 2) for i, t in enumerate(terms)
            ]
            keep = None if filters is None or filters.empty else self._mask(rows, filters)
            if rows.dead:  # rows gone since the postings were read neither count nor score
                found = [(w[rows.alive[w]], f[rows.alive[w]]) for w, f in found]
            best = bm25.top_rows(found, len(rows), rows.norm, rows.seqs, k, keep, require_all)
            held = bm25.held_bits(found, best)
            top = {int(rows.seqs[r]): int(h) for r, h in zip(best, held, strict=True)}
            frequencies = [int(w.shape[0]) for w, _ in found]
            return KeywordHits(top, frequencies, rows.max_seq, found, rows.row_of)

    def _postings(self, term: str, prefix: bool) -> Postings:
        """The live rows holding the term (every term it begins, with `prefix`) and its
        weighted frequency in each."""
        reason = apsw.FTS5_TOKENIZE_QUERY | (apsw.FTS5_TOKENIZE_PREFIX if prefix else 0)
        tokens = self._tokenize(term, reason)
        if len(tokens) > 1:
            return self._phrase(term, prefix)
        if not tokens:
            ids = []
        elif prefix:
            ids = self._vocabulary.prefixed(tokens[0])
        else:
            found_id = self._vocabulary.find(tokens[0])
            ids = [] if found_id is None else [found_id]
        found = [p for s in self._segments for i in ids if (p := s.postings(i)) is not None]
        if not found:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        if len(found) == 1:
            return found[0]
        row_list = np.concatenate([r for r, _ in found])
        freq_list = np.concatenate([f for _, f in found])
        if len(ids) == 1:  # one term: its segments hold disjoint rows
            return row_list, freq_list
        unique, where = np.unique(row_list, return_inverse=True)
        summed = np.bincount(where, weights=freq_list).astype(np.float32)
        return unique.astype(np.int32), summed

    def _phrase(self, term: str, prefix: bool) -> Postings:
        """A phrase of several tokens, from FTS5 in this snapshot (no positions are held)."""
        rows = self._rows
        assert rows is not None
        expression = fts.match_expression([term], prefix_last=prefix)
        listed = self.conn.execute(fts_sql.phrase_postings_sql(), (expression,)).fetchall()
        seqs = np.fromiter((r[0] for r in listed), dtype=np.int64, count=len(listed))
        freqs = np.fromiter((r[1] for r in listed), dtype=np.float32, count=len(listed))
        inside = seqs < rows.row_of.shape[0]
        found = np.where(inside, rows.row_of[np.where(inside, seqs, 0)], -1)
        known = found >= 0
        order = np.argsort(found[known], kind="stable")  # postings are in row order
        return found[known][order].astype(np.int32), freqs[known][order]

    def _mask(self, rows: _Rows, filters: Filters) -> BoolArray:
        """The rows that pass the filters, kept until the index changes (typing with a
        filter set builds it once: a source filter's took 7.1 ms over 1M rows)."""

        def passing() -> BoolArray:
            keep = columns_mask(filters, rows.types, rows.type_codes, rows.days)
            if filters.people:
                keep &= self._people_rows(rows, filters.people)
            return keep

        return self._masks.get(filters, passing)

    def _people_rows(self, rows: _Rows, people: tuple[Person, ...]) -> BoolArray:
        """The rows naming these people, through the FTS index (engine/search/query/filters.py
        `people_match_expression`), kept until the index changes."""

        def naming() -> BoolArray:
            where, params = chunk_filter_sql(Filters(people=people), people_index=True)
            named = np.zeros(rows.seqs.shape[0], dtype=bool)
            seqs = [r[0] for r in self.conn.execute(chunks.seqs_where_sql(where), params)]
            found = rows.row_of[[s for s in seqs if s < rows.row_of.shape[0]]]
            named[found[found >= 0]] = True
            return named

        return self._people.get(people_key(people), naming)


def _consistent(rows: _Rows, segment: Segment, terms: int, ids: int) -> bool:
    """Whether a postings' file's arrays fit together (their sizes, not every value: a file
    only Memex writes, whole, is checked for being whole and of this layout)."""
    count = rows.seqs.shape[0]
    columns = (rows.types, rows.days, rows.lengths)
    postings = segment.rows.shape[0]
    return (
        ids == count
        and all(c.shape == (count,) for c in columns)
        and segment.offsets.shape == (segment.terms.shape[0] + 1,)
        and segment.freqs.shape == (postings,)
        and int(segment.offsets[-1]) == postings
        and segment.terms.shape[0] <= terms
    )


def keyword_side(conn: apsw.Connection) -> str | None:
    """When the keyword side was last rebuilt (engine/index/keyword_format.py): the same
    chunks then hold other terms, so the postings are read anew."""
    return db.get_meta(conn, meta_sql.KEYWORD_BUILT_KEY)

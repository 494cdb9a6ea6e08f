"""Following the index: what an in-memory copy of it holds, and what changed since.

The vector cache's matrix (engine/search/retrieve/vector_cache.py) and the keyword index's postings
(engine/search/retrieve/keyword_index.py) are copies of the index, each on its own read connection,
that must answer as the index does after every commit of the writer. `IndexMirror` is the
part of them that follows it; each copy is a `Follower` that knows how to read all of its
rows (`load`) or drop and add some (`apply`).

- `PRAGMA data_version` (per connection; it moves when another connection commits) is the
  cheap check made before each query: while it stays, nothing is read.
- When it moved, the `(seq, id)` pairs of the chunks the copy mirrors (a scan of the
  covering index on `chunks.id`, no content or vector read) are compared with the pairs it
  holds: a chunk whose pair is gone, or whose seq now carries another id (SQLite reuses
  the highest rowid after a delete: an edited file's last chunk comes back under the same
  seq), is dropped; a pair not held is read. A change of the key (the active embedder: a
  swap gives every chunk another vector), a copy holding nothing, or more changes since
  the last full read than `reload_share` of the chunks held, read everything anew.
- A copy may keep its state in a file beside the index (engine/store/mapped.py), written
  after it read the index in full. Where the copy would read everything, it maps that file
  instead (`saved`) when the file was written under the same key, and then catches up from
  the pairs it kept like any other change; when more than `SAVED_SHARE` of its chunks
  changed since, it reads the index in full after all (and so writes the file anew).
- The memos (a filter's masks, a person's chunks) are valid for one index state: every
  `Memo` made here is cleared whenever the version moves, even when no pair changed (an
  UPDATE of a chunk's text keeps its id, not its people).

The version is read before the rows, always. Inside a read transaction (the keyword index
searches inside one) that first statement pins the snapshot, so the version names exactly
the state the rows are read from, and a commit after it moves the version the next call
reads. Outside one (the vector cache's per-query check costs one statement), a commit
landing between the version and the rows is already in the rows while the held version is
older: the next call diffs once more and finds nothing to do. Either way no commit is
missed. Read after the rows outside a transaction, as a copy once did, a commit landing in
between would be in the version and not in the rows, and the copy would miss it until the
next commit. tests/test_mirror.py holds both cases.

A mirror is not locked: its copy calls it under the copy's own lock.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

import apsw
import numpy as np
import numpy.typing as npt

from engine.records import Person
from engine.store import db
from engine.store.sql import chunks, database

SeqArray = npt.NDArray[np.int64]
Pairs = tuple[SeqArray, list[str]]  # chunks' seqs and ids, in the same order
PairsReader = Callable[[apsw.Connection], dict[int, str]]
KeyReader = Callable[[apsw.Connection], str | None]
SAVED_SHARE = 0.05  # chunks changed since a copy's file was written, beyond which it is read anew
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Follower(Protocol):
    """An in-memory copy of the index, brought in line by an `IndexMirror` (both called
    inside one read snapshot, the one the pairs were read in)."""

    def load(self) -> Pairs:
        """Drop everything and read every row anew; the chunks now held."""
        ...

    def apply(self, gone: SeqArray, new: list[int]) -> Pairs:
        """Drop the rows of the chunks `gone` (held under ids the index no longer has at
        those seqs), then read the chunks `new`; the chunks added."""
        ...

    def saved(self, key: str | None) -> Pairs | None:
        """Take up the state kept in the copy's file if it was written under `key`; the
        chunks it holds, or None (no file, another key: the caller reads everything)."""
        ...

    def caught_up(self, pairs: Pairs, changed: bool) -> None:
        """Called once a copy taken up from its file has applied the changes since (none
        when not `changed`); `pairs`: the chunks it now holds."""
        ...


class Memo(Generic[K, V]):
    """Values worked out once per index state: computed when first asked for, all dropped
    when `size` are held (a new filter per keystroke cannot grow it), and all dropped when
    the index changes (`IndexMirror.memo`)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: dict[K, V] = {}

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The value kept for `key`, computed (and kept) if there is none."""
        if key not in self._values:
            value = compute()
            if len(self._values) >= self.size:
                self._values.clear()
            self._values[key] = value
        return self._values[key]

    def clear(self) -> None:
        self._values.clear()


def people_key(people: tuple[Person, ...]) -> tuple[str, ...]:
    """A person filter's memo key: what its chunks depend on, every name lower-cased."""
    return tuple(sorted(n.lower() for p in people for n in p.names))


def chunk_pairs(conn: apsw.Connection) -> dict[int, str]:
    """seq -> id of every chunk (the covering index on `id`, seq its rowid)."""
    return dict(conn.execute(chunks.seq_ids_sql()))


def embedded_pairs(conn: apsw.Connection) -> dict[int, str]:
    """seq -> id of every chunk with a vector (no vector is read)."""
    ids = chunk_pairs(conn)
    for (seq,) in conn.execute(chunks.unembedded_seqs_sql()):
        ids.pop(seq, None)
    return ids


def data_version(conn: apsw.Connection) -> int:
    """The connection's `PRAGMA data_version` (inside a read transaction: its snapshot's)."""
    return int(conn.execute(database.data_version_sql()).fetchone()[0])


class Mirrored:
    """An in-memory copy of the index that follows it through an `IndexMirror` (the
    keyword index and the vector cache): how often it read the index in full, and how often
    it caught up with a change."""

    mirror: IndexMirror

    def saved(self, key: str | None) -> Pairs | None:
        """No file kept: everything is read from the index."""
        return None

    def caught_up(self, pairs: Pairs, changed: bool) -> None:
        """Nothing to do once caught up."""

    @property
    def mapped(self) -> int:
        """Full states taken up from the copy's file rather than read from the index."""
        return self.mirror.mapped

    @property
    def loads(self) -> int:
        """Full reads so far."""
        return self.mirror.loads

    @property
    def updates(self) -> int:
        """Incremental refreshes that changed something."""
        return self.mirror.updates


class IndexMirror:
    """The index state an in-memory copy holds: the data version it was brought to, the
    `(seq, id)` pair of each chunk it holds, the key it was read under, and the memos that
    are valid for that state only."""

    def __init__(
        self,
        pairs: PairsReader = chunk_pairs,
        key: KeyReader | None = None,
        reload_share: float | None = None,
    ) -> None:
        """`pairs`: the chunks the copy mirrors; `key`: read in the snapshot, a change of
        it reloads (None: no key); `reload_share`: the changes since the last full read,
        as a share of the chunks held, beyond which everything is read anew (None: never)."""
        self._pairs, self._key, self._share = pairs, key, reload_share
        self.version: int | None = None  # the data version the held state was read at
        self._failed: int | None = None  # the data version the copy could not be read at
        self._held_key: str | None = None
        self._seqs: SeqArray = np.zeros(0, dtype=np.int64)
        self._ids: list[str] = []
        self._changed = 0  # chunks dropped or added since the last full read
        self._memos: list[Memo[Any, Any]] = []
        self.loads = 0  # full reads
        self.mapped = 0  # full states taken up from the copy's file
        self.updates = 0  # incremental catch-ups that changed something

    def __len__(self) -> int:
        """How many chunks the copy holds."""
        return int(self._seqs.shape[0])

    @property
    def held(self) -> dict[int, str]:
        """seq -> id of every chunk held (for tests and checks: built on each call)."""
        return dict(zip(self._seqs.tolist(), self._ids, strict=True))

    def memo(self, size: int) -> Memo[K, V]:
        """A memo of at most `size` values, cleared whenever the index changes."""
        made: Memo[K, V] = Memo(size)
        self._memos.append(made)
        return made

    def forget(self) -> None:
        """Hold nothing: the next call that sees the version move reads everything."""
        self._seqs, self._ids, self._held_key = np.zeros(0, dtype=np.int64), [], None
        self.version = None
        for memo in self._memos:
            memo.clear()

    def follow(self, conn: apsw.Connection, copy: Follower) -> bool:
        """Bring `copy` in line with the index if it changed; True when its rows did. If
        reading fails, the copy holds nothing, the error is raised, and nothing is tried
        again at that data version (the next commit tries again)."""
        version = data_version(conn)  # before the rows: see the module's docstring
        if version in (self.version, self._failed):
            return False
        for memo in self._memos:
            memo.clear()
        try:
            with db.read_snapshot(conn):
                changed = self._catch_up(conn, copy)
        except BaseException:
            self.forget()
            self._failed = version
            raise
        self.version, self._failed = version, None
        return changed

    def _catch_up(self, conn: apsw.Connection, copy: Follower) -> bool:
        key = None if self._key is None else self._key(conn)
        if not len(self) or key != self._held_key:
            return self._load(conn, copy, key)
        return self._apply_changes(conn, copy, self._share)

    def _apply_changes(self, conn: apsw.Connection, copy: Follower, share: float | None) -> bool:
        """Drop and add the chunks that changed since the held state; past `share` of the
        chunks held, read everything instead."""
        current = self._pairs(conn)
        same = np.fromiter(
            (current.get(s) == i for s, i in zip(self._seqs.tolist(), self._ids, strict=True)),
            dtype=bool,
            count=len(self),
        )
        held = set(self._seqs[same].tolist())
        new = sorted(seq for seq in current if seq not in held)
        gone = self._seqs[~same]
        if not gone.shape[0] and not new:
            return False
        changes = self._changed + int(gone.shape[0]) + len(new)
        if share is not None and changes > share * max(1, len(self)):
            return self._read(copy, self._held_key)
        added_seqs, added_ids = copy.apply(gone, new)
        self._seqs = np.concatenate([self._seqs[same], added_seqs]).astype(np.int64)
        self._ids = [i for i, keep in zip(self._ids, same.tolist(), strict=True) if keep]
        self._ids += added_ids
        self._changed += int(gone.shape[0]) + len(added_ids)
        self.updates += 1
        return True

    def _load(self, conn: apsw.Connection, copy: Follower, key: str | None) -> bool:
        """Everything anew: from the copy's file and the changes since when it has one
        written under `key`, else from the index."""
        self.forget()
        saved = copy.saved(key)
        if saved is None:
            return self._read(copy, key)
        self._seqs, self._ids = np.asarray(saved[0], dtype=np.int64), list(saved[1])
        self._held_key, self._changed = key, 0
        self.mapped += 1
        share = SAVED_SHARE if self._share is None else min(SAVED_SHARE, self._share)
        reads = self.loads
        changed = self._apply_changes(conn, copy, share)
        if self.loads == reads:  # not read anew: the file's state, caught up
            copy.caught_up((self._seqs, self._ids), changed)
        return True

    def _read(self, copy: Follower, key: str | None) -> bool:
        self.forget()
        seqs, ids = copy.load()
        self._seqs, self._ids = np.asarray(seqs, dtype=np.int64), list(ids)
        self._held_key, self._changed = key, 0
        self.loads += 1
        return True


def pairs_of(rows: list[tuple[int, str]]) -> Pairs:
    """The (seq, id) rows a copy read, as `Pairs`."""
    seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    return seqs, [r[1] for r in rows]

"""The index mirror: what an in-memory copy holds of the index, and when it catches up.

A real SQLite file in WAL mode, a writer connection and a reader connection, and the
simplest copy there is (seq -> id in a dict, read from the same table), so each test shows
exactly which rows the mirror had its copy drop, add or read anew.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import numpy as np
import pytest

from engine.search.retrieve.mirror import IndexMirror, Memo, Pairs, SeqArray, pairs_of
from engine.store import db


def table_pairs(conn: apsw.Connection) -> dict[int, str]:
    return dict(conn.execute("SELECT seq, id FROM t"))


def meta_key(conn: apsw.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta").fetchone()
    return None if row is None else str(row[0])


class Copy:
    """An in-memory copy of table t, brought in line by a mirror."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.rows: dict[int, str] = {}
        self.dropped: list[int] = []
        self.read: list[int] = []
        self.fail = False

    def load(self) -> Pairs:
        if self.fail:
            raise apsw.SQLError("cannot read")
        self.rows = table_pairs(self.conn)
        return pairs_of(list(self.rows.items()))

    def apply(self, gone: SeqArray, new: list[int]) -> Pairs:
        for seq in gone.tolist():
            del self.rows[seq]
        self.dropped += gone.tolist()
        self.read += new
        marks = ",".join("?" * len(new))
        found = list(self.conn.execute(f"SELECT seq, id FROM t WHERE seq IN ({marks})", new))
        self.rows.update(found)
        return pairs_of(found)

    def saved(self, key: str | None) -> Pairs | None:
        return None  # no file kept: every full state is read

    def caught_up(self, pairs: Pairs, changed: bool) -> None:
        raise AssertionError("only a state taken up from a file catches up")


@pytest.fixture
def files(tmp_path: Path) -> Iterator[tuple[apsw.Connection, apsw.Connection]]:
    path = str(tmp_path / "index.db")
    writer = apsw.Connection(path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t(seq INTEGER PRIMARY KEY, id TEXT NOT NULL)")
    writer.execute("CREATE TABLE meta(value TEXT)")
    writer.execute("INSERT INTO meta VALUES ('model-a')")
    with writer:
        for seq in range(1, 9):
            writer.execute("INSERT INTO t VALUES (?, ?)", (seq, f"c{seq}"))
    reader = apsw.Connection(path)
    yield writer, reader
    reader.close(), writer.close()


def commit(writer: apsw.Connection, *statements: str) -> None:
    with writer:
        for statement in statements:
            writer.execute(statement)


def test_additions_edits_and_deletions_reach_the_copy(files: tuple[apsw.Connection, ...]) -> None:
    writer, reader = files
    mirror, copy = IndexMirror(table_pairs), Copy(reader)
    assert mirror.follow(reader, copy) and mirror.loads == 1 and len(mirror) == 8
    assert not mirror.follow(reader, copy)  # nothing committed: one PRAGMA, nothing read
    commit(writer, "INSERT INTO t VALUES (9, 'c9')", "INSERT INTO t VALUES (12, 'c12')")
    assert mirror.follow(reader, copy) and (mirror.loads, mirror.updates) == (1, 1)
    assert copy.read == [9, 12] and copy.dropped == []
    commit(writer, "UPDATE t SET id = 'c3-edited' WHERE seq = 3", "DELETE FROM t WHERE seq = 5")
    assert mirror.follow(reader, copy) and mirror.updates == 2
    assert sorted(copy.dropped) == [3, 5] and copy.read == [9, 12, 3]
    assert copy.rows == mirror.held == table_pairs(writer)
    commit(writer, "CREATE TABLE other(x)")  # a commit that changes no pair
    assert not mirror.follow(reader, copy) and mirror.updates == 2


def test_a_reused_seq_is_dropped_and_read_again(files: tuple[apsw.Connection, ...]) -> None:
    writer, reader = files
    mirror, copy = IndexMirror(table_pairs), Copy(reader)
    mirror.follow(reader, copy)
    # An edited file's last chunk: deleted, then inserted under the same (highest) rowid.
    commit(writer, "DELETE FROM t WHERE seq = 8", "INSERT INTO t(id) VALUES ('c8-new')")
    assert writer.execute("SELECT seq FROM t WHERE id = 'c8-new'").fetchone()[0] == 8
    assert mirror.follow(reader, copy)
    assert (copy.dropped, copy.read) == ([8], [8]) and copy.rows[8] == "c8-new"
    assert mirror.held == table_pairs(writer)


def test_changes_past_the_share_read_everything_anew(files: tuple[apsw.Connection, ...]) -> None:
    writer, reader = files
    mirror, copy = IndexMirror(table_pairs, reload_share=0.25), Copy(reader)  # 2 of 8
    mirror.follow(reader, copy)
    commit(writer, "INSERT INTO t VALUES (20, 'c20')")
    assert mirror.follow(reader, copy) and (mirror.loads, mirror.updates) == (1, 1)
    commit(writer, "DELETE FROM t WHERE seq = 1")  # two changes since the load: at the share
    assert mirror.follow(reader, copy) and (mirror.loads, mirror.updates) == (1, 2)
    commit(writer, "INSERT INTO t VALUES (21, 'c21')")  # three: past it
    assert mirror.follow(reader, copy) and (mirror.loads, mirror.updates) == (2, 2)
    commit(writer, "INSERT INTO t VALUES (22, 'c22')")  # counted from the new load again
    assert mirror.follow(reader, copy) and (mirror.loads, mirror.updates) == (2, 3)
    assert copy.rows == mirror.held == table_pairs(writer)


def test_a_new_key_reads_everything_anew(files: tuple[apsw.Connection, ...]) -> None:
    writer, reader = files
    mirror, copy = IndexMirror(table_pairs, meta_key), Copy(reader)
    mirror.follow(reader, copy)
    commit(writer, "INSERT INTO t VALUES (30, 'c30')")
    assert mirror.follow(reader, copy) and mirror.loads == 1
    commit(writer, "UPDATE meta SET value = 'model-b'")  # every pair the same, a new embedder
    assert mirror.follow(reader, copy) and mirror.loads == 2


def racing(
    writer: apsw.Connection, statement: str, before: bool
) -> Callable[[apsw.Connection], dict[int, str]]:
    """A pairs reader during which another connection commits once (before or after the
    rows are read)."""
    done: list[bool] = []

    def read(conn: apsw.Connection) -> dict[int, str]:
        if before and not done:
            commit(writer, statement)
            done.append(True)
        pairs = table_pairs(conn)
        if not before and not done:
            commit(writer, statement)
            done.append(True)
        return pairs

    return read


@pytest.mark.parametrize("before", [True, False], ids=["before-the-rows", "after-the-rows"])
@pytest.mark.parametrize("snapshot", [False, True], ids=["autocommit", "in-a-snapshot"])
def test_a_commit_while_the_rows_are_read_is_caught_on_the_next_call(
    files: tuple[apsw.Connection, ...], before: bool, snapshot: bool
) -> None:
    writer, reader = files
    mirror = IndexMirror(racing(writer, "INSERT INTO t VALUES (40, 'c40')", before))
    mirror.follow(reader, Copy(reader))  # the first call loads: the pairs are not read
    commit(writer, "DELETE FROM t WHERE seq = 2")
    copy = Copy(reader)
    copy.rows = dict(mirror.held)

    def follow() -> bool:
        if not snapshot:
            return mirror.follow(reader, copy)
        with db.read_snapshot(reader):  # the caller's (the keyword index searches in one)
            return mirror.follow(reader, copy)

    follow()
    follow()  # the commit made while the rows were read moved the version: caught here
    assert 40 in copy.rows and 2 not in copy.rows
    assert copy.rows == mirror.held == table_pairs(writer)
    assert not follow()


def test_memos_last_one_index_state(files: tuple[apsw.Connection, ...]) -> None:
    writer, reader = files
    mirror, copy = IndexMirror(table_pairs), Copy(reader)
    masks: Memo[str, np.ndarray] = mirror.memo(2)
    made: list[str] = []

    def mask(name: str) -> Callable[[], np.ndarray]:
        def compute() -> np.ndarray:
            made.append(name)
            return np.zeros(3)

        return compute

    mirror.follow(reader, copy)
    first = masks.get("slack", mask("slack"))
    assert masks.get("slack", mask("slack")) is first and made == ["slack"]
    masks.get("note", mask("note"))
    masks.get("mail", mask("mail"))  # a third: the memo was full, so it starts over
    assert len(masks) == 1 and made == ["slack", "note", "mail"]
    commit(writer, "CREATE TABLE unrelated(x)")  # a commit that keeps every pair
    assert not mirror.follow(reader, copy) and len(masks) == 0
    assert masks.get("mail", mask("mail")) is not None and made[-1] == "mail"


def test_a_copy_that_cannot_be_read_holds_nothing_until_the_next_commit(
    files: tuple[apsw.Connection, ...],
) -> None:
    writer, reader = files
    mirror, copy = IndexMirror(table_pairs, meta_key), Copy(reader)
    mirror.follow(reader, copy)
    commit(writer, "UPDATE meta SET value = 'model-b'")
    copy.fail = True
    with pytest.raises(apsw.SQLError):
        mirror.follow(reader, copy)
    assert len(mirror) == 0 and mirror.version is None
    assert not mirror.follow(reader, copy)  # not tried again at the same data version
    copy.fail = False
    commit(writer, "INSERT INTO t VALUES (50, 'c50')")
    assert mirror.follow(reader, copy) and mirror.loads == 2
    assert copy.rows == mirror.held == table_pairs(writer)

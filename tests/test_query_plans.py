"""The keyword query must let FTS5 order its own matches (no temp B-tree sort of every match).

`ORDER BY bm25(…)` returns the same lists but makes SQLite join and sort every matching row,
several times slower at 100k chunks (figures: docs/benchmarks.md, "Speed at 10k and 100k
chunks, beside a peer stack and the floor"). A plan is a fact that does not depend on
timing, so it is what the test pins.

The plans of the other statements that run per file, per batch or per keystroke are pinned
in tests/snapshots/plans.txt (the `detail` column of EXPLAIN QUERY PLAN; rewrite it with
MEMEX_UPDATE_SNAPSHOTS=1), each with the index it must use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import apsw
import pytest

from engine.records import Person
from engine.search import Searcher
from engine.search.query import fts
from engine.search.query.filters import Filters, chunk_filter_sql, vec_filter_sql
from engine.settings import Settings
from engine.store import db
from engine.store.sql import chunks, state, vec
from engine.store.sql import fts as fts_sql
from tests.snapshot_file import check_snapshot

VEC = "chunks_vec_plans_4"
TYPE_DATE = Filters(("slack",), "2026-01-01", None, ())
WITH_PERSON = Filters(("slack", "mail"), "2026-01-01", "2026-06-30", (Person("Ana", "ana"),))
DATES = Filters((), "2026-01-01", "2026-06-30", ())
BY_FILE = ("SEARCH chunks USING", "INDEX chunks_file (source_file=?)")


def plan(conn: object, sql: str, params: tuple[object, ...]) -> str:
    rows = conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()  # type: ignore[attr-defined]
    return "\n".join(str(r[3]) for r in rows)


def test_bm25_sql_uses_the_fts5_order_with_and_without_filters(demo_index: Settings) -> None:
    conn = db.connect(demo_index.db_path, create=False)
    for filters in (Filters((), None, None, ()), Filters(("slack",), "2026-01-01", None, ())):
        where, params = chunk_filter_sql(filters)
        text = plan(conn, fts.bm25_sql(where), ("coffee", *params, 10))
        assert "TEMP B-TREE" not in text, text
        assert "chunks_fts" in text
    # The slow form, for contrast: the check above can fail.
    slow = (
        "SELECT c.seq, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts "
        "JOIN chunks c ON c.seq = chunks_fts.rowid WHERE chunks_fts MATCH ? "
        "ORDER BY score LIMIT ?"
    )
    assert "TEMP B-TREE" in plan(conn, slow, ("coffee", 10))
    conn.close()


def test_bm25_order_is_the_weighted_bm25_order(demo_index: Settings) -> None:
    """The rank column carries the title weight: same list as ordering by bm25(1, 2)."""
    searcher = Searcher(demo_index)
    slow = (
        "SELECT c.seq FROM chunks_fts JOIN chunks c ON c.seq = chunks_fts.rowid "
        "WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 1.0, 2.0), c.seq LIMIT ?"
    )
    for query in ("coffee machine broken", "standup time", "Lofoten ferry bikes", "invoice"):
        terms = fts.query_terms(query)
        fast = list(searcher.keywords(terms, 30, Filters((), None, None, ())).top)
        expected = [
            r[0] for r in searcher.conn.execute(slow, (fts.match_expression(terms), 30)).fetchall()
        ]
        assert fast and set(fast) == set(expected)
        assert fast[:5] == expected[:5]
    searcher.close()


@dataclass(frozen=True)
class PlanCase:
    """A statement whose plan is pinned, with what the plan must and must not mention."""

    name: str
    sql: str
    params: tuple[object, ...]
    uses: tuple[str, ...]
    avoids: tuple[str, ...] = ()


def plan_cases(table: str = VEC) -> list[PlanCase]:
    """The statements whose plans matter, `table` standing for the active vec0 table."""
    return search_cases(table) + index_cases()


def search_cases(table: str) -> list[PlanCase]:
    """Statements of every search (every keystroke in the desktop app)."""
    where, params = chunk_filter_sql(TYPE_DATE)
    person_where, person_params = chunk_filter_sql(WITH_PERSON)
    date_where, date_params = chunk_filter_sql(DATES)
    vec_where, vec_params = vec_filter_sql(TYPE_DATE)
    fts_first = ("chunks_fts VIRTUAL TABLE", "SEARCH c USING INTEGER PRIMARY KEY (rowid=?)")
    return [
        PlanCase("bm25 top-k", fts_sql.bm25_sql(""), ("coffee", 10), fts_first, ("TEMP B-TREE",)),
        PlanCase(
            "bm25 top-k, type and date filters",
            fts_sql.bm25_sql(where),
            ("coffee", *params, 10),
            fts_first,
            ("TEMP B-TREE",),
        ),
        PlanCase(
            "bm25 top-k, types, dates and a person",
            fts_sql.bm25_sql(person_where),
            ("coffee", *person_params, 10),
            fts_first,
            ("TEMP B-TREE",),
        ),
        PlanCase(
            "facets: source types of the matches, date filters",
            fts_sql.type_counts_sql(date_where),
            ("coffee", *date_params),
            fts_first,
        ),
        PlanCase(
            "highlights of the hits",
            fts_sql.highlight_sql(3),
            ("coffee", 1, 2, 3),
            ("chunks_fts VIRTUAL TABLE",),
        ),
        PlanCase(
            "result rows by seq",
            chunks.rows_by_seq_sql(3),
            (1, 2, 3),
            ("INTEGER PRIMARY KEY (rowid=?)",),
            ("SCAN",),
        ),
        PlanCase(
            "vec0 KNN, type and date filters in the scan",
            vec.knn_sql(table, vec_where),
            (bytes(16), 10, *vec_params),
            (f"SCAN {table} VIRTUAL TABLE INDEX",),
        ),
        PlanCase(
            "chunk position by id",
            chunks.position_by_id_sql(),
            ("/r/a.md#0",),
            ("sqlite_autoindex_chunks_1 (id=?)",),
        ),
        PlanCase("neighbours of a hit", chunks.neighbours_sql(), ("/r/a.md", 0, 4), BY_FILE),
    ]


def index_cases() -> list[PlanCase]:
    """Statements the indexer and the vector cache run per file or per batch."""
    prefix = "/r/a/"
    return [
        PlanCase("chunk ids of a file", chunks.ids_by_file_sql(), ("/r/a.md",), BY_FILE),
        PlanCase("chunk seqs of a file", chunks.seqs_by_file_sql(), ("/r/a.md",), BY_FILE),
        PlanCase("delete the chunks of a file", chunks.delete_by_file_sql(), ("/r/a.md",), BY_FILE),
        PlanCase(
            "unembedded chunks, next batch",
            chunks.unembedded_batch_sql(),
            (256,),
            ("USING INDEX chunks_unembedded_newest",),
            ("TEMP B-TREE",),
        ),
        PlanCase(
            "count of unembedded chunks",
            chunks.count_unembedded_sql(),
            (),
            ("chunks_unembedded",),
        ),
        PlanCase(
            "unembedded chunk seqs",
            chunks.unembedded_seqs_sql(),
            (),
            ("USING INDEX chunks_unembedded",),
        ),
        PlanCase(
            "(seq, id) of every chunk",
            chunks.seq_ids_sql(),
            (),
            ("COVERING INDEX sqlite_autoindex_chunks_1",),
        ),
        PlanCase(
            "index_state of a file",
            state.select_sql(),
            ("/r/a.md",),
            ("SEARCH index_state USING INDEX sqlite_autoindex_index_state_1 (source_file=?)",),
        ),
        # substr() cannot use the index: a scan of index_state's covering index (files, not
        # chunks), once per watcher event on a path that is gone.
        PlanCase(
            "known files at or under a path",
            state.known_under_sql(),
            ("/r/a", len(prefix), prefix),
            ("index_state",),
            ("chunks",),
        ),
    ]


@pytest.fixture
def plan_index(tmp_path: Path) -> apsw.Connection:
    """A real index file: the schema, a vec0 table and a few chunks and files."""
    conn = db.connect(tmp_path / "plans.db")
    db.migrate(conn)
    conn.execute(vec.create_table_sql(VEC, 4))
    with db.transaction(conn):
        for i, path in enumerate(["/r/a.md", "/r/a.md", "/r/a/b.md", "/r/c.md"]):
            embedding = bytes(16) if i % 2 else None
            conn.execute(
                chunks.insert_sql(),
                (
                    f"{path}#{i}",
                    path,
                    "slack",
                    f"coffee {i}",
                    "{}",
                    embedding,
                    0.0,
                    "h",
                    "2026-02-01",
                    "",
                    "",
                    "Ana",
                    i,
                    None,
                    None,
                ),
            )
            if embedding is not None:
                conn.execute(
                    vec.insert_sql(VEC), (conn.last_insert_rowid(), embedding, "slack", 20260201)
                )
            conn.execute(state.upsert_sql(), (path, "slack", 1.0, 1, 0.0, None, None))
    return conn


def plans(conn: apsw.Connection, cases: list[PlanCase]) -> dict[str, str]:
    return {case.name: plan(conn, case.sql, case.params) for case in cases}


def test_query_plans_use_their_indexes(plan_index: apsw.Connection) -> None:
    found = plans(plan_index, plan_cases())
    for case in plan_cases():
        text = found[case.name]
        for part in case.uses:
            assert part in text, f"{case.name}: no {part!r} in\n{text}"
        for part in case.avoids:
            assert part not in text, f"{case.name}: {part!r} in\n{text}"


def test_query_plans_match_the_snapshot(plan_index: apsw.Connection) -> None:
    check_snapshot("plans.txt", plans(plan_index, plan_cases()))


def test_query_plans_do_not_depend_on_the_data(
    plan_index: apsw.Connection, demo_index: Settings
) -> None:
    """The small index stands for a real one: the demo index gives the same plans."""
    conn = db.connect(demo_index.db_path, create=False)
    table = db.active_vec_table(conn)
    assert table
    demo = {name: text.replace(table, VEC) for name, text in plans(conn, plan_cases(table)).items()}
    conn.close()
    assert demo == plans(plan_index, plan_cases())

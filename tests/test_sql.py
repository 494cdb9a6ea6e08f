"""Every SQL builder of engine/store/sql, rendered with representative arguments.

The text is pinned in tests/snapshots/sql.txt (MEMEX_UPDATE_SNAPSHOTS=1 rewrites it), every
statement must compile against a real index file, and table names from the index are
checked identifiers.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import apsw
import pytest

import engine.store.sql
from engine.records import Person
from engine.search.query.filters import Filters, chunk_filter_sql, vec_filter_sql
from engine.store import db
from engine.store.sql import (
    IdentifierError,
    chunk_state,
    chunks,
    database,
    fts,
    identifier,
    meta,
    opens,
    people,
    placeholders,
    schema,
    state,
    vec,
    verdicts,
)
from tests.snapshot_file import check_snapshot

VEC = "chunks_vec_local_minilm_l6_v2_384"
FILTERS = Filters(("slack", "mail"), "2026-01-01", "2026-06-30", (Person("Ana", "ana"),))
CHUNK_FILTER = chunk_filter_sql(FILTERS)[0]
DATE_FILTER = chunk_filter_sql(Filters((), "2026-01-01", "2026-06-30", ()))[0]
VEC_FILTER = vec_filter_sql(FILTERS)[0]
# Arguments shown by name in the snapshot headers.
NAMED = {
    VEC: "VEC",
    CHUNK_FILTER: "CHUNK_FILTER",
    DATE_FILTER: "DATE_FILTER",
    VEC_FILTER: "VEC_FILTER",
}

Builder = Callable[..., Any]
CASES: list[tuple[Builder, tuple[Any, ...]]] = [
    (schema.schema_sql, ()),
    (schema.has_chunks_table_sql, ()),
    (schema.table_exists_sql, ()),
    (schema.create_statement_sql, ()),
    (schema.vec_tables_sql, ()),
    (schema.keyword_schema_sql, ()),
    (schema.drop_keyword_side_sql, ()),
    (schema.chunk_columns_sql, ()),
    (schema.add_search_columns_sql, ()),
    (database.connection_pragmas, (False,)),
    (database.connection_pragmas, (True,)),
    (database.shrink_memory_sql, ()),
    (database.begin_immediate_sql, ()),
    (database.begin_sql, ()),
    (database.commit_sql, ()),
    (database.rollback_sql, ()),
    (database.integrity_check_sql, ()),
    (database.quick_check_sql, ()),
    (database.data_version_sql, ()),
    (database.page_count_sql, ()),
    (database.freelist_count_sql, ()),
    (database.checkpoint_truncate_sql, ()),
    (database.vacuum_sql, ()),
    (database.vacuum_into_sql, ()),
    (meta.select_value_sql, ()),
    (meta.upsert_sql, ()),
    (meta.delete_sql, ()),
    (state.select_sql, ()),
    (state.upsert_sql, ()),
    (state.delete_sql, ()),
    (state.states_sql, ()),
    (state.files_with_stat_sql, ()),
    (state.known_under_sql, ()),
    (state.count_sql, ()),
    (state.errors_sql, ()),
    (state.indexed_with_errors_sql, ()),
    (state.columns_sql, ()),
    (state.add_depends_sql, ()),
    (chunks.insert_sql, ()),
    (chunks.delete_by_seq_sql, ()),
    (chunks.delete_by_file_sql, ()),
    (chunks.update_embedding_sql, ()),
    (chunks.clear_embeddings_sql, ()),
    (chunks.delete_orphans_sql, ()),
    (chunks.ids_by_file_sql, ()),
    (chunks.seqs_by_file_sql, ()),
    (chunks.position_by_id_sql, ()),
    (chunks.row_by_id_sql, ()),
    (chunks.neighbours_sql, ()),
    (chunks.around_seq_sql, ()),
    (chunks.note_named_sql, ()),
    (chunks.record_by_id_sql, (3,)),
    (chunks.rows_by_seq_sql, (3,)),
    (chunks.to_embed_by_seq_sql, (3,)),
    (chunks.seqs_sql, ()),
    (chunks.seq_ids_sql, ()),
    (chunks.unembedded_batch_sql, ()),
    (chunks.count_unembedded_sql, ()),
    (chunks.unembedded_seqs_sql, ()),
    (chunks.any_embedded_sql, ()),
    (chunks.embedded_vectors_sql, ()),
    (chunks.embedded_rows_sql, ()),
    (chunks.embedded_bytes_sql, ()),
    (chunks.embedded_rows_by_seq_sql, (3,)),
    (chunks.embedded_seqs_where_sql, (CHUNK_FILTER,)),
    (chunks.embedded_where_sql, ("",)),
    (chunks.embedded_where_sql, (CHUNK_FILTER,)),
    (chunks.embedding_by_seq_sql, (3,)),
    (chunks.content_by_seq_sql, ()),
    (chunks.part_vectors_sql, ()),
    (chunks.count_sql, ()),
    (chunks.count_embedded_sql, ()),
    (chunks.keyword_rows_sql, ()),
    (chunks.keyword_rows_by_seq_sql, (3,)),
    (chunks.search_texts_sql, ()),
    (chunks.set_search_text_sql, ()),
    (chunks.seqs_where_sql, (CHUNK_FILTER,)),
    (chunks.max_seq_sql, ()),
    (chunks.latest_title_sql, ()),
    (chunks.count_per_type_sql, ()),
    (chunks.has_type_sql, ()),
    (chunks.count_orphans_sql, ()),
    (chunks.count_orphan_files_sql, ()),
    (fts.bm25_sql, ("",)),
    (fts.bm25_sql, (CHUNK_FILTER,)),
    (fts.highlight_sql, (3,)),
    (fts.held_by_rowid_sql, ()),
    (fts.capped_frequency_sql, ()),
    (fts.type_counts_sql, ("",)),
    (fts.type_counts_sql, (DATE_FILTER,)),
    (fts.count_sql, ()),
    (fts.integrity_check_sql, ()),
    (fts.rebuild_sql, ()),
    (fts.phrase_postings_sql, ()),
    (fts.create_vocab_sql, ()),
    (fts.vocab_terms_sql, ()),
    (fts.vocab_instances_sql, ()),
    (vec.create_table_sql, (VEC, 384)),
    (vec.drop_table_sql, (VEC,)),
    (vec.insert_sql, (VEC,)),
    (vec.delete_sql, (VEC,)),
    (vec.knn_sql, (VEC, "")),
    (vec.knn_sql, (VEC, VEC_FILTER)),
    (vec.rowids_sql, (VEC,)),
    (vec.vectors_sql, (VEC,)),
    (vec.count_sql, (VEC,)),
    (vec.count_chunks_sql, (VEC,)),
    (vec.chunks_table, (VEC,)),
    (vec.rowids_table, (VEC,)),
    (vec.slot_chunks_sql, (VEC,)),
    (vec.count_orphans_sql, (VEC,)),
    (vec.count_missing_sql, (VEC,)),
    (opens.create_table_sql, ()),
    (opens.insert_sql, ()),
    (opens.clear_sql, ()),
    (opens.by_ids_sql, (3,)),
    (opens.summary_sql, ()),
    (people.create_tables_sql, ()),
    (people.mark_files_for_mentions_sql, ()),
    (people.insert_mention_sql, ()),
    (people.mentions_by_file_sql, ()),
    (people.delete_mentions_sql, ()),
    (people.all_mentions_sql, ()),
    (people.delete_orphan_mentions_sql, ()),
    (people.clear_people_sql, ()),
    (people.insert_person_sql, ()),
    (people.people_sql, ()),
    (people.people_naming_sql, (2,)),
    (people.people_at_sql, (3,)),
    (people.words_table_sql, ()),
    (people.clear_words_sql, ()),
    (people.person_rowids_sql, ()),
    (people.insert_word_sql, ()),
    (people.people_with_words_sql, (2,)),
    (chunk_state.schema_sql, ()),
    (chunk_state.has_row_sql, ()),
    (chunk_state.start_sql, ()),
    (chunk_state.new_origin_sql, ()),
    (chunk_state.select_sql, ()),
    (verdicts.create_table_sql, ()),
    (verdicts.exists_sql, ()),
    (verdicts.select_sql, ()),
    (verdicts.upsert_sql, ()),
    (verdicts.delete_sql, ()),
    (verdicts.delete_other_signatures_sql, ()),
]


def label(builder: Builder, args: tuple[Any, ...]) -> str:
    shown = ", ".join(NAMED.get(a, repr(a)) if isinstance(a, str) else repr(a) for a in args)
    return f"{builder.__module__.rsplit('.', 1)[1]}.{builder.__name__}({shown})"


def statements(builder: Builder, args: tuple[Any, ...]) -> list[str]:
    out = builder(*args)
    return out if isinstance(out, list) else [out]


def builder_modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.iter_modules(engine.store.sql.__path__) if m.name != "base"]
    return [importlib.import_module(f"engine.store.sql.{name}") for name in names]


def test_builder_modules_are_one_per_table() -> None:
    found = {m.__name__.rsplit(".", 1)[1] for m in builder_modules()}
    assert found == {
        *("chunks", "database", "fts", "meta", "opens", "people", "schema", "state", "vec"),
        *("verdicts", "chunk_state"),
    }
    for module in builder_modules():
        assert module.__doc__ and "\n" not in module.__doc__.split("\n\n")[0].strip()


def test_every_builder_has_a_snapshot_case() -> None:
    public = {
        (m.__name__, name)
        for m in builder_modules()
        for name, fn in inspect.getmembers(m, inspect.isfunction)
        if not name.startswith("_") and fn.__module__ == m.__name__
    }
    covered = {(b.__module__, b.__name__) for b, _ in CASES}
    assert public - covered == set(), "add a case (and refresh the snapshot) for each"
    assert covered - public == set()


def test_sql_matches_the_snapshot() -> None:
    sections = {label(b, args): "\n".join(statements(b, args)) for b, args in CASES}
    assert len(sections) == len(CASES), "two cases render under the same header"
    check_snapshot("sql.txt", sections)


@pytest.fixture
def index(tmp_path: Path) -> apsw.Connection:
    """A real index file with the schema and a vec0 table named VEC."""
    conn = db.connect(tmp_path / "index.db")
    db.migrate(conn)
    conn.execute(vec.create_table_sql(VEC, 384))
    for statement in opens.create_table_sql():  # made by the first recorded open
        conn.execute(statement)
    for statement in fts.create_vocab_sql():  # made by the keyword index as it loads
        conn.execute(statement)
    conn.execute(verdicts.create_table_sql())  # made by the first stored verdict
    return conn


def test_every_statement_compiles_against_a_real_index(index: apsw.Connection) -> None:
    for builder, args in CASES:
        if builder in (vec.chunks_table, vec.rowids_table):
            continue  # names, not statements
        if builder is state.add_depends_sql:
            continue  # the column it adds exists in a new index (tests/test_siblings.py)
        if builder in (schema.add_search_columns_sql, schema.drop_keyword_side_sql):
            continue  # scripts that change the schema (tests/test_keyword_format.py)
        for sql in statements(builder, args):
            # explain=2 (EXPLAIN QUERY PLAN) prepares the statement without running it.
            index.execute(sql, [None] * sql.count("?"), explain=2).fetchall()
    assert db.table_exists(index, VEC)  # the DROP TABLE did not run
    assert db.table_exists(index, vec.chunks_table(VEC))
    assert db.table_exists(index, vec.rowids_table(VEC))


@pytest.mark.parametrize("name", ["chunks_vec_local_384", "a", "t_1"])
def test_identifier_accepts_lower_case_words(name: str) -> None:
    assert identifier(name) == name


@pytest.mark.parametrize(
    "name", ["", "Chunks", "chunks vec", "x;DROP TABLE chunks", "a-b", "t\n", '"t"', "täble", "t.x"]
)
def test_identifier_rejects_anything_else(name: str) -> None:
    with pytest.raises(IdentifierError):
        identifier(name)


def test_every_builder_taking_a_table_name_checks_it() -> None:
    bad = "chunks; DROP TABLE chunks"
    takers = [(b, args) for b, args in CASES if args and args[0] == VEC]
    assert len(takers) >= 13
    for builder, args in takers:
        with pytest.raises(IdentifierError):
            builder(bad, *args[1:])


def test_placeholders() -> None:
    assert placeholders(3) == "?,?,?"
    assert placeholders(1) == "?"
    assert placeholders(0) == ""
    with pytest.raises(ValueError):
        placeholders(-1)
    assert chunks.rows_by_seq_sql(2).endswith("WHERE seq IN (?,?)")


def test_values_never_reach_the_sql_text() -> None:
    """The filter fragments hold placeholders only; their values travel as parameters."""
    where, params = chunk_filter_sql(FILTERS)
    assert params and all(str(p) not in where for p in params)
    assert where.count("?") == len(params)
    vec_where, vec_params = vec_filter_sql(FILTERS)
    assert vec_where.count("?") == len(vec_params)


def _add_chunk(
    conn: apsw.Connection, source_file: str, ordinal: int, embedding: bytes | None = None
) -> int:
    conn.execute(
        chunks.insert_sql(),
        (
            f"{source_file}#{ordinal}",
            source_file,
            "notes",
            f"text {ordinal}",
            "{}",
            embedding,
            0.0,
            "hash",
            "2026-01-02",
            "",
            "",
            "",
            ordinal,
            None,
            None,
        ),
    )
    return int(conn.last_insert_rowid())


def test_known_under_matches_the_path_and_its_folder_only(index: apsw.Connection) -> None:
    for path in ("/r/a", "/r/a/x.md", "/r/a/sub/y.md", "/r/ab.md", "/r/b/z.md"):
        index.execute(state.upsert_sql(), (path, "notes", 1.0, 1, 0.0, None, None))
    prefix = "/r/a/"
    rows = index.execute(state.known_under_sql(), ("/r/a", len(prefix), prefix)).fetchall()
    assert sorted(r[0] for r in rows) == ["/r/a", "/r/a/sub/y.md", "/r/a/x.md"]


def test_state_upsert_replaces_and_delete_forgets(index: apsw.Connection) -> None:
    index.execute(state.upsert_sql(), ("/r/x.md", "notes", 1.0, 10, 0.0, "boom", "k1"))
    index.execute(state.upsert_sql(), ("/r/x.md", "notes", 2.0, 20, 0.0, None, None))
    assert index.execute(state.select_sql(), ("/r/x.md",)).fetchall() == [(2.0, 20, None, None)]
    index.execute(state.delete_sql(), ("/r/x.md",))
    assert index.execute(state.select_sql(), ("/r/x.md",)).fetchall() == []


def test_chunk_builders_round_trip(index: apsw.Connection) -> None:
    seqs = [_add_chunk(index, "/r/a.md", i) for i in range(5)]
    other = _add_chunk(index, "/r/b.md", 0, embedding=b"\0" * 4 * 384)
    assert [r[0] for r in index.execute(chunks.seqs_by_file_sql(), ("/r/a.md",))] == seqs
    batch = index.execute(chunks.unembedded_batch_sql(), (3,)).fetchall()
    assert [r[0] for r in batch] == seqs[:3]  # one date: then in seq order
    assert index.execute(chunks.count_unembedded_sql()).fetchone()[0] == 5
    index.execute(chunks.update_embedding_sql(), (b"\0" * 4 * 384, seqs[0]))
    assert [r[0] for r in index.execute(chunks.unembedded_seqs_sql())] == seqs[1:]
    rows = index.execute(chunks.neighbours_sql(), ("/r/a.md", 1, 3)).fetchall()
    assert [r[5] for r in rows] == [1, 2, 3]
    index.execute(chunks.delete_by_seq_sql(), (seqs[0],))
    index.execute(chunks.delete_by_file_sql(), ("/r/a.md",))
    assert [r[0] for r in index.execute(chunks.seqs_sql())] == [other]
    assert index.execute(fts.count_sql()).fetchone()[0] == 1  # the triggers kept FTS in step

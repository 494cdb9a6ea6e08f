"""The warm copies' files beside the index (`memex.db.keyword`, `memex.db.vectors`): written
after a full read, mapped by the next process in its place, caught up with the changes
since, never taken up under another key, never changed by the process that maps them."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from engine.index.runs import reindex
from engine.search.query import fts
from engine.search.retrieve.keyword_index import KeywordIndex
from engine.search.retrieve.vector_cache import VectorCache
from engine.settings import Settings
from engine.store import db, mapped
from engine.store.sql import meta as meta_sql
from tests.test_keyword_index import check_all, notes_layer


@pytest.fixture
def small(settings_factory: Callable[..., Settings]) -> Settings:
    # 40 notes: one change stays below a twentieth; a name with an accent in every note
    return notes_layer(settings_factory(embedder__name="hashing"), "Renée's scheduler")


def beside(settings: Settings, suffix: str) -> Path:
    return Path(str(settings.db_path) + suffix)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_arrays_and_fields_come_back_as_written_and_a_damaged_file_is_no_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memex.db.keyword"
    stale, fresh = tmp_path / "memex.db.keyword.x1.tmp", tmp_path / "memex.db.keyword.x2.tmp"
    stale.write_bytes(b"cut short by a kill"), fresh.write_bytes(b"being written")
    os.utime(stale, (time.time() - 2 * mapped.STALE_SECONDS,) * 2)
    words = ["ferry", "Bodø", "日本語", ""]
    blob, offsets = mapped.strings_array(words)
    arrays = {
        "matrix": np.arange(12, dtype=np.float32).reshape(3, 4),
        "empty": np.zeros(0, dtype=np.int64),
        "blob": blob,
        "offsets": offsets,
    }
    assert mapped.write(path, {"key": "k1", "codes": {"slack": 0}}, arrays)
    found = mapped.read(path)
    assert found is not None
    fields, back = found
    assert fields == {"key": "k1", "codes": {"slack": 0}}
    assert np.array_equal(back["matrix"], arrays["matrix"]) and back["empty"].shape == (0,)
    strings = mapped.Strings(back["blob"], back["offsets"])
    assert strings.all() == words and strings[1] == "Bodø" and strings[-2] == "日本語"
    before = digest(path)
    back["matrix"][0, 0] = 99.0  # copy-on-write: this process's page, not the file
    assert digest(path) == before and mapped.read(path)[1]["matrix"][0, 0] == 0.0  # type: ignore[index]
    # No temporary file of its own left; another process's old one removed, a new one kept.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memex.db.keyword", fresh.name]

    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # cut short
    assert mapped.read(path) is None
    path.write_bytes(b"SQLite format 3\x00" + whole[16:])  # another format
    assert mapped.read(path) is None
    assert mapped.read(tmp_path / "absent") is None
    assert not mapped.write(tmp_path / "no-such-folder" / "x", {}, arrays)


def test_the_next_process_maps_the_postings_and_catches_up(small: Settings) -> None:
    first = KeywordIndex(small.db_path)
    assert first.refresh() and (first.loads, first.mapped) == (1, 0)
    saved = beside(small, ".keyword")
    assert saved.exists() and saved.stat().st_mode & 0o777 == 0o600
    second = KeywordIndex(small.db_path)
    assert second.refresh() and (second.loads, second.mapped, second.updates) == (0, 1, 0)
    check_all(second, small)  # ranks as FTS5 does, row for row
    hits = second.search(fts.query_terms("renee"), 5)  # a term decoded from the mapped blob
    assert hits is not None and len(hits.top) == 5

    written = digest(saved)
    notes = small.roots[0] / "notes"
    (notes / "tomatoes.md").write_text("# Tomatoes\nPlant after the last frost.\n")
    (notes / "garden-2020.md").unlink()
    reindex(settings=small)
    third = KeywordIndex(small.db_path)
    assert third.refresh() and (third.loads, third.mapped, third.updates) == (0, 1, 1)
    check_all(third, small)  # the new note found, the deleted one gone
    assert digest(saved) == written  # rows killed in this process's pages only
    assert second.refresh() and second.updates == 1  # a running copy follows as before
    check_all(second, small)
    for index in (first, second, third):
        index.close()


def test_postings_of_another_keyword_side_or_a_damaged_file_are_read_anew(
    small: Settings,
) -> None:
    KeywordIndex(small.db_path).refresh()
    saved = beside(small, ".keyword")
    conn = db.connect(small.db_path)
    db.set_meta(conn, meta_sql.KEYWORD_BUILT_KEY, "rebuilt")  # the keyword side rebuilt
    conn.close()
    again = KeywordIndex(small.db_path)
    assert again.refresh() and (again.loads, again.mapped) == (1, 0)
    assert mapped.read(saved) is not None and mapped.read(saved)[0]["key"] == "rebuilt"  # type: ignore[index]

    saved.write_bytes(saved.read_bytes()[:100])
    damaged = KeywordIndex(small.db_path)
    assert damaged.refresh() and (damaged.loads, damaged.mapped) == (1, 0)
    check_all(damaged, small)
    found = mapped.read(saved)
    assert found is not None
    fields, arrays = found
    short = {**arrays, "segment_freqs": arrays["segment_freqs"][:-1]}  # sizes that disagree
    assert mapped.write(saved, fields, short)
    uneven = KeywordIndex(small.db_path)
    assert uneven.refresh() and (uneven.loads, uneven.mapped) == (1, 0)
    check_all(uneven, small)
    uneven.close()
    off = KeywordIndex(small.db_path, keep_file=False)
    saved.unlink()
    assert off.refresh() and off.loads == 1 and not saved.exists()
    for index in (again, damaged, off):
        index.close()


def test_many_changes_since_the_postings_file_read_the_index_again(small: Settings) -> None:
    KeywordIndex(small.db_path).refresh()
    notes = small.roots[0] / "notes"
    for i in range(4):  # more than a twentieth of the ~52 chunks
        (notes / f"extra{i}.md").write_text(f"# Extra {i}\nA ferry timetable, page {i}.\n")
    reindex(settings=small)
    index = KeywordIndex(small.db_path)
    assert index.refresh() and (index.loads, index.mapped) == (1, 1)
    check_all(index, small)
    after = KeywordIndex(small.db_path)  # the file written anew: nothing to catch up
    assert after.refresh() and (after.loads, after.mapped, after.updates) == (0, 1, 0)
    index.close(), after.close()


def test_the_next_process_maps_the_matrix_and_a_changed_one_is_written_anew(
    small: Settings,
) -> None:
    first = VectorCache(small.db_path)
    assert first.refresh() and (first.loads, first.mapped) == (1, 0)
    saved = beside(small, ".vectors")
    query = np.asarray(first.matrix[3], dtype=np.float32).copy()
    second = VectorCache(small.db_path)
    assert second.refresh() and (second.loads, second.mapped) == (0, 1)
    assert second.knn(query, 10) == first.knn(query, 10)
    assert second.mirror.held == first.mirror.held

    written = digest(saved)
    notes = small.roots[0] / "notes"
    (notes / "tomatoes.md").write_text("# Tomatoes\nPlant after the last frost.\n")
    reindex(settings=small)
    third = VectorCache(small.db_path)
    assert third.refresh() and (third.loads, third.mapped, third.updates) == (0, 1, 1)
    plain = VectorCache(small.db_path, keep_file=False)
    assert plain.refresh() and plain.loads == 1
    assert third.mirror.held == plain.mirror.held
    assert third.knn(query, 10) == plain.knn(query, 10)
    assert digest(saved) != written  # caught up: written anew, and mapped from there
    fourth = VectorCache(small.db_path)
    assert fourth.refresh() and (fourth.loads, fourth.mapped, fourth.updates) == (0, 1, 0)
    assert fourth.knn(query, 10) == plain.knn(query, 10)
    for cache in (first, second, third, plain, fourth):
        cache.close()

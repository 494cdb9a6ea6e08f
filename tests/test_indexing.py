"""Incremental indexing: only new or changed chunks are embedded; deletions propagate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent

BASE_TS = 1_780_000_000


def slack_lines(start: int, count: int, channel: str = "eng") -> list[str]:
    return [
        json.dumps(
            {
                "ts": f"{BASE_TS + i * 60}.000100",
                "channel": channel,
                "user": "U1",
                "user_name": ["Priya Raman", "Maya"][i % 2],
                "text": f"status update number {i} on the battery scheduler",
            }
        )
        for i in range(start, start + count)
    ]


def write_layer(root: Path) -> None:
    (root / "data" / "slack").mkdir(parents=True)
    (root / "data" / "slack" / "eng.jsonl").write_text("\n".join(slack_lines(0, 300)) + "\n")
    (root / "notes").mkdir()
    (root / "notes" / "garden.md").write_text(
        "---\ntitle: Garden\n---\n# Tomatoes\nPlant after the last frost.\n"
        "# Beans\nClimbing beans need poles.\n# Herbs\nBasil on the windowsill.\n"
    )


def test_no_change_reindex_embeds_nothing(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    first = reindex(settings=settings)
    assert first.chunks > 20 and first.embedded == first.chunks and not first.errors
    second = reindex(settings=settings)
    assert (second.chunks, second.embedded, second.files, second.deleted_chunks) == (0, 0, 0, 0)
    assert second.skipped == 2
    assert_consistent(settings.db_path)


def test_appending_ten_messages_reembeds_at_most_two_windows(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    log = settings.roots[0] / "data" / "slack" / "eng.jsonl"
    with log.open("a") as handle:
        handle.write("\n".join(slack_lines(300, 10)) + "\n")
    stats = reindex(settings=settings)
    assert stats.files == 1
    assert 1 <= stats.embedded <= 2
    assert stats.deleted_chunks <= 1
    assert stats.unchanged_chunks >= 25
    assert_consistent(settings.db_path)


def test_inserting_messages_in_the_middle_keeps_most_ids(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    log = settings.roots[0] / "data" / "slack" / "eng.jsonl"
    lines = log.read_text().splitlines()
    extra = json.dumps(
        {
            "ts": f"{BASE_TS + 150 * 60 + 5}.000100",
            "channel": "eng",
            "user_name": "Jonas",
            "text": "an unrelated message in the middle",
        }
    )
    log.write_text("\n".join(lines[:150] + [extra] + lines[150:]) + "\n")
    stats = reindex(settings=settings)
    assert stats.embedded <= 3
    assert_consistent(settings.db_path)


def test_editing_one_section_reembeds_one_chunk(settings_factory: Callable[..., Settings]) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    note = settings.roots[0] / "notes" / "garden.md"
    note.write_text(
        note.read_text().replace("Climbing beans need poles.", "Climbing beans need tall poles.")
    )
    stats = reindex(settings=settings)
    assert (stats.embedded, stats.deleted_chunks, stats.unchanged_chunks) == (1, 1, 2)
    assert_consistent(settings.db_path)


def test_deleting_a_file_removes_its_chunks_fts_rows_and_vectors(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    conn = db.connect(settings.db_path)
    before = db.counts(conn)
    (settings.roots[0] / "notes" / "garden.md").unlink()
    stats = reindex(settings=settings)
    after = db.counts(conn)
    assert stats.deleted_chunks == 3 and stats.deleted_files == 1
    assert after.chunks == before.chunks - 3 == after.fts == after.vectors
    hits = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'basil'")
    assert hits.fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM index_state").fetchone()[0] == 1
    conn.close()
    assert_consistent(settings.db_path)


def test_reindex_of_named_paths_only_touches_them(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    note = settings.roots[0] / "notes" / "garden.md"
    note.write_text(note.read_text() + "# Onions\nSet onions in April.\n")
    stats = reindex([note], settings=settings)
    assert stats.files == 1 and stats.embedded == 1
    note.unlink()
    stats = reindex([note], settings=settings)
    assert stats.deleted_chunks == 4
    assert_consistent(settings.db_path)


def test_bad_files_are_recorded_and_skipped(settings_factory: Callable[..., Settings]) -> None:
    settings = settings_factory(embedder__name="hashing", max_file_bytes=100_000)
    root = settings.roots[0]
    write_layer(root)
    (root / "data" / "slack" / "binary.jsonl").write_bytes(b"\x00\x01\x02garbage\xff" * 10)
    (root / "data" / "slack" / "empty.jsonl").write_bytes(b"")
    (root / "data" / "slack" / "huge.jsonl").write_text("\n".join(slack_lines(0, 2000)))
    (root / "notes" / "latin1.md").write_bytes(
        "# Café\nCrème brûlée à la française".encode("cp1252")
    )
    (root / "data" / "slack" / "mixed.jsonl").write_text(
        slack_lines(0, 1)[0] + "\nnot json\n[1, 2]\n" + slack_lines(1, 1)[0] + "\n"
    )
    stats = reindex(settings=settings)
    errors = dict(stats.errors)
    assert "binary" in errors[str(root / "data" / "slack" / "binary.jsonl")]
    assert "larger than" in errors[str(root / "data" / "slack" / "huge.jsonl")]
    assert "line 2" in errors[str(root / "data" / "slack" / "mixed.jsonl")]
    conn = db.connect(settings.db_path)
    files = dict(conn.execute("SELECT source_file, count(*) FROM chunks GROUP BY 1").fetchall())
    state = dict(conn.execute("SELECT source_file, error FROM index_state").fetchall())
    conn.close()
    assert files[str(root / "notes" / "latin1.md")] == 1
    assert files[str(root / "data" / "slack" / "mixed.jsonl")] == 1
    assert files[str(root / "data" / "slack" / "eng.jsonl")] > 20
    assert state[str(root / "data" / "slack" / "binary.jsonl")]
    assert state[str(root / "data" / "slack" / "empty.jsonl")] is None
    # A recorded failure is not retried until the file changes.
    again = reindex(settings=settings)
    assert again.files == 0 and not again.errors
    assert_consistent(settings.db_path)


def test_index_file_is_private(settings_factory: Callable[..., Settings]) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    assert settings.db_path.stat().st_mode & 0o077 == 0

"""A one-shot reindex leaves the index known sound (`memex.db.sound`): the next one skips the
integrity gate while the file and its WAL are as it left them, and reads the file again once
anything else wrote to it. Changed, added and removed files are seen all the same."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db, sound_marker
from tests.conftest import make_settings
from tests.test_damaged_index import overwrite_pages
from tests.test_indexing import write_layer


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    root = tmp_path / "root"
    root.mkdir()
    write_layer(root)
    for i in range(20):  # pages enough that the middle of the file is data
        (root / "notes" / f"n{i}.md").write_text(f"# Note {i}\n" + f"Turnips, row {i}. " * 60)
    (tmp_path / "index").mkdir()
    return make_settings(root, tmp_path / "index" / "memex.db", embedder__name="hashing")


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each quick check of the integrity gate, by file."""
    done: list[Path] = []
    real = db.quick_check

    def counted(conn: apsw.Connection) -> str | None:
        done.append(Path(conn.filename))
        return real(conn)

    monkeypatch.setattr(db, "quick_check", counted)
    return done


def test_a_reindex_with_nothing_changed_does_not_read_the_whole_file_again(
    settings: Settings, checks: list[Path]
) -> None:
    first = reindex(settings=settings)
    again = reindex(settings=settings)
    assert len(checks) == 1  # the first run's gate only
    assert first.files > 0 and again.files == 0 and again.skipped == first.files
    marker = sound_marker.marker_path(settings.db_path)
    assert marker.stat().st_mode & 0o777 == 0o600


def test_changed_added_and_removed_files_are_seen_without_the_check(
    settings: Settings, checks: list[Path]
) -> None:
    reindex(settings=settings)
    notes = Path(settings.roots[0]) / "notes"
    (notes / "n1.md").write_text("# Note 1\nParsnips now, and longer than before.\n")
    (notes / "new.md").write_text("# New\nBeetroot.\n")
    (notes / "n2.md").unlink()
    stats = reindex(settings=settings)
    assert (stats.files, stats.deleted_files) == (2, 1)
    conn = db.connect(settings.db_path, create=False)
    try:
        found = {r[0] for r in conn.execute("SELECT source_file FROM chunks")}
    finally:
        conn.close()
    assert str(notes / "new.md") in found and str(notes / "n2.md") not in found
    assert len(checks) == 1


def test_a_file_written_by_another_program_is_checked_again(settings: Settings) -> None:
    reindex(settings=settings)
    assert sound_marker.known_sound(settings.db_path)
    overwrite_pages(settings.db_path)  # a bad sector, or another program's bytes
    assert not sound_marker.known_sound(settings.db_path)
    with pytest.raises(db.IndexDamaged):
        reindex(settings=settings)


def test_a_readers_last_checkpoint_makes_the_next_writer_check(
    settings: Settings, checks: list[Path]
) -> None:
    reader = db.connect(settings.db_path)  # a warm server's connection, open throughout
    reindex(settings=settings)
    reader.execute("SELECT count(*) FROM chunks").fetchall()
    reindex(settings=settings)
    assert len(checks) == 1  # the WAL the first run left is the same
    reader.close()  # the last connection: SQLite checkpoints the WAL into the file
    reindex(settings=settings)
    assert len(checks) == 2


def test_a_marker_that_is_not_one_is_no_marker(settings: Settings, checks: list[Path]) -> None:
    reindex(settings=settings)
    sound_marker.marker_path(settings.db_path).write_text("not json")
    assert not sound_marker.known_sound(settings.db_path)
    reindex(settings=settings)
    assert len(checks) == 2
    assert sound_marker.known_sound(settings.db_path)  # written again by the sound run

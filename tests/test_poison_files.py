"""A file can fail, never the run: any exception of a read or an extractor is that file's error.

Also the kinds of file that are read at all (regular files only; symlinks out of the roots
skipped unless configured), and a failed read that is retried once the file reads again.
"""

from __future__ import annotations

import csv
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path, PurePath

import pytest

from engine.extractors import NO_SIBLINGS, Extraction, Siblings
from engine.extractors.registry import REGISTRY
from engine.index.indexer import Action, Indexer
from engine.index.routes import classify
from engine.index.runs import open_writer, reindex
from engine.records import IndexStats
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent

GOOD_DAY = '{"calendarDate": "2024-03-11", "totalSteps": 9000, "restingHeartRate": 52}'


def chunk_texts(settings: Settings) -> dict[str, list[str]]:
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT source_file, content FROM chunks ORDER BY seq").fetchall()
    finally:
        conn.close()
    out: dict[str, list[str]] = {}
    for path, content in rows:
        out.setdefault(Path(path).name, []).append(content)
    return out


def state_of(settings: Settings, path: Path) -> tuple[float, int, str | None]:
    conn = db.connect(settings.db_path, create=False)
    try:
        row = conn.execute(
            "SELECT mtime, size, error FROM index_state WHERE source_file = ?", (str(path),)
        ).fetchone()
    finally:
        conn.close()
    return row[0], row[1], row[2]


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


def notes(settings: Settings, **files: str) -> Path:
    folder = settings.roots[0] / "notes"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.md").write_text(text)
    return folder


@pytest.mark.parametrize(
    "error",
    [
        RecursionError("maximum recursion depth exceeded"),
        OverflowError(),
        AttributeError("'NoneType' object has no attribute 'groupdict'"),
        csv.Error("field larger than field limit (131072)"),
        MemoryError(),
        LookupError("unknown encoding"),
        AssertionError(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_any_exception_of_an_extractor_is_that_files_error(
    hashing: Settings, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    real = REGISTRY["note"]

    def poisoned(data: bytes, path: PurePath, siblings: Siblings = NO_SIBLINGS, /) -> Extraction:
        if path.name == "poison.md":
            raise error
        return real(data, path, siblings)

    monkeypatch.setitem(REGISTRY, "note", poisoned)
    folder = notes(hashing, a="# A\nBefore the poison.\n", poison="# P\nx\n", z="# Z\nAfter it.\n")
    stats = reindex(settings=hashing)
    errors = dict(stats.errors)
    message = errors[str(folder / "poison.md")]
    assert message.startswith("something in it is not what Memex's Note reader expects")
    assert type(error).__name__ not in message and (not str(error) or str(error) not in message)
    assert set(chunk_texts(hashing)) == {"a.md", "z.md"}  # the rest of the run went on
    assert state_of(hashing, folder / "poison.md")[2] == message
    assert_consistent(hashing.db_path)


def test_a_poison_file_in_a_watcher_batch_does_not_lose_the_edit_beside_it(
    hashing: Settings,
) -> None:
    """The watcher indexes a debounce batch as one `index_paths` call: one poison file in it
    must not cost the other files their update."""
    folder = hashing.roots[0] / "data" / "garmin"
    folder.mkdir(parents=True)
    poison, edited = folder / "2024-03-10.json", folder / "2024-03-11.json"
    poison.write_text("[" * 100_000)
    edited.write_text(GOOD_DAY)
    stats = reindex([poison, edited], settings=hashing)
    assert list(dict(stats.errors)) == [str(poison)]
    assert set(chunk_texts(hashing)) == {"2024-03-11.json"}


def test_a_deeply_nested_garmin_file_does_not_stop_the_run(hashing: Settings) -> None:
    folder = hashing.roots[0] / "data" / "garmin"
    folder.mkdir(parents=True)
    (folder / "2024-03-10.json").write_text("[" * 100_000)
    (folder / "2024-03-11.json").write_text(GOOD_DAY)
    stats = reindex(settings=hashing)
    assert "nested" in dict(stats.errors)[str(folder / "2024-03-10.json")]
    assert set(chunk_texts(hashing)) == {"2024-03-11.json"}


def test_a_failed_read_is_retried_and_keeps_the_old_chunks(hashing: Settings) -> None:
    """A read that fails (gone, permissions, I/O) does not record the file as read: once it
    reads again with the same mtime and size (a chmod changes neither), it is indexed."""
    folder = notes(hashing, trip="# Ferry\nThe ferry leaves at nine.\n")
    note = folder / "trip.md"
    reindex(settings=hashing)
    note.write_text("# Ferry\nThe ferry leaves at ten!\n")
    found = classify(note, hashing)
    assert found is not None
    hidden = note.with_name("trip.md.hidden")
    conn = open_writer(hashing)
    try:
        indexer = Indexer(hashing, conn, None)
        note.rename(hidden)  # the read fails after the scan saw the new mtime and size
        failed = indexer.index_file(found)
        assert failed.action is Action.ERROR and "was gone when it was read" in failed.message
        assert chunk_texts(hashing)["trip.md"] == [
            "Note: trip\nSection: Ferry\n\nThe ferry leaves at nine."
        ]
        hidden.rename(note)
        again = classify(note, hashing)
        assert again is not None and (again.mtime, again.size) == (found.mtime, found.size)
        assert indexer.index_file(again).action is Action.INDEXED
    finally:
        conn.close()
    assert chunk_texts(hashing)["trip.md"] == [
        "Note: trip\nSection: Ferry\n\nThe ferry leaves at ten!"
    ]
    assert state_of(hashing, note) == (found.mtime, found.size, None)


def _reindex_in_thread(settings: Settings, fifo: Path) -> IndexStats | None:
    """The run's stats if it finished by itself; a blocked read is released before returning."""
    results: list[IndexStats] = []
    worker = threading.Thread(
        target=lambda: results.append(reindex(settings=settings)), daemon=True
    )
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # unblock the reader so that the test run can go on
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=30)
        return None
    return results[0] if results else None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_on_a_routed_path_does_not_block_the_run(hashing: Settings) -> None:
    folder = notes(hashing, a="# A\nA normal note.\n")
    fifo = folder / "pipe.md"
    os.mkfifo(fifo)
    stats = _reindex_in_thread(hashing, fifo)
    assert stats is not None
    assert "not a regular file" in dict(stats.errors)[str(fifo)]
    assert set(chunk_texts(hashing)) == {"a.md"}


def test_symlinks_out_of_the_roots_are_skipped_unless_configured(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\nThe password is swordfish.\n")
    settings = settings_factory(embedder__name="hashing")
    folder = notes(settings, inside="# Inside\nA note in the root.\n")
    (folder / "secret.md").symlink_to(outside / "secret.md")
    (folder / "alias.md").symlink_to(folder / "inside.md")  # inside the roots: indexed
    reindex(settings=settings)
    assert set(chunk_texts(settings)) == {"inside.md", "alias.md"}
    assert classify(folder / "secret.md", settings) is None  # the watcher's path agrees
    following = settings.with_values(follow_symlinks_outside_roots=True)
    reindex(settings=following)
    assert set(chunk_texts(settings)) == {"inside.md", "alias.md", "secret.md"}


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_symlink_to_a_device_is_never_read(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory(embedder__name="hashing", follow_symlinks_outside_roots=True)
    folder = notes(settings, a="# A\nA note.\n")
    (folder / "zero.md").symlink_to("/dev/zero")
    stats = reindex(settings=settings)
    assert "not a regular file" in dict(stats.errors)[str(folder / "zero.md")]
    assert set(chunk_texts(settings)) == {"a.md"}
    shutil.rmtree(folder)

"""The file watcher on a real watchdog observer: every kind of change, debounce, pause, fallback."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from engine.index import watcher as watcher_module
from engine.index.watcher import Watcher
from engine.index.writer import BatchResult
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent

DEADLINE = 20.0


def wait_for(predicate: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    """Poll until `predicate` holds or the deadline passes (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def contents(settings: Settings, path: Path) -> list[str]:
    """The indexed chunks of one file, read in one statement (one snapshot)."""
    if not settings.db_path.exists():
        return []
    conn = db.connect(settings.db_path, create=False)
    try:
        if not db.has_schema(conn):
            return []
        rows = conn.execute(
            "SELECT content FROM chunks WHERE source_file = ? ORDER BY ordinal", (str(path),)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def indexed_files(settings: Settings) -> set[str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        return {r[0] for r in conn.execute("SELECT source_file FROM index_state")}
    finally:
        conn.close()


def text_of(settings: Settings, path: Path) -> str:
    return "\n".join(contents(settings, path))


class Recorder:
    """Collects the watcher's callbacks from the writer thread."""

    def __init__(self) -> None:
        self.batches: list[BatchResult] = []
        self.errors: list[tuple[str, str]] = []
        self.notices: list[str] = []
        self.lock = threading.Lock()

    def indexed(self, batch: BatchResult) -> None:
        with self.lock:
            self.batches.append(batch)

    def error(self, path: str, message: str) -> None:
        with self.lock:
            self.errors.append((path, message))

    def notice(self, message: str) -> None:
        with self.lock:
            self.notices.append(message)

    def reindexes_of(self, path: Path) -> int:
        with self.lock:
            return sum(
                1
                for b in self.batches
                for c in b.changes
                if c.path == str(path) and c.action == "indexed"
            )


@pytest.fixture
def watch_settings(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing", watch__debounce_seconds=0.2)
    (settings.roots[0] / "notes").mkdir()
    return settings


@pytest.fixture
def watching(watch_settings: Settings) -> Iterator[tuple[Watcher, Recorder]]:
    recorder = Recorder()
    watcher = Watcher(
        watch_settings,
        on_indexed=recorder.indexed,
        on_error=recorder.error,
        on_notice=recorder.notice,
    )
    watcher.start()
    assert watcher.wait_idle(DEADLINE)
    yield watcher, recorder
    watcher.stop()


def test_create_modify_append_atomic_save_rename_delete(
    watch_settings: Settings, watching: tuple[Watcher, Recorder]
) -> None:
    s = watch_settings
    notes = s.roots[0] / "notes"
    note = notes / "a.md"
    note.write_text("# Alpha\n\napple orchard\n")
    assert wait_for(lambda: "apple" in text_of(s, note))

    note.write_text("# Alpha\n\nbanana boat\n")
    assert wait_for(lambda: "banana" in text_of(s, note) and "apple" not in text_of(s, note))

    with note.open("a") as handle:
        handle.write("\n## More\n\ncherry pie\n")
    assert wait_for(lambda: "cherry" in text_of(s, note))

    # Editors' atomic save: an unrouted temp file moved onto the target...
    temp = notes / ".a.md.swp-tmp"
    temp.write_text("# Alpha\n\ndate palm\n")
    os.replace(temp, note)
    assert wait_for(lambda: "date" in text_of(s, note) and "cherry" not in text_of(s, note))
    # ...and a temp name that a route would claim: it must not linger in the index.
    routed_temp = notes / "save-in-progress.md"
    routed_temp.write_text("# Alpha\n\nelderberry jam\n")
    os.replace(routed_temp, note)
    assert wait_for(lambda: "elderberry" in text_of(s, note))

    renamed = notes / "b.md"
    os.rename(note, renamed)
    assert wait_for(lambda: not contents(s, note) and "elderberry" in text_of(s, renamed))

    renamed.unlink()
    assert wait_for(lambda: not contents(s, renamed))
    watcher, recorder = watching
    assert watcher.wait_idle(DEADLINE)
    assert str(routed_temp) not in indexed_files(s) and not indexed_files(s)
    assert not recorder.errors
    assert_consistent(s.db_path)


def test_folder_rename_and_delete_follow_every_file(
    watch_settings: Settings, watching: tuple[Watcher, Recorder]
) -> None:
    s = watch_settings
    folder = s.roots[0] / "notes" / "projects"
    folder.mkdir()
    for i in range(3):
        (folder / f"p{i}.md").write_text(f"# P{i}\n\nproject {i} fig\n")
    assert wait_for(lambda: len(indexed_files(s)) == 3)
    moved = s.roots[0] / "notes" / "archive"
    os.rename(folder, moved)
    assert wait_for(lambda: indexed_files(s) == {str(moved / f"p{i}.md") for i in range(3)})
    for child in moved.iterdir():
        child.unlink()
    moved.rmdir()
    assert wait_for(lambda: not indexed_files(s))
    assert_consistent(s.db_path)


def test_temp_backup_and_index_files_are_ignored(settings_factory: Callable[..., Settings]) -> None:
    # The index lives inside the watched root: its own writes must not trigger anything.
    probe = settings_factory(embedder__name="hashing", watch__debounce_seconds=0.2)
    root = probe.roots[0]
    s = probe.with_values(db=str(root / "notes" / "memex.db"))
    (root / "notes").mkdir()
    recorder = Recorder()
    watcher = Watcher(s, on_indexed=recorder.indexed)
    watcher.start()
    try:
        assert watcher.wait_idle(DEADLINE)  # the start-up scan is done: what follows is events
        for name in ("x.md.tmp", "x.md~", ".#x.md", "x.md.bak", ".x.md.swp"):
            (root / "notes" / name).write_text("# junk\n\nkiwi\n")
        (root / "notes" / "real.md").write_text("# Real\n\nlime\n")
        assert wait_for(lambda: "lime" in text_of(s, root / "notes" / "real.md"))
        assert watcher.wait_idle(DEADLINE)
        assert indexed_files(s) == {str(root / "notes" / "real.md")}
        paths = {c.path for b in recorder.batches for c in b.changes}
        assert paths == {str(root / "notes" / "real.md")}
    finally:
        watcher.stop()


def test_two_hundred_rapid_appends_make_a_handful_of_reindexes(
    watch_settings: Settings, watching: tuple[Watcher, Recorder]
) -> None:
    s = watch_settings
    log = s.roots[0] / "notes" / "log.md"
    log.write_text("# Log\n\n")
    for i in range(200):
        with log.open("a") as handle:
            handle.write(f"entry {i} quokka{i}\n")
    assert wait_for(lambda: "quokka199" in text_of(s, log))
    watcher, recorder = watching
    assert watcher.wait_idle(DEADLINE)
    assert 1 <= recorder.reindexes_of(log) <= 10, recorder.reindexes_of(log)


def test_a_file_that_never_goes_quiet_is_still_indexed(
    watch_settings: Settings, watching: tuple[Watcher, Recorder]
) -> None:
    s = watch_settings
    log = s.roots[0] / "notes" / "busy.md"
    log.write_text("# Busy\n\n")
    stop = threading.Event()

    def append_nonstop() -> None:
        i = 0
        while not stop.is_set():
            with log.open("a") as handle:
                handle.write(f"line {i} wombat\n")
            i += 1
            time.sleep(0.05)  # always inside the 0.2 s debounce

    appender = threading.Thread(target=append_nonstop)
    appender.start()
    try:
        # Flushed after at most 10 debounce periods even though the file never goes quiet.
        assert wait_for(lambda: "wombat" in text_of(s, log))
        assert appender.is_alive()
    finally:
        stop.set()
        appender.join()


def test_pause_holds_changes_and_resume_catches_up(
    watch_settings: Settings, watching: tuple[Watcher, Recorder]
) -> None:
    s = watch_settings
    watcher, _ = watching
    watcher.pause()
    note = s.roots[0] / "notes" / "paused.md"
    note.write_text("# Paused\n\nmango\n")
    # Let the debounce pass several times over (the quiet period, not a speed assertion).
    assert not wait_for(lambda: bool(contents(s, note)), timeout=1.0)
    watcher.resume()
    assert wait_for(lambda: "mango" in text_of(s, note))


def test_inotify_limit_falls_back_to_polling(
    watch_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Exhausted:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watcher_module, "Observer", Exhausted)
    recorder = Recorder()
    watcher = Watcher(watch_settings, on_indexed=recorder.indexed, on_notice=recorder.notice)
    watcher.start()
    try:
        assert watcher.polling
        assert any("polling" in n for n in recorder.notices)
        assert watcher.wait_idle(DEADLINE)
        note = watch_settings.roots[0] / "notes" / "polled.md"
        note.write_text("# Polled\n\npapaya\n")
        assert wait_for(lambda: "papaya" in text_of(watch_settings, note))
    finally:
        watcher.stop()


def test_a_dead_polling_emitter_is_restarted(watch_settings: Settings) -> None:
    s = watch_settings.with_values(watch__polling=True)
    recorder = Recorder()
    watcher = Watcher(s, on_indexed=recorder.indexed, on_notice=recorder.notice)
    watcher.start()
    try:
        assert watcher.wait_idle(DEADLINE)
        observer = watcher._observer
        assert observer is not None
        for emitter in list(observer.emitters):
            emitter.stop()  # what a crash inside the polling thread looks like from outside
        assert wait_for(lambda: watcher.restarts >= 1)
        note = s.roots[0] / "notes" / "after-restart.md"
        note.write_text("# After\n\nquince\n")
        assert wait_for(lambda: "quince" in text_of(s, note))
        assert any("restarting" in n for n in recorder.notices)
    finally:
        watcher.stop()


WATCH_CHILD = "import sys; from engine.cli import main; sys.exit(main())"


class Lines:
    """Reads a child's stdout on a thread, so the test can wait for a line with a deadline."""

    def __init__(self, child: subprocess.Popen[str]) -> None:
        assert child.stdout is not None
        self.stream = child.stdout
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.stream:
            self.lines.append(line)

    def wait(self, *needles: str) -> bool:
        return wait_for(lambda: any(all(n in line for n in needles) for line in self.lines))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_memex_watch_logs_changes_and_stops_on_signals(
    watch_settings: Settings, signum: int
) -> None:
    s = watch_settings
    config = s.db_path.parent / "watch.toml"
    config.write_text('[embedder]\nname = "hashing"\n')
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            WATCH_CHILD,
            "watch",
            "--root",
            str(s.roots[0]),
            "--db",
            str(s.db_path),
            "--config",
            str(config),
            "--debounce",
            "0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    ) as child:
        try:
            lines = Lines(child)
            assert lines.wait("watching"), lines.lines
            (s.roots[0] / "notes" / "cli.md").write_text("# CLI\n\nnectarine\n")
            assert lines.wait("indexed", "cli.md"), lines.lines
            child.send_signal(signum)
            child.wait(timeout=DEADLINE)
            lines.thread.join(timeout=DEADLINE)
        finally:
            if child.poll() is None:
                child.kill()
            assert child.stderr is not None
            err = child.stderr.read()
    assert child.returncode == 0, err
    assert lines.wait("stopped"), lines.lines
    assert_consistent(s.db_path)


def test_a_failed_batch_says_what_the_disk_or_the_lock_did(tmp_path: Path) -> None:
    from engine.index.watcher import failure_text

    index = tmp_path / "memex.db"
    full = failure_text(index, apsw.FullError("database or disk is full"))
    assert "is the disk full?" in full and "FullError" not in full
    busy = failure_text(index, apsw.BusyError("database is locked"))
    assert str(index) in busy and "busy" in busy and "BusyError" not in busy
    assert failure_text(index, ValueError("odd")) == "ValueError: odd"  # anything else as is

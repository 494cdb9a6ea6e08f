"""The one-writer lock beside the index file (`memex.db.lock`), and waiting for it.

Every writer — `memex watch`, a reindex, the desktop app, maintenance — holds it while it
writes (`filelock`: an OS lock, released by the kernel even on `kill -9`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from engine.settings import Settings
from engine.store import db

WAITING_FOR_WRITER = (
    "waiting: another memex (memex watch, the desktop app or a reindex) is writing the index"
)
WAITING_FOR_LOCK = "waiting: another program holds the index's write lock"
Notify = Callable[[str], None]


def writer_lock(settings: Settings) -> FileLock:
    """The one-writer lock beside the index file; IndexError_ when that folder cannot be
    written (a read-only folder: the lock could never be taken, it would wait forever), and
    NotMemexIndex when the file is another program's: no lock file is made beside it."""
    path = settings.db_path
    lock = Path(str(path) + ".lock")
    db.claim(path, build=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(lock, os.O_RDWR | os.O_CREAT, 0o644))
    except OSError as exc:
        raise db.unwritable(path, exc) from None
    return FileLock(str(lock))


BUSY_WRITER = "another writer (memex watch, a reindex or the desktop app) is using the index"


@contextmanager
def writer_lock_now(settings: Settings, refused: type[Exception], advice: str) -> Iterator[None]:
    """Hold the one-writer lock without waiting; `refused` ("another writer …; <advice>")
    is raised at once when another writer has it (maintenance and repair do not queue
    behind a long run)."""
    lock = writer_lock(settings)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise refused(f"{BUSY_WRITER}; {advice}") from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def holding_writer_lock(settings: Settings, on_wait: Notify | None = None) -> Iterator[None]:
    """The writer lock, waiting for it as long as another writer holds it; `on_wait` is
    told once when it must wait."""
    lock = writer_lock(settings)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait is not None:
            on_wait(WAITING_FOR_WRITER)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()

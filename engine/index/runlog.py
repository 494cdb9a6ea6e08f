"""The run log: one JSON line per reindex, watcher batch and maintenance run.

The file lives at `settings.log_path` (the platform log folder unless `log_dir` is set). It is
append-only; when it passes `MAX_BYTES` it is renamed to `runs.jsonl.1` (one generation kept).
A log that cannot be written never fails the run it describes.

Several indexes can share one log (the default folder is per user, not per index): each record
names its index (`db`, the index file's real path) and the readers return only the records of
the index they are asked about. Records of older versions name no index and are skipped.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from engine.settings import Settings

MAX_BYTES = 5 * 1024 * 1024
TAIL_BYTES = 64 * 1024

_append_lock = threading.Lock()


def make_record(kind: str, **fields: Any) -> dict[str, Any]:
    """A log record: timestamp and kind first, then the given fields."""
    return {
        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "ts": round(time.time(), 3),
        "kind": kind,
        **fields,
    }


def append(settings: Settings, record: dict[str, Any]) -> None:
    """Append one record as a JSON line; rotate a large log; never raise on I/O errors."""
    path = settings.log_path
    line = json.dumps({**record, "db": index_key(settings)}, ensure_ascii=False, default=str)
    line += "\n"
    with _append_lock:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.stat().st_size > MAX_BYTES:
                os.replace(path, path.with_name(path.name + ".1"))
            with _open_private(path) as handle:
                handle.write(line)
        except OSError:
            pass


def _open_private(path: Path) -> TextIO:
    """The log for appending, created 0600: it names files and quotes their errors. A log
    left readable by an older version is made private too."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if hasattr(os, "fchmod") and os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
        return open(fd, "a", encoding="utf-8")
    except OSError:
        os.close(fd)
        raise


def index_key(settings: Settings) -> str:
    """How a record names its index: the real path of the index file."""
    return os.path.realpath(settings.db_path)


def read_runs(settings: Settings, limit: int = 20) -> list[dict[str, Any]]:
    """This index's last `limit` records, oldest first; unreadable lines are skipped."""
    return _own_records(settings)[-limit:]


def last_run(settings: Settings, kinds: tuple[str, ...] | None = None) -> dict[str, Any] | None:
    """This index's newest record (of one of `kinds`, if given), or None."""
    for record in reversed(_own_records(settings)):
        if kinds is None or record.get("kind") in kinds:
            return dict(record)
    return None


def _own_records(settings: Settings) -> list[dict[str, Any]]:
    key = index_key(settings)
    return [r for r in _tail(settings.log_path) if r.get("db") == key]


def _tail(path: Path) -> list[dict[str, Any]]:
    """The records in the last `TAIL_BYTES` of the log."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read()
    except OSError:
        return []
    records = []
    for raw in data.splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # a partial first line of the tail, or a line cut by a crash
        if isinstance(value, dict):
            records.append(value)
    return records

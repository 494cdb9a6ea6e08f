"""Damage once found is remembered: a small file beside the index, `memex.db.damaged`.

SQLite finds a damaged page only by reading it, and a search reads few pages; so when any
command finds the index damaged, it writes this marker (0600, JSON: SQLite's reason, when,
and the index file's identity), and every later open of the index, readers included, refuses
the file from the marker alone (one `stat` when there is none). The identity is the index
file's device, inode, size and modification time: a file restored from a backup or rebuilt
by `memex maintenance --repair` no longer matches, and its stale marker is removed and
ignored. A marker that cannot be written (a read-only folder) is not written: the damage is
still reported, the next command finds it again.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

SUFFIX = ".damaged"
IDENTITY = ("st_dev", "st_ino", "st_size", "st_mtime_ns")
MAX_BYTES = 64 * 1024  # a marker is a few hundred bytes: anything longer is not one


def marker_path(index: Path) -> Path:
    """Where the damage of `index` is remembered: `memex.db` → `memex.db.damaged`."""
    return Path(os.fspath(index) + SUFFIX)


def identity(index: Path) -> dict[str, int] | None:
    """The index file's identity (device, inode, size, mtime), None when it is gone."""
    try:
        st = index.stat()
    except OSError:
        return None
    return {field: int(getattr(st, field)) for field in IDENTITY}


def remember(index: Path, reason: str) -> None:
    """Write the marker for `index` (atomically, 0600); nothing when it cannot be written,
    or when the file's damage is remembered already (the first finding is the one told)."""
    found = identity(index)
    if found is None or remembered(index) is not None:
        return
    record = {"reason": reason, "found": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    text = json.dumps({**record, "file": found}, indent=1) + "\n"
    marker = marker_path(index)
    try:
        # 0600; named like the index's own files, which the watcher ignores
        fd, partial = tempfile.mkstemp(prefix=f"{marker.name}.", suffix=".tmp", dir=marker.parent)
    except OSError:
        return  # a read-only folder: the damage is still reported, only not remembered
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, marker)
    except OSError:
        Path(partial).unlink(missing_ok=True)


def forget(index: Path) -> None:
    """Remove the marker of `index` (found sound, rebuilt); nothing when there is none."""
    with contextlib.suppress(OSError):  # a read-only folder: the identity still tells
        marker_path(index).unlink(missing_ok=True)


def remembered(index: Path) -> str | None:
    """SQLite's reason when `index` was found damaged and is still the same file; None
    when there is no marker (one stat, a few µs), or a stale or unreadable one (a stale
    one is removed)."""
    marker = os.fspath(index) + SUFFIX
    try:
        os.stat(marker)  # the common case ends here: no marker
        with open(marker, encoding="utf-8") as f:
            text = f.read(MAX_BYTES)
    except (OSError, UnicodeDecodeError):
        return None  # none, or unreadable: the gated commands find the damage again
    record = _parse(text)
    if record is None or record["file"] != identity(index):
        forget(index)
        return None
    return str(record["reason"])


def _parse(text: str) -> dict[str, Any] | None:
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("file"), dict):
        return None
    return record if isinstance(record.get("reason"), str) else None

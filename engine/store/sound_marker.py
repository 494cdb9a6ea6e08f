"""The index file as a writer left it, known sound: a small file beside it, `memex.db.sound`.

The integrity gate reads every page of the index (`PRAGMA quick_check`: 0.6 s for a 340 MB
index of 100,000 chunks), which a `memex reindex` that finds nothing changed would
otherwise spend on every run. A one-shot reindex that opened a sound file (checked by the
gate, or known sound by this marker) and wrote to it only through SQLite leaves it sound:
once it has closed its connection, it writes this marker (0600, JSON) with the identities
of the index file and of its WAL (device, inode, size, modification time; None for a WAL
that is not there or empty). The next writer that finds both unchanged knows that nothing
else has written to the file since, and skips the check; any other write (another
program's bytes, a restored backup, the desktop's writer, a reader's final checkpoint)
changes an identity, and the gate reads the file again. Damage found anywhere is
remembered by `damage_marker`, which every open looks at first. A marker that cannot be
read or written is no marker: the gate runs.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from engine.store.damage_marker import MAX_BYTES, identity

SUFFIX = ".sound"
WAL = "-wal"


def marker_path(index: Path) -> Path:
    """Where `index` is remembered sound: `memex.db` → `memex.db.sound`."""
    return Path(os.fspath(index) + SUFFIX)


def _identities(index: Path) -> dict[str, Any]:
    wal = identity(Path(os.fspath(index) + WAL))
    # An empty WAL holds nothing of the file (a reader's first read makes one): as none.
    return {"file": identity(index), "wal": wal if wal and wal["st_size"] else None}


def remember(index: Path) -> None:
    """Write the marker for `index` as it is now (atomically, 0600); nothing when it
    cannot be written (a read-only folder: the next writer checks the file again)."""
    now = _identities(index)
    if now["file"] is None:
        return
    marker = marker_path(index)
    try:
        fd, partial = tempfile.mkstemp(prefix=f"{marker.name}.", suffix=".tmp", dir=marker.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(now, indent=1) + "\n")
        os.replace(partial, marker)
    except OSError:
        Path(partial).unlink(missing_ok=True)


def known_sound(index: Path) -> bool:
    """Whether `index` and its WAL are as the last writer that knew them sound left them
    (three stats when there is a marker; one when there is none)."""
    try:
        with open(marker_path(index), encoding="utf-8") as f:
            text = f.read(MAX_BYTES)
        record = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    now = _identities(index)
    return now["file"] is not None and record == now

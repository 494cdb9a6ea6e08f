"""Giving freed heap memory back to the system after a big load.

Reading the postings or the vectors makes hundreds of MB of short-lived buffers. glibc's
malloc keeps what they freed in its heap (its mmap threshold rises after the first large
free, so later large buffers come from the heap too), and a warm process's RSS then stays
far above what it holds: at 100k chunks 732 MB of anonymous memory after both loads, 522 MB
after `malloc_trim(0)`, 390 MB once the two connections' page caches were shrunk too
(docs/benchmarks.md, "Speed at 100k and 1M"). Elsewhere (macOS, Windows, musl) there is no
malloc_trim to call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache

import apsw

from engine.store.sql import database


@cache
def _trim() -> ctypes._NamedFuncPointer | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def after_load(conn: apsw.Connection) -> bool:
    """After a read of the whole index on `conn`: its page cache (up to 64 MB of pages no
    query reads again) freed, and the heap's freed memory given back (glibc; True when it
    was asked)."""
    conn.execute(database.shrink_memory_sql())
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True

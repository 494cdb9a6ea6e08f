"""What query-time numeric work runs on: BLAS held to one thread, and the helper thread
that takes half of a large binary scan. One `Compute` per `Engine` (engine/core.py), made
when its first Searcher or vector cache is, passed down to them and closed with the engine;
a Searcher or a vector cache made on its own makes one of its own and closes it.

Nothing here is kept at module level: two engines in one process hold two of these. The
BLAS thread count itself is the process's (OpenBLAS has one pool); two limiters held at
once can only leave it at one thread for a moment longer, which changes no result.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from engine.search.retrieve.blas import OneBlasThread


class Compute:
    """`blas`: the limiter to hold around matrix-vector products; `helper()`: the scan's
    second thread, made on first use (None on one core or once closed)."""

    def __init__(self) -> None:
        self.blas = OneBlasThread()
        self._helper: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def helper(self) -> ThreadPoolExecutor | None:
        """The thread that scans the second half of a large binary copy."""
        if self._helper is not None:
            return self._helper
        with self._lock:
            if self._helper is None and not self._closed and (os.cpu_count() or 1) > 1:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="memex-scan")
            return self._helper

    def close(self) -> None:
        """Stop the helper thread (a scan still on it finishes first). Idempotent; later
        scans run on one thread."""
        with self._lock:
            self._closed = True
            helper, self._helper = self._helper, None
        if helper is not None:
            helper.shutdown(wait=True)

    @property
    def closed(self) -> bool:
        return self._closed

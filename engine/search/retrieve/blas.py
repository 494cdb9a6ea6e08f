"""BLAS held to one thread around the query-time matrix-vector products.

Such a product is memory-bound: a second BLAS thread buys little, and when another process
holds a core, OpenBLAS's threads spin-wait for it, which makes a scan several times slower
than on one thread (bench/vector_scale.py measures both). threadpoolctl's
`threadpool_limits` context manager finds the loaded libraries and reads their state on
every entry (bench/blas_limit.py measures what that costs per call); `OneBlasThread` finds
them once and then only sets and restores the thread count, which the results do not
depend on (the product is the same sum, computed by one thread).

OpenBLAS (pthreads) has one process-wide pool, so the limit is process-wide while held: a
depth counter keeps it until the last of several threads inside a `with` block leaves.
OpenBLAS 0.3.31 ignores a request to raise the count made from a thread other than the
main one (checked here; threadpoolctl's own limiters restore the same way), so in a process
whose searches run on worker threads (the desktop's read pool) the count stays at one once
a search ran; the engine does no other BLAS work that a second thread would speed up.

A limiter is made once per engine (`engine.search.retrieve.compute.Compute`, which the Engine owns),
not per call: finding the libraries costs more than a small product.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from threadpoolctl import ThreadpoolController


class OneBlasThread:
    """A reusable context manager: inside it, every loaded BLAS library uses one thread."""

    def __init__(self) -> None:
        self._libraries: list[Any] | None = None  # found on first entry (a walk, once)
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: list[int] = []

    def __enter__(self) -> OneBlasThread:
        with self._lock:
            if self._libraries is None:
                found = ThreadpoolController().select(user_api="blas").lib_controllers
                self._libraries = list(found)
            if self._depth == 0:
                self._saved = [int(lib.num_threads) for lib in self._libraries]
                for lib, threads in zip(self._libraries, self._saved, strict=True):
                    if threads != 1:
                        lib.set_num_threads(1)
            self._depth += 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for lib, threads in zip(self._libraries or [], self._saved, strict=True):
                    if threads != 1:
                        lib.set_num_threads(threads)

"""The app's garbage collection runs on the window's thread only (desktop/collector.py)."""

from __future__ import annotations

import gc
import threading
from typing import Any

from desktop.collector import GuiThreadCollector


def test_collections_run_on_the_gui_thread_and_never_on_another(qapp: Any) -> None:
    threads: list[str] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            threads.append(threading.current_thread().name)

    gc.collect()
    collector = GuiThreadCollector(interval_ms=10_000)
    gc.callbacks.append(seen)
    try:
        assert not gc.isenabled()

        def allocate() -> None:  # far past generation 0's threshold, on another thread
            for _ in range(20 * gc.get_threshold()[0]):
                holder: dict[str, object] = {}
                holder["self"] = holder  # a cycle only a collection frees

        worker = threading.Thread(target=allocate, name="memex-read-0")
        worker.start(), worker.join()
        assert threads == []  # the worker's allocations collected nothing
        assert collector.collect() >= 0 and sum(collector.collections) == 1
        assert threads == [threading.current_thread().name]
        assert collector.collect() == -1  # nothing past a threshold since: nothing run
    finally:
        gc.callbacks.remove(seen)
        collector.stop()
    assert gc.isenabled()

"""Python's cyclic garbage collected on the window's thread, never on a search thread.

CPython runs a collection on whichever thread happens to allocate past a threshold. In the
app that is often a read-pool or indexing thread; a cycle it frees that holds a Qt object
(a widget and the lambda connected to its signal, say) deletes that object off the thread it
lives on, and Qt crashes the process. So the app turns the automatic collection off and
runs the same generational collections itself from a timer on the window's thread, by the
thresholds Python would use: nothing is collected later than about `INTERVAL_MS`, and only
here. Reference counting, which frees almost everything, is not changed.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 1000


class GuiThreadCollector(QObject):
    """Turns automatic collection off while it lives and collects from its timer."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.collections = [0, 0, 0]  # runs per generation, for tests and status
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self, interval=interval_ms)
        self._timer.timeout.connect(self.collect)
        self._timer.start()

    def collect(self) -> int:
        """The oldest generation past its threshold collected (as CPython picks it), or
        nothing; the generation run, or -1."""
        thresholds, counts = gc.get_threshold(), gc.get_count()
        generation = -1
        for g in range(3):
            if counts[g] > thresholds[g] and (g == 0 or thresholds[g]):
                generation = g
        if generation >= 0:
            gc.collect(generation)
            self.collections[generation] += 1
        return generation

    def stop(self) -> None:
        """Hand collection back to Python (as it was before) and stop the timer."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()

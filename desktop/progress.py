"""What the writer is doing, as the tray and the window show it: a job, or vectors filling in.

The vector phase reports per slice (engine/index/embedding.py); `EmbeddingRate` sums the
slices into one count, rate and time left ("Embedding 4,000/10,000 — about 12 min left").
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class WorkState:
    """What the writer is doing, for the tray tooltip and the status line."""

    label: str = ""  # "" when idle
    done: int = 0
    total: int = 0
    detail: str = ""  # "about 12 min left"

    def describe(self) -> str:
        """One line for a tooltip: "Embedding 4,000/10,000 — about 12 min left"."""
        text = self.label + (f" {self.done:,}/{self.total:,}" if self.total else "…")
        return text + (f" — {self.detail}" if self.detail else "")


EMBEDDING = "Embedding"


def progress_words(state: WorkState) -> str:
    """The words beside the bar: "files 120 of 1,200" while files are read, then "vectors
    40% — about 2 min left"; "" for other work (its tooltip says what it is)."""
    if state.label == EMBEDDING:
        share = f"{state.done / state.total:.0%}" if state.total else "…"
        return f"vectors {share} — {state.detail or 'starting'}"
    if state.total and state.label.startswith(("Reindexing", "Updating")):
        return f"files {state.done:,} of {state.total:,}"
    return ""


class EmbeddingRate:
    """The vector phase's rate and time left, from the writer's successive reports; each
    slice of the phase counts from zero again, so reports are summed across slices."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.embedded = 0  # over every slice so far
        self._slice_done = 0

    def add(self, done: int, total: int) -> WorkState:
        if done < self._slice_done:  # a new slice
            self._slice_done = 0
        self.embedded += done - self._slice_done
        self._slice_done = done
        left = max(0, total - done)
        elapsed = time.monotonic() - self.started
        rate = self.embedded / elapsed if elapsed > 0 else 0.0
        detail = f"about {_duration(left / rate)} left" if rate > 0 and left else ""
        return WorkState(EMBEDDING, self.embedded, self.embedded + left, detail)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"

"""What one run did, counted as it goes: by the file phase and the vector phase alike."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class RunCounts:
    """The running counts of one indexing run (files, chunks, vectors, errors, timings)."""

    files: int = 0
    chunks: int = 0
    skipped: int = 0
    unchanged: int = 0
    deleted: int = 0
    embedded: int = 0
    deleted_files: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # harmless: the run log only
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage, for the run log
    reasons: dict[str, int] = field(default_factory=dict)  # "embedded.new", "deleted.file_gone", …

    def add_time(self, stage: str, started: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    def count(self, reason: str, n: int) -> None:
        if n:
            self.reasons[reason] = self.reasons.get(reason, 0) + n

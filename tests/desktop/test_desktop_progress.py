"""Progress in words beside the bar: the files read, then the vectors with the time left."""

from __future__ import annotations

from desktop.controller import MemexApp
from desktop.progress import EMBEDDING, WorkState


def test_progress_says_files_then_vectors_with_the_time_left(memex: MemexApp) -> None:
    bar, words = memex.window.progress, memex.window.progress_words
    memex.window.show_work(WorkState("Reindexing", 3, 1200))
    assert bar.isVisible() and words.isVisible() and words.text() == "files 3 of 1,200"
    memex.window.show_work(WorkState(EMBEDDING, 40, 100, "about 2 min left"))
    assert words.text() == "vectors 40% — about 2 min left"
    memex.window.show_work(WorkState("Rebuilding vector index", 5, 10))
    assert bar.isVisible() and not words.isVisible()  # the bar alone, its tooltip says what
    memex.window.show_work(WorkState())
    assert not bar.isVisible() and not words.isVisible()

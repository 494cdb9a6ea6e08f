"""The local model's onnxruntime session is made when something is embedded, not before:
a reindex with nothing new to embed never loads it, and a search still gets its vectors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.embedders.local import LocalEmbedder
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings


def test_a_no_change_reindex_does_not_load_the_model(
    tmp_path: Path, settings_factory: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "ferry.md").write_text("# Ferry\n\nThe late ferry leaves at nine.\n")
    settings = settings_factory(root)  # the default: the local model
    made: list[LocalEmbedder] = []
    real = LocalEmbedder._make_session

    def counted(self: LocalEmbedder) -> object:
        made.append(self)
        return real(self)

    monkeypatch.setattr(LocalEmbedder, "_make_session", counted)
    first = reindex(settings=settings)
    assert first.chunks == 1 and len(made) == 1  # embedded: the session was made once
    again = reindex(settings=settings)
    assert again.files == 0 and len(made) == 1  # nothing to embed: no session
    searcher = Searcher(settings)
    try:
        hits = searcher.search("boat departure time", mode="vector").results
    finally:
        searcher.close()
    assert [Path(h.source_file).name for h in hits] == ["ferry.md"] and len(made) == 2

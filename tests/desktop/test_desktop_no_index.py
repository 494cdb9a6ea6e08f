"""A search with no index yet says so, told by the error's class and never by its words
(desktop/requests.py: `SearchAnswer.no_index`); another program's file at the index's
path is a failure said in its own words, and the app (its watcher on or off) writes nothing
into it or beside it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from desktop_helpers import RecordingOpener, start_app, type_query

from desktop.controller import MemexApp
from desktop.requests import SearchAnswer, SearchRequest, no_index_yet
from engine.search import NoIndexError
from engine.settings import Settings
from engine.store.db import NoIndexYet, NotMemexIndex

NO_INDEX = "There is no index yet."


@pytest.fixture
def unindexed(
    qapp: Any, qtbot: Any, settings_factory: Callable[..., Settings], opener: RecordingOpener
) -> Iterator[Callable[[Callable[[Path], None]], MemexApp]]:
    """The app on a data folder holding a note, with `prepare(db_path)` run first (and the
    watcher on when `watching`)."""
    started: list[MemexApp] = []

    def start(prepare: Callable[[Path], None], watching: bool = False) -> MemexApp:
        settings = settings_factory(embedder__name="hashing", desktop__watching=watching)
        (settings.roots[0] / "trip.md").write_text("# Trip\n\nThe ferry at nine.\n", "utf-8")
        prepare(settings.db_path)
        memex = start_app(qapp, settings, opener)
        started.append(memex)
        qtbot.addWidget(memex.window)
        memex.window.summon()
        return memex

    yield start
    for memex in started:
        memex.shutdown()
    qapp.setQuitOnLastWindowClosed(True)


def message(memex: MemexApp) -> str:
    window = memex.window
    assert window.body.currentIndex() == 1 and window.model.rowCount() == 0
    return window.message.text()


def test_no_index_file_says_there_is_none_yet(qtbot: Any, unindexed: Any) -> None:
    memex = unindexed(lambda db: None)
    type_query(qtbot, memex, "ferry")
    answer = memex.window.last_answer
    assert answer is not None and answer.no_index and answer.response is None
    assert message(memex).startswith(NO_INDEX)


def test_an_empty_index_file_says_there_is_none_yet(qtbot: Any, unindexed: Any) -> None:
    memex = unindexed(lambda db: db.write_bytes(b""))  # the store's NoIndexYet
    type_query(qtbot, memex, "ferry")
    assert message(memex).startswith(NO_INDEX)


@pytest.mark.parametrize("watching", [False, True])
def test_another_programs_database_is_a_failure_in_its_words(
    qtbot: Any, unindexed: Any, watching: bool
) -> None:
    def foreign(db: Path) -> None:
        conn = apsw.Connection(str(db))
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
        conn.close()

    memex = unindexed(foreign, watching)
    db_path = memex.settings.db_path
    before = db_path.read_bytes()
    type_query(qtbot, memex, "ferry")
    text = message(memex)
    assert not memex.window.last_answer.no_index  # type: ignore[union-attr]
    assert text.startswith("The search failed: ") and "is not a Memex index" in text
    memex.shutdown()  # the app's writer and server have come and gone: nothing written
    assert db_path.read_bytes() == before
    beside = sorted(p.name for p in db_path.parent.iterdir() if p.name.startswith(db_path.name))
    assert beside == [db_path.name]


def test_no_index_is_told_by_the_class_not_the_words() -> None:
    request = SearchRequest("ferry")
    assert SearchAnswer.failed(request, NoIndexError("nothing here")).no_index
    assert no_index_yet(NoIndexYet("an empty file"))
    assert not no_index_yet(NotMemexIndex("there is no index, only photos"))
    assert not SearchAnswer.failed(request, RuntimeError("no index at all")).no_index

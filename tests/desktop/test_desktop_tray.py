"""Tray actions run the engine's work on its one writer and the status follows.

Offscreen there is no system tray, so the menu's actions are triggered directly: they are the
same QAction objects the tray icon would show.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from desktop_helpers import start_app, wait_for

from desktop.controller import MemexApp
from desktop.progress import WorkState
from engine.settings import Settings


def test_the_menu_has_every_action(memex: MemexApp) -> None:
    texts = [a.text() for a in memex.tray.menu.actions() if not a.isSeparator()]
    assert texts[0].startswith("Search\t") and "Ctrl+Alt+Space" in texts[0]
    for wanted in (
        "Reindex now",
        "Rebuild vector index + VACUUM",
        "Pause watching",
        "Status…",
        "Settings…",
        "Quit Memex",
    ):
        assert any(t.startswith(wanted) for t in texts), wanted
    assert memex.window.menu_button.menu() is memex.tray.menu  # also reachable without a tray


def test_reindex_now_runs_on_the_writer_and_updates_the_status(qtbot: Any, memex: MemexApp) -> None:
    before = memex.last_status.chunks
    note = memex.settings.roots[0] / "notes" / "desk-test.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("# Desk test\n\nThe quokka borrowed my bicycle pump.\n")
    states: list[WorkState] = []
    enabled: list[bool] = []

    def seen(state: WorkState) -> None:
        states.append(state)
        enabled.append(memex.tray.reindex_action.isEnabled())

    memex.tasks.work_changed.connect(seen)
    memex.tray.reindex_action.trigger()
    wait_for(qtbot, lambda: any(n.title == "Reindex finished" for n in memex.tray.notifications))
    assert states[0].label == "Reindexing" and enabled[0] is False  # busy: no second run
    assert states[-1] == WorkState() and enabled[-1] is True
    done = next(n for n in memex.tray.notifications if n.title == "Reindex finished")
    assert "1 new chunk" in done.text
    wait_for(qtbot, lambda: memex.last_status.chunks == before + 1)
    assert f"{before + 1:,} chunks indexed" in memex.tray.tooltip()
    assert "Reindex finished" in memex.window.status.text()  # no tray: the window says it


def test_rebuild_runs_maintenance_and_reports_its_stats(qtbot: Any, memex: MemexApp) -> None:
    memex.tray.maintenance_action.trigger()
    assert memex.tray.work.label == "Rebuilding vector index"
    assert "Rebuilding vector index" in memex.tray.tooltip()
    wait_for(
        qtbot, lambda: any(n.title == "Vector index rebuilt" for n in memex.tray.notifications)
    )
    text = next(n.text for n in memex.tray.notifications if n.title == "Vector index rebuilt")
    assert f"{memex.last_status.counts.parts} vectors rebuilt" in text  # one per part
    assert "reclaimed" in text
    assert memex.tray.work == WorkState()


def test_status_action_shows_counts_per_type(qtbot: Any, memex: MemexApp) -> None:
    memex.tray.status_action.trigger()
    wait_for(qtbot, lambda: memex.status_box is not None)
    text = memex.status_box.text()
    assert f"{memex.last_status.chunks} chunks" in text
    assert "journal:" in text and "Search by meaning: all-MiniLM" in text
    assert "Dead vector slots" not in text and "|" not in text  # words, not the index's keys


def test_maintenance_is_suggested_past_the_bloat_threshold(qtbot: Any, memex: MemexApp) -> None:
    memex._status_arrived(replace(memex.last_status, maintenance_suggested=True))
    assert memex.tray.maintenance_action.text().endswith("(suggested)")
    assert [n.title for n in memex.tray.notifications].count("Maintenance suggested") == 1
    memex._status_arrived(replace(memex.last_status, maintenance_suggested=True))
    assert [n.title for n in memex.tray.notifications].count("Maintenance suggested") == 1


def test_pause_and_resume_watching(
    qtbot: Any, qapp: Any, demo_index: Settings, opener: Any
) -> None:
    memex = start_app(qapp, demo_index, opener)  # watching on (the default)
    qtbot.addWidget(memex.window)
    try:
        watcher = memex.tasks.watcher
        assert watcher is not None and memex.tray.pause_action.isEnabled()
        memex.tray.pause_action.trigger()
        assert watcher.paused and memex.tray.pause_action.text() == "Resume watching"
        assert "watching paused" in memex.tray.tooltip()
        memex.tray.pause_action.trigger()
        assert not watcher.paused and memex.tray.pause_action.text() == "Pause watching"
        wait_for(qtbot, lambda: not memex.tasks.writer.busy)
    finally:
        memex.shutdown()
        qapp.setQuitOnLastWindowClosed(True)


def test_watcher_picks_up_a_new_file(
    qtbot: Any, qapp: Any, demo_index: Settings, opener: Any
) -> None:
    settings = demo_index.with_values(watch__debounce_seconds=0.2)
    memex = start_app(qapp, settings, opener)
    qtbot.addWidget(memex.window)
    batches: list[Any] = []
    memex.tasks.watched.connect(batches.append)
    try:
        wait_for(qtbot, lambda: bool(batches))  # the catch-up scan at start
        note = settings.roots[0] / "notes" / "watched.md"
        note.write_text("# Watched\n\nThe axolotl tank needs a new filter.\n")
        wait_for(qtbot, lambda: any(c.path == str(note) for b in batches for c in b.changes))
        wait_for(qtbot, lambda: memex.last_status is not None and memex.last_status.chunks > 0)
    finally:
        memex.shutdown()
        qapp.setQuitOnLastWindowClosed(True)


def test_a_status_refresh_delivered_after_shutdown_is_dropped(memex: Any) -> None:
    """A watcher batch queued before quitting may still reach the controller afterwards."""
    memex.shutdown()
    answers: list[object] = []
    memex.refresh_status()  # must not raise "cannot schedule new futures after shutdown"
    memex.tasks.read(lambda: 1, answers.append)
    assert answers == []

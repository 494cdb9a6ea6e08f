"""Helpers shared by the desktop tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

from typing import Any

from desktop.controller import MemexApp
from engine.settings import Settings

WAIT_MS = 60_000  # generous: nothing here depends on timing, only on things happening


class RecordingOpener:
    """Stands in for the editor / file manager: records what the window asked for."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, int | None]] = []
        self.revealed: list[str] = []

    def open(self, path: str, line: int | None) -> bool:
        self.opened.append((path, line))
        return True

    def reveal(self, path: str) -> bool:
        self.revealed.append(path)
        return True


def start_app(qapp: Any, settings: Settings, opener: RecordingOpener, **kwargs: Any) -> MemexApp:
    memex = MemexApp(qapp, settings, env={}, tray=False, hotkey=False, opener=opener, **kwargs)
    memex.window.hide_on_blur = False  # offscreen focus is not what is tested here
    return memex


def wait_for(qtbot: Any, condition: Any) -> None:
    qtbot.waitUntil(condition, timeout=WAIT_MS)


def type_query(qtbot: Any, memex: MemexApp, text: str) -> None:
    """Type like a user and wait for the window to show the answer to exactly this text."""
    window = memex.window
    window.query.clear()
    qtbot.keyClicks(window.query, text)
    wait_for(
        qtbot,
        lambda: (
            window.last_answer is not None
            and window.last_answer.request == window.request()
            and window.last_answer.request.query == text
        ),
    )


def wait_request(qtbot: Any, memex: MemexApp) -> None:
    """Wait until the window shows the answer to what its controls ask for now."""
    window = memex.window
    wait_for(
        qtbot,
        lambda: window.last_answer is not None and window.last_answer.request == window.request(),
    )

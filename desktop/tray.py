"""The tray icon and its menu (the same menu sits behind the window's ⋯ button).

Search, Reindex now, Rebuild vector index + VACUUM, Pause/Resume watching, Status, Settings,
Quit. The tooltip tells the state; long work shows progress and ends with a notification.
Where the platform has no tray the menu still exists (the window shows it) and notifications
go to the window's status line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop import theme
from desktop.formatting import human_size, type_label
from desktop.hotkey import to_display
from desktop.problems import problem_lines
from desktop.progress import WorkState
from engine.index.reports import IndexStatus, MaintenanceResult
from engine.records import IndexStats


@dataclass(frozen=True)
class Notification:
    title: str
    text: str


def reindex_summary(stats: IndexStats) -> str:
    text = (
        f"{stats.files} file(s) read, {stats.chunks} new chunk(s), "
        f"{stats.deleted_chunks} removed, in {stats.seconds:.1f} s"
    )
    if stats.errors:
        # Some were indexed all the same (a broken front matter): Status tells which.
        text += f"; {len(stats.errors)} file(s) with a problem (Status… says which)"
    return text


def maintenance_summary(result: MaintenanceResult) -> str:
    m = result.maintenance
    if m is None:  # an index without a schema gets only a check: nothing to rebuild
        return f"0 vectors rebuilt, {human_size(0)} reclaimed, in 0.0 s"
    return (
        f"{m.vectors_rebuilt} vectors rebuilt, {human_size(max(0, m.bytes_reclaimed))} "
        f"reclaimed, in {m.seconds:.1f} s"
    )


def status_lines(status: IndexStatus) -> list[str]:
    """`memex status` as short lines for the status dialog."""
    lines = [f"{status.chunks} chunks in {status.files} files · {human_size(status.size_bytes)}"]
    for source_type, count in status.per_type.items():
        lines.append(f"    {type_label(source_type)}: {count}")
    lines.append(f"Search by meaning: {embedder_words(status.embedder)}")
    reclaim = max(status.vector_slots.fraction, status.free_page_fraction)
    if reclaim >= 0.01:  # below that, nothing worth a rebuild
        lines.append(f"Space to reclaim: {reclaim:.0%} (Rebuild vector index + VACUUM)")
    run = status.last_run or {}
    when = run.get("at", "")
    if run and isinstance(when, str):
        kind = RUN_WORDS.get(str(run.get("kind", "reindex")), "Last indexed")
        lines.append(f"{kind}: {when[:16].replace('T', ' ')}".rstrip(": "))
    return lines + problem_lines(status)


# A run's kind in the run log, as the dialog names it (a reconcile is an index run too).
RUN_WORDS = {
    "maintenance": "Last space reclaimed",
    "check": "Last check of the index",
    "repair": "Last repair of the index",
}


def embedder_words(key: str | None) -> str:
    """The index's embedder ("local|all-MiniLM-L6-v2-int8|384|p300") in words: the model,
    and where it runs."""
    if not key:
        return "not set up yet"
    name, _, rest = key.partition("|")
    model = rest.split("|", 1)[0] or name
    where = {"local": "built in, offline", "openai": "OpenAI"}.get(name, name)
    return f"{model} ({where})"


class Tray(QObject):
    """Menu actions, tooltip, icon state and notifications."""

    search = Signal()
    reindex = Signal()
    maintenance = Signal()
    pause = Signal(bool)  # paused?
    status = Signal()
    settings = Signal()
    quit = Signal()

    def __init__(self, available: bool, hotkey: str) -> None:
        super().__init__()
        self.menu = QMenu()
        self.search_action = self._action("Search", self.search.emit)
        self.menu.addSeparator()
        self.reindex_action = self._action("Reindex now", self.reindex.emit)
        self.maintenance_action = self._action(
            "Rebuild vector index + VACUUM", self.maintenance.emit
        )
        self.pause_action = self._action("Pause watching", self._toggle_pause)
        self.status_action = self._action("Status…", self.status.emit)
        self.menu.addSeparator()
        self.settings_action = self._action("Settings…", self.settings.emit)
        self.quit_action = self._action("Quit Memex", self.quit.emit)
        self.paused = False
        self.work = WorkState()
        self.chunks: int | None = None
        self.hotkey_message = ""
        self.notifications: list[Notification] = []
        self.icon: QSystemTrayIcon | None = None
        if available:
            self.icon = QSystemTrayIcon(theme.app_icon())
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._activated)
            self.icon.show()
        self.set_hotkey(hotkey, "")

    def _action(self, text: str, slot: Any) -> QAction:
        action = QAction(text, self.menu)
        action.triggered.connect(lambda _checked=False: slot())
        self.menu.addAction(action)
        return action

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.search.emit()

    def _toggle_pause(self) -> None:
        self.set_paused(not self.paused)
        self.pause.emit(self.paused)

    # -- state -----------------------------------------------------------------------------------

    def set_hotkey(self, spec: str, message: str) -> None:
        self.search_action.setText(f"Search\t{to_display(spec)}")
        self.hotkey_message = message
        self._refresh()

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_action.setText("Resume watching" if paused else "Pause watching")
        self._refresh()

    def set_watching_available(self, available: bool) -> None:
        self.pause_action.setEnabled(available)

    def set_work(self, state: WorkState) -> None:
        self.work = state
        busy = bool(state.label)
        self.reindex_action.setEnabled(not busy)
        self.maintenance_action.setEnabled(not busy)
        self._refresh()

    def set_status(self, status: IndexStatus) -> None:
        self.chunks = status.chunks
        suggested = status.maintenance_suggested
        self.maintenance_action.setText(
            "Rebuild vector index + VACUUM" + (" (suggested)" if suggested else "")
        )
        self._refresh()

    def tooltip(self) -> str:
        if self.work.label:
            state = self.work.describe()
        elif self.paused:
            state = "watching paused"
        else:
            state = "idle"
        lines = [f"Memex — {state}"]
        if self.chunks is not None:
            lines.append(f"{self.chunks:,} chunks indexed")
        if self.hotkey_message:
            lines.append(self.hotkey_message)
        return "\n".join(lines)

    def _refresh(self) -> None:
        if self.icon is None:
            return
        self.icon.setToolTip(self.tooltip())
        state = "busy" if self.work.label else ("paused" if self.paused else "")
        self.icon.setIcon(theme.app_icon(state))

    def notify(self, title: str, text: str) -> None:
        self.notifications.append(Notification(title, text))
        if self.icon is not None and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(title, text, theme.app_icon(), 8000)

    def hide(self) -> None:
        if self.icon is not None:
            self.icon.hide()

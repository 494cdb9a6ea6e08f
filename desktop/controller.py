"""The running app: wires the window, tray, hotkey and settings to the task manager."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon

from desktop import autostart, theme
from desktop.config_file import write_config
from desktop.hotkey import GlobalHotkey, HotkeyStatus
from desktop.opener import Opener, SystemOpener
from desktop.owner import owner_line
from desktop.settings_dialog import EMBEDDER_KEYS, SettingsDialog
from desktop.tasks import Tasks
from desktop.tray import Tray, maintenance_summary, reindex_summary, status_lines
from desktop.welcome import WelcomePage
from desktop.window import SearchWindow
from engine.index.reports import IndexStatus, MaintenanceResult
from engine.people.curated import PeopleFileError, write_me
from engine.records import IndexStats, Person
from engine.settings import Settings, SettingsError, default_config_path, load_settings
from engine.text import shown

REINDEX_AFTER = ("roots", "desktop.disabled_types", *EMBEDDER_KEYS)


class MemexApp(QObject):
    """One instance of the desktop app."""

    def __init__(
        self,
        app: QApplication,
        settings: Settings,
        *,
        overrides: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        tray: bool | None = None,
        opener: Opener | None = None,
        hotkey: bool = True,
    ) -> None:
        super().__init__()
        self.app = app
        self.settings = settings
        self.overrides = dict(overrides or {})
        self.env = os.environ if env is None else env
        self.theme = theme.apply(app, settings.desktop.theme)
        available = QSystemTrayIcon.isSystemTrayAvailable() if tray is None else tray
        self.tasks = Tasks(settings)
        self.tray = Tray(available, settings.desktop.hotkey)
        self.opener = opener or SystemOpener(settings.desktop.editor_command)
        self.window = SearchWindow(
            self.tasks,
            self.now,
            self.opener,
            menu=self.tray.menu,
            tool=available,
            limit=settings.desktop.result_limit,
        )
        self.hotkey = GlobalHotkey(lambda: self.tasks.post(self.window.toggle))
        self.hotkey_status = HotkeyStatus(False, "not started")
        self.last_status: IndexStatus | None = None
        self.status_box: QMessageBox | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.welcome: WelcomePage | None = None
        self._suggested = False
        self.people: list[Person] = []  # those with a card, the owner among them
        self._connect()
        if not settings.roots:
            self.show_welcome()  # a first run: from no data folder to a first result
        app.setQuitOnLastWindowClosed(not available)
        self._start(available, hotkey)

    def _start(self, tray_available: bool, hotkey: bool) -> None:
        """The hotkey, the watcher, the people for the filter, a warm reader, the status."""
        if hotkey:
            self._start_hotkey()
        self.window.can_hide = tray_available or self.hotkey_status.ok
        if self.settings.desktop.watching:
            self.tasks.start_watching()
        self.tray.set_watching_available(self.tasks.watcher is not None)
        self.tasks.people(self._people_arrived)
        self.tasks.warm_up()
        self.refresh_status()

    def _connect(self) -> None:
        t = self.tray
        t.search.connect(self.window.summon)
        t.reindex.connect(self.reindex_now)
        t.maintenance.connect(self.rebuild)
        t.pause.connect(self.tasks.set_paused)
        t.status.connect(self.show_status)
        t.settings.connect(self.open_settings)
        t.quit.connect(self.app.quit)
        self.tasks.work_changed.connect(t.set_work)
        self.tasks.watched.connect(lambda _batch: self.refresh_status())
        self.tasks.notice.connect(lambda text: self.notify("Memex", text))
        self.window.this_is_me.connect(self.note_me)
        self.app.styleHints().colorSchemeChanged.connect(lambda _scheme: self._retheme())

    def _retheme(self) -> None:
        if self.settings.desktop.theme == "system":
            self.theme = theme.apply(self.app, "system")
            self.window.update()

    def _start_hotkey(self) -> None:
        spec = self.settings.desktop.hotkey
        self.hotkey_status = self.hotkey.start(spec, self.env, QApplication.platformName())
        self.tray.set_hotkey(spec, "" if self.hotkey_status.ok else self.hotkey_status.message)

    def now(self) -> datetime:
        fixed = self.settings.now
        return datetime.fromisoformat(fixed) if fixed else datetime.now()

    # -- tray actions ----------------------------------------------------------------------------

    def notify(self, title: str, text: str) -> None:
        self.tray.notify(title, text)
        if self.tray.icon is None:
            self.window.status.setText(f"{title}: {text}")

    def reindex_now(self, full: bool = False) -> None:
        self.tasks.reindex(
            self._reindexed, full=full, on_error=lambda e: self.notify("Reindex failed", str(e))
        )

    def _reindexed(self, stats: IndexStats) -> None:
        self.notify("Reindex finished", reindex_summary(stats))
        if self.settings.desktop.watching and self.tasks.watcher is None:
            self.tasks.start_watching()  # the first data folder: watch it from now on
            self.tray.set_watching_available(self.tasks.watcher is not None)
        self.tasks.people(self._people_arrived)
        self.refresh_status()

    def rebuild(self) -> None:
        self.tasks.maintenance(
            self._rebuilt, on_error=lambda e: self.notify("Maintenance failed", str(e))
        )

    def _rebuilt(self, result: MaintenanceResult) -> None:
        self._suggested = False
        self.notify("Vector index rebuilt", maintenance_summary(result))
        self.refresh_status()

    def refresh_status(self, then: Callable[[IndexStatus], Any] | None = None) -> None:
        def arrived(status: IndexStatus) -> None:
            self._status_arrived(status)
            if then is not None:
                then(status)

        self.tasks.status(arrived, on_error=lambda _e: None)

    def _status_arrived(self, status: IndexStatus) -> None:
        self.last_status = status
        self.tray.set_status(status)
        if status.maintenance_suggested and not self._suggested:
            self._suggested = True
            self.notify(
                "Maintenance suggested",
                "The index has grown sparse; choose "
                "“Rebuild vector index + VACUUM” in the Memex menu to reclaim space.",
            )

    def show_status(self) -> None:
        self.refresh_status(self._status_box)

    def _status_box(self, status: IndexStatus) -> None:
        box = QMessageBox(
            QMessageBox.Icon.NoIcon,
            "Memex status",
            "\n".join([*status_lines(status), owner_line(self.people)]),
            QMessageBox.StandardButton.Close,
            self.window,
        )
        box.setIconPixmap(theme.app_icon().pixmap(48, 48))
        box.setDetailedText(f"Index: {status.db}\nRoots: {', '.join(status.roots)}")
        self.status_box = box
        box.open()

    # -- people ----------------------------------------------------------------------------------

    def _people_arrived(self, people: list[Person]) -> None:
        self.people = people
        self.window.filters.set_people([p.name for p in people])

    def note_me(self, name: str) -> None:
        """A card's "This is me": `me` in the people file, or the `people.me` setting when
        no root has one (engine/people/curated.py, `write_me`), then the directory read
        again and the search run again, so the card says it at once."""
        try:
            written = write_me(self.settings, name)
        except PeopleFileError as exc:
            self.window.banner.setText(f"Memex could not note that you are {name}: {exc}")
            self.window.banner.show()
            return
        if written == (self.settings.config_path or default_config_path()):
            self.settings = self.settings.with_values(people__me=name)
            self.tasks.update_settings(self.settings)
        self.tasks.engine.refresh()
        self.tasks.people(self._people_arrived)
        self.window.search_now()

    # -- the first run ---------------------------------------------------------------------------

    def show_welcome(self) -> WelcomePage:
        """The welcome instead of the search, until a data folder is chosen and indexed."""
        if self.welcome is None:
            self.welcome = WelcomePage(self.tasks)
            self.welcome.index_requested.connect(self.index_folder)
        self.window.show_welcome(self.welcome)
        return self.welcome

    def index_folder(self, folder: str) -> None:
        """The welcome's Index: save `folder` as a data folder in the config file, then
        index it with the usual progress; keyword search works as soon as chunks are in."""
        roots = [*(str(r) for r in self.settings.roots), folder]
        try:
            write_config(self.settings.config_path or default_config_path(), {"roots": roots})
        except (OSError, ValueError) as exc:
            if self.welcome is not None:
                self.welcome.show_error(f"The folder was not saved: {exc}")
            return
        self.window.show_search()
        self.window.show_message(
            f"Indexing {shown(folder)}…\nType to search: keyword results come as soon as the "
            "files are read; results by meaning follow when the vectors are in."
        )
        self.apply_changes({"roots": roots})

    def found_types(self) -> list[str]:
        """The source types in the index, and those the welcome recognised."""
        indexed = list(self.last_status.per_type) if self.last_status else []
        surveyed = self.welcome.survey.source_types if self.welcome and self.welcome.survey else ()
        return list(dict.fromkeys([*indexed, *surveyed]))

    # -- settings --------------------------------------------------------------------------------

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(
            self.settings,
            self.hotkey_status.message,
            self.window,
            self.found_types(),
            discover=lambda folder, on_done: self.tasks.discover(folder, on_done),
        )
        dialog.saved.connect(self.apply_changes)
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def apply_changes(self, changes: dict[str, Any]) -> None:
        """Reload the settings from the file just written and apply what changed."""
        try:
            settings = load_settings(
                self.settings.config_path, env=self.env, now=self.settings.now, **self.overrides
            )
        except SettingsError as exc:
            self.notify("Settings not applied", str(exc))
            return
        self.settings = settings
        self.tasks.update_settings(settings)
        if "desktop.theme" in changes:
            self.theme = theme.apply(self.app, settings.desktop.theme)
        if "desktop.hotkey" in changes:
            self._start_hotkey()
        self.window.limit = settings.desktop.result_limit
        if "desktop.editor_command" in changes and isinstance(self.opener, SystemOpener):
            self.opener.editor_command = settings.desktop.editor_command
        if "desktop.start_at_login" in changes:
            try:
                autostart.set_start_at_login(settings.desktop.start_at_login)
            except OSError as exc:
                self.notify("Start at login", f"could not be changed: {exc}")
        if "desktop.watching" in changes:
            (self.tasks.start_watching if settings.desktop.watching else self.tasks.stop_watching)()
            self.tray.set_watching_available(settings.desktop.watching)
        if any(k in changes for k in REINDEX_AFTER):
            self.reindex_now()

    # -- window and life cycle -------------------------------------------------------------------

    def command(self, text: str) -> None:
        """A line from another launch: toggle, show or quit."""
        if text == "toggle":
            self.window.toggle()
        elif text == "show":
            self.window.summon()
        elif text == "quit":
            self.app.quit()
        w = self.window
        state = "hidden" if not w.isVisible() else ("minimised" if w.isMinimized() else "shown")
        sys.stderr.write(f"memex: received {text}; the window is {state}\n")
        sys.stderr.flush()

    def shutdown(self) -> None:
        self.hotkey.stop()
        self.window.hide()
        self.tray.hide()
        self.tasks.shutdown()

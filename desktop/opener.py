"""Opening a hit: the configured editor at its line, else the system opener; revealing it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices

from engine.index.archives import split


class Opener(Protocol):
    """What the window calls on Enter and Ctrl+Enter (tests inject a recorder)."""

    def open(self, path: str, line: int | None) -> bool: ...

    def reveal(self, path: str) -> bool: ...


def editor_argv(template: str, path: str, line: int | None) -> list[str]:
    """The editor command with {file} and {line} filled in (line 1 when unknown).

    `code --goto {file}:{line}`, `subl {file}:{line}`, `emacsclient +{line} {file}`.
    A template without {file} gets the file appended.
    """
    parts = shlex.split(template, posix=sys.platform != "win32")
    if not any("{file}" in p for p in parts):
        parts.append("{file}")
    return [p.replace("{file}", path).replace("{line}", str(line or 1)) for p in parts]


def on_disk(path: str) -> str:
    """The file to open for a hit: the archive that holds a member (`<archive>!/<member>`),
    else the file itself."""
    inside = split(path)
    return str(inside[0]) if inside else path


def reveal_argv(path: str, platform: str = sys.platform) -> list[str] | None:
    """The file-manager command that shows `path` selected, or None (open the folder)."""
    if platform == "darwin":
        return ["open", "-R", path]
    if platform == "win32":
        return ["explorer", f"/select,{path}"]
    return None


class SystemOpener:
    """The real opener: a detached process, or QDesktopServices."""

    def __init__(self, editor_command: str = "") -> None:
        self.editor_command = editor_command.strip()

    def open(self, path: str, line: int | None) -> bool:
        path = on_disk(path)
        if self.editor_command:
            argv = editor_argv(self.editor_command, path, line)
            ok, _pid = QProcess.startDetached(argv[0], argv[1:])
            return bool(ok)
        return QDesktopServices.openUrl(QUrl.fromLocalFile(path))

    def reveal(self, path: str) -> bool:
        path = on_disk(path)
        argv = reveal_argv(path)
        if argv is not None:
            ok, _pid = QProcess.startDetached(argv[0], argv[1:])
            return bool(ok)
        if _show_items_over_dbus(path):
            return True
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(path).parent)))


def _show_items_over_dbus(path: str) -> bool:
    """freedesktop file managers select a file through org.freedesktop.FileManager1."""
    try:
        from PySide6.QtDBus import QDBusConnection, QDBusMessage
    except ImportError:
        return False
    bus = QDBusConnection.sessionBus()
    service = "org.freedesktop.FileManager1"
    if not bus.isConnected():
        return False
    names = bus.interface().activatableServiceNames().value() or []
    if service not in names and not bus.interface().isServiceRegistered(service).value():
        return False
    message = QDBusMessage.createMethodCall(
        service, "/org/freedesktop/FileManager1", service, "ShowItems"
    )
    message.setArguments([[QUrl.fromLocalFile(path).toString()], ""])
    return bool(bus.send(message))

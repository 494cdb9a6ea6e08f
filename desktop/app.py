"""`memex` with no command: the desktop app (tray, hotkey, window), one instance per user.

`memex --toggle` and a second launch send "toggle" to the running instance and exit;
`memex --self-test` boots the real window offscreen (desktop.selftest).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from desktop.collector import GuiThreadCollector
from desktop.instance import InstanceServer, send, socket_name
from engine.app_api import BackgroundServer, SettingsError, option_overrides, settings_from_options
from engine.settings import Settings

_QUIET = ("This plugin does not support", "QFont::setPixelSize")
EXIT_USAGE = 2  # as the CLI's (engine/cli/common.py): a bad flag or config value


class UsageError(Exception):
    """A flag the app does not take, or one without its value: one sentence, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(f"{message} (see 'memex --help')")


def app_parser() -> argparse.ArgumentParser:
    """The options `memex` takes when it opens the app (engine/entry.py, `wants_gui`):
    the index's `--root`/`--db`/`--config`, `--toggle`, and the self-test's own."""
    p = _Parser(prog="memex", add_help=False)
    p.add_argument("--root", action="append", metavar="DIR")
    p.add_argument("--db", metavar="FILE")
    p.add_argument("--config", metavar="FILE")
    p.add_argument("--toggle", action="store_true")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--screenshot", metavar="FILE")
    p.add_argument("--query", metavar="Q")
    p.add_argument("--source", action="append", metavar="TYPE")
    p.add_argument("--person", action="append", metavar="NAME")
    return p


def _qt_messages(kind: QtMsgType, _context: Any, message: str) -> None:
    # The offscreen platform warns about every raise() and size hint: noise, not news.
    if kind in (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg) or message.startswith(_QUIET):
        return
    sys.stderr.write(f"qt: {message}\n")


def make_app() -> QApplication:
    """The QApplication (one per process), named for the desktop and with quiet Qt logging."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    QApplication.setApplicationName("Memex")
    QApplication.setOrganizationName("Memex")
    QApplication.setDesktopFileName("memex")
    qInstallMessageHandler(_qt_messages)
    return QApplication([sys.argv[0] if sys.argv else "memex"])


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """The --root/--db flags, kept so that reloading the settings keeps them."""
    return option_overrides(args.root, args.db)


def _quit_on_signals(app: QApplication) -> QTimer:
    """Ctrl+C and SIGTERM quit cleanly; a timer lets Python run its signal handlers."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: app.quit())
    timer = QTimer(interval=300)
    timer.timeout.connect(lambda: None)
    timer.start()
    return timer


def _note(message: str) -> None:
    sys.stderr.write(f"memex: {message}\n")
    sys.stderr.flush()


def _instance_server(name: str) -> InstanceServer:
    """The one-instance server, listening on `name` (a warning when it cannot)."""
    server = InstanceServer()
    if not server.listen(name):
        sys.stderr.write(
            f"memex: cannot listen on {name} ({server.error()}); "
            "a second launch will start a second Memex\n"
        )
    return server


def main(argv: Sequence[str]) -> int:
    try:
        args = app_parser().parse_args(list(argv))
        if args.self_test:
            from desktop.selftest import run_self_test

            return run_self_test(args)
        settings = settings_from_options(args.root, args.db, args.config)
    except (UsageError, SettingsError) as exc:
        sys.stderr.write(f"memex: {exc}\n")
        return EXIT_USAGE
    app = make_app()
    name = socket_name(os.environ)
    if send(name, "toggle"):
        sys.stderr.write("memex: Memex is already running; sent it “toggle”\n")
        return 0
    server = _instance_server(name)
    collector = GuiThreadCollector(app)  # no collection on a search thread (desktop/collector.py)
    try:
        return _run(app, args, settings, server, name)
    finally:
        collector.stop()


def _run(
    app: QApplication,
    args: argparse.Namespace,
    settings: Settings,
    server: InstanceServer,
    name: str,
) -> int:
    """The app from its window to its exit code."""
    from desktop.controller import MemexApp

    memex = MemexApp(app, settings, overrides=overrides_from(args))
    server.command.connect(memex.command)
    if args.toggle or memex.tray.icon is None:
        memex.window.summon()
    if memex.window.welcoming:
        memex.window.summon()  # first run: the welcome leads to the first data folder
    ticker = _quit_on_signals(app)
    # `memex --search` is answered by this process's warm engine (engine/app_api.py).
    searches = BackgroundServer(lambda: memex.tasks.engine, settings, _note)
    searches.start()
    sys.stderr.write(f"memex: running (instance {name})\n")
    sys.stderr.flush()
    try:
        return int(app.exec())
    finally:
        ticker.stop()
        searches.close()
        memex.shutdown()
        server.close()

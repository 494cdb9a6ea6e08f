"""`memex` with no command: the desktop app (tray, hotkey, window), one instance per user.

`memex --toggle` and a second launch send "toggle" to the running instance and exit;
`memex --self-test` boots the real window offscreen (desktop.selftest).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from desktop.instance import InstanceServer, send, socket_name
from engine.cli.common import CliError, settings_from
from engine.cli.search import search_parser
from engine.cli.warm import BackgroundServer

_QUIET = ("This plugin does not support", "QFont::setPixelSize")


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


def overrides_from(args: Any) -> dict[str, Any]:
    """The --root/--db flags, kept so that reloading the settings keeps them."""
    overrides: dict[str, Any] = {}
    if args.root:
        overrides["roots"] = [str(Path(r).expanduser().resolve()) for r in args.root]
    if args.db:
        overrides["db"] = str(Path(args.db).expanduser().resolve())
    return overrides


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
        args = search_parser().parse_args(list(argv))
        if args.self_test:
            from desktop.selftest import run_self_test

            return run_self_test(args)
        settings = settings_from(args)
    except CliError as exc:
        sys.stderr.write(f"memex: {exc}\n")
        return exc.code
    app = make_app()
    name = socket_name(os.environ)
    if send(name, "toggle"):
        sys.stderr.write("memex: Memex is already running; sent it “toggle”\n")
        return 0
    server = _instance_server(name)
    from desktop.controller import MemexApp

    memex = MemexApp(app, settings, overrides=overrides_from(args))
    server.command.connect(memex.command)
    if args.toggle or memex.tray.icon is None:
        memex.window.summon()
    if memex.window.welcoming:
        memex.window.summon()  # first run: the welcome leads to the first data folder
    ticker = _quit_on_signals(app)
    # `memex --search` is answered by this process's warm engine (engine/cli/warm.py).
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

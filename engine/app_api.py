"""What a front end (the desktop app) uses of the engine besides `engine.core`.

Its settings from `--root`, `--db` and `--config` (`settings_from_options`, read as the
CLI reads them), and answering `memex --search` from its warm engine (`BackgroundServer`).
A front end imports this module, never `engine.cli`: the warm server answers the CLI's own
requests with the CLI's parser and printing (engine/cli/warm.py), and that stays behind
this module (the "desktop does not import engine.cli" contract in pyproject.toml).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.cli.warm import serve
from engine.core import Engine
from engine.settings import Settings, SettingsError, option_overrides, settings_from_options
from engine.warm.server import WarmServer

__all__ = [
    "BackgroundServer",
    "SettingsError",
    "option_overrides",
    "settings_from_options",
]


class BackgroundServer:
    """`serve` on a worker thread, for a front end whose own thread must not wait (the
    desktop app's GUI thread); `close` waits for the start, then closes the server."""

    def __init__(
        self,
        engine_of: Callable[[], Engine],
        settings: Settings,
        on_notice: Callable[[str], None],
    ) -> None:
        self.server: WarmServer | None = None
        self._thread = threading.Thread(
            target=self._start,
            args=(engine_of, settings, on_notice),
            name="memex-warm-start",
            daemon=True,
        )

    def _start(
        self,
        engine_of: Callable[[], Engine],
        settings: Settings,
        on_notice: Callable[[str], None],
    ) -> None:
        self.server = serve(engine_of, settings, on_notice)
        if self.server is not None:
            on_notice(f"answering searches at {self.server.address}")

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        if self._thread.is_alive() or self._thread.ident is not None:
            self._thread.join()
        if self.server is not None:
            self.server.close()

"""The desktop's launcher: `memex` with the desktop app handed in as its front end.

The console script `memex` is `engine.entry:main`, which finds the app through the
`memex.frontends` entry point. This module is what runs where no package metadata is: the
frozen build (build.spec's script) and `python -m desktop.launcher` (autostart without an
installed script). Qt is imported only on the desktop paths (no arguments, --toggle,
--self-test), so `memex --search` and every command start fast and work without a display.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from engine.entry import Frontend, FrontendMissing
from engine.entry import main as memex_main


def desktop_app() -> Frontend:
    """The app's `main`, imported now (PySide6 with it)."""
    try:
        from desktop.app import main as app_main
    except ImportError as exc:
        raise FrontendMissing(f"the desktop app is not installed ({exc.name})") from None
    return app_main


def main(argv: Sequence[str] | None = None) -> int:
    return memex_main(argv, load_frontend=desktop_app)


if __name__ == "__main__":
    sys.exit(main())

"""The `memex` entry point: the window when asked for, the headless CLI otherwise.

Qt is imported only on the desktop paths (no arguments, --toggle, --self-test), so
`memex --search` and every command start fast and work on machines without a display.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

GUI_FLAGS = ("--toggle", "--self-test")


def wants_gui(argv: Sequence[str]) -> bool:
    if not argv:
        return True
    if argv[0] in ("--root", "--db", "--config") and len(argv) == 2:
        return True
    return any(flag in argv for flag in GUI_FLAGS)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if wants_gui(args):
        try:
            from desktop.app import main as app_main
        except ImportError as exc:
            sys.stderr.write(f"memex: the desktop app is not installed ({exc.name}); "
                             "install 'memex[desktop]' or use 'memex --search'\n")
            return 4
        return int(app_main(args))
    from engine.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())

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
    if any(flag in argv for flag in GUI_FLAGS):
        return True
    # Only --root/--db/--config with their values: the app on that index.
    pairs = list(zip(argv[::2], argv[1::2], strict=False))
    return len(argv) % 2 == 0 and all(flag in ("--root", "--db", "--config") for flag, _ in pairs)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if wants_gui(args):
        try:
            from desktop.app import main as app_main
        except ImportError as exc:
            sys.stderr.write(
                f"memex: the desktop app is not installed ({exc.name}); "
                "install 'memex[desktop]' or use 'memex --search'\n"
            )
            return 4
        return int(app_main(args))
    try:
        # A running app or `memex watch` answers a search at once; the one-shot path
        # loads numpy, onnxruntime and the model first (engine/warm/client.py).
        from engine.warm.client import try_warm

        code = try_warm(args)
        if code is not None:
            return code
        from engine.cli import main as cli_main
    except KeyboardInterrupt:  # Ctrl+C while numpy, onnxruntime & co. load: no traceback
        sys.stderr.write("memex: interrupted\n")
        return 130
    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())

"""The `memex` console entry point: a front end when one is asked for, the CLI otherwise.

No arguments, `--toggle`, `--self-test`, or only `--root` / `--db` / `--config` with their
values open the front end registered in the `memex.frontends` entry-point group (the
desktop app declares `desktop = "desktop.app:main"` in pyproject.toml), found through the
installed package's metadata: the engine never imports `desktop`. Everything else is the
headless CLI (engine/cli), after the warm `memex --search` had its try (engine/warm/).

This module imports only the standard library until it knows which path it takes, so
`memex --search` reaches a running app's socket without numpy, the model or Qt. It lives
beside `engine/cli`, not inside it: that package loads numpy, apsw and the store.
A frozen build has no entry-point metadata; its launcher (desktop/launcher.py) hands its
front end in as `load_frontend`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

FRONTENDS = "memex.frontends"  # the entry-point group front ends register in
FRONTEND = "desktop"  # the front end `memex` opens
GUI_FLAGS = ("--toggle", "--self-test")
EXIT_NO_FRONTEND = 4  # as EXIT_UNUSABLE in engine/cli/common.py
EXIT_INTERRUPTED = 130

Frontend = Callable[[Sequence[str]], int]


class FrontendMissing(RuntimeError):
    """No front end is installed, or it cannot load (its package, e.g. PySide6, is absent)."""


def wants_gui(argv: Sequence[str]) -> bool:
    """Whether these arguments open the front end rather than a command."""
    if not argv:
        return True
    if any(flag in argv for flag in GUI_FLAGS):
        return True
    # Only --root/--db/--config with their values: the app on that index.
    pairs = list(zip(argv[::2], argv[1::2], strict=False))
    return len(argv) % 2 == 0 and all(flag in ("--root", "--db", "--config") for flag, _ in pairs)


def installed_frontend() -> Frontend:
    """The front end the installed packages register under `memex.frontends`."""
    from importlib.metadata import entry_points  # not free: only on the way to a window

    found = [point for point in entry_points(group=FRONTENDS) if point.name == FRONTEND]
    if not found:
        raise FrontendMissing("the desktop app is not installed")
    try:
        frontend: Frontend = found[0].load()
    except ImportError as exc:
        raise FrontendMissing(f"the desktop app is not installed ({exc.name})") from None
    return frontend


def open_frontend(argv: Sequence[str], load_frontend: Callable[[], Frontend]) -> int:
    try:
        frontend = load_frontend()
    except FrontendMissing as exc:
        sys.stderr.write(f"memex: {exc}; install 'memex[desktop]' or use 'memex --search'\n")
        return EXIT_NO_FRONTEND
    return int(frontend(list(argv)))


def run_cli(argv: Sequence[str]) -> int:
    """The warm `memex --search` if a running app or `memex watch` answers, else the CLI."""
    try:
        # A running app, `memex watch` or a warm process an earlier search started answers
        # a search at once; the one-shot path loads numpy, onnxruntime and the model first
        # (engine/warm/client.py). None listening: one is started for the next search.
        from engine.warm.client import try_warm

        code = try_warm(argv, autostart=True)
        if code is not None:
            return code
        from engine.cli import main as cli_main
    except KeyboardInterrupt:  # Ctrl+C while numpy, onnxruntime & co. load: no traceback
        sys.stderr.write("memex: interrupted\n")
        return EXIT_INTERRUPTED
    return cli_main(list(argv))


def main(
    argv: Sequence[str] | None = None,
    load_frontend: Callable[[], Frontend] = installed_frontend,
) -> int:
    """`memex`: the exit code. `load_frontend`: where the front end comes from (the
    entry-point group; a frozen build passes its own)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if wants_gui(args):
        return open_frontend(args, load_frontend)
    return run_cli(args)


if __name__ == "__main__":
    sys.exit(main())

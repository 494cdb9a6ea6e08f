"""Drive the desktop app's first run under a real X server and grab each step.

    nice .venv/bin/python scripts/first_run_screenshots.py [OUT_DIR]   # default docs/screenshots

Everything happens in a temporary folder: HOME (a small home folder with a Slack export, a
WhatsApp chat, a mail archive, a Zoom transcript, an Obsidian vault and a few decoys) and
the XDG config, data and log folders, so the user's own config is never read or written.
The app starts with no config file and is driven as a user would, with the real local
model: the welcome, "Use my home folder", the list of what was recognised, Index (the
indexing progress), then a query and its first result. Each step is saved as
`first-run-<n>-<step>.png`. Without a DISPLAY it starts Xvfb itself (Debian's `xvfb`).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
QUERY = "benchmark owner"
TIMEOUT = 300.0
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent ends


def private_folders(base: Path) -> Path:
    """HOME and the XDG folders inside `base`; returns the home folder."""
    home = base / "home"
    home.mkdir()
    os.environ["HOME"] = str(home)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = base / name.lower()
        folder.mkdir()
        os.environ[name] = str(folder)
    runtime = base / "runtime"
    runtime.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ["MEMEX_INSTANCE"] = f"memex-first-run-{os.getpid()}"
    for name in ("MEMEX_CONFIG", "MEMEX_ROOT", "MEMEX_DB"):
        os.environ.pop(name, None)
    return home


def _end_with_this_process() -> None:
    """In Xvfb's process before it starts: end it when this script's process ends, even by
    an abort that runs no `finally` (Qt aborts when its xcb plugin cannot load)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_x() -> subprocess.Popen[bytes] | None:
    """Xvfb on a free display when there is no DISPLAY; None when one is there."""
    if os.environ.get("DISPLAY"):
        return None
    if shutil.which("Xvfb") is None:
        sys.exit("first_run_screenshots: no DISPLAY and no Xvfb (apt-get install xvfb)")
    display = next(n for n in range(99, 199) if not Path(f"/tmp/.X{n}-lock").exists())
    server = subprocess.Popen(
        ["Xvfb", f":{display}", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_end_with_this_process if sys.platform.startswith("linux") else None,
    )
    deadline = time.monotonic() + 20
    while not Path(f"/tmp/.X11-unix/X{display}").exists():
        if time.monotonic() > deadline or server.poll() is not None:
            sys.exit("first_run_screenshots: Xvfb did not start")
        time.sleep(0.1)
    os.environ["DISPLAY"] = f":{display}"
    return server


def wait(app: Any, done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not done():
        if time.monotonic() > deadline:
            sys.exit(f"first_run_screenshots: {what} did not happen within {TIMEOUT:.0f} s")
        app.processEvents()
        time.sleep(0.02)


def settle(app: Any, seconds: float = 0.4) -> None:
    """Let the window paint what just changed."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


class NoOpener:
    def open(self, path: str, line: int | None) -> bool:
        return False

    def reveal(self, path: str) -> bool:
        return False


def drive(out: Path, home: Path) -> list[Path]:
    """The four steps, each saved; the files written."""
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    from desktop.app import make_app
    from desktop.controller import MemexApp
    from engine.settings import load_settings

    app = make_app()
    memex = MemexApp(app, load_settings(), tray=False, hotkey=False, opener=NoOpener())
    window, welcome = memex.window, memex.welcome
    assert welcome is not None, "a first run shows the welcome"
    window.hide_on_blur = False
    shots: list[Path] = []

    def grab(step: str) -> None:
        settle(app)
        path = out / f"first-run-{len(shots) + 1}-{step}.png"
        window.grab().save(str(path))
        shots.append(path)

    window.summon()
    wait(app, window.isVisible, "the window showing")
    grab("welcome")
    welcome.use_home.click()
    wait(app, lambda: welcome.survey is not None, "the list of exports")
    grab("recognised")
    welcome.index.click()
    wait(app, lambda: memex.tasks.work_state().label != "", "indexing starting")
    grab("indexing")
    wait(app, lambda: not memex.tasks.busy and memex.tasks.work_state().label == "", "indexing")
    window.query.setText(QUERY)
    wait(app, lambda: bool(window.model.results), "a first result")
    grab("first-result")
    memex.shutdown()
    return shots


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    from tests.first_run_home import build_home

    with tempfile.TemporaryDirectory(prefix="memex-first-run-") as base:
        home = build_home(private_folders(Path(base)))
        server = start_x()
        try:
            for path in drive(out.resolve(), home):
                print(f"wrote {path}")
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

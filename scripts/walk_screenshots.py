"""Walk the desktop app as a new user under a real X server, checking and grabbing each step.

    nice .venv/bin/python scripts/walk_screenshots.py [OUT_DIR]   # default docs/screenshots

The first run (the welcome, "Use my home folder", what was recognised, Index and its
progress), five searches, a chip, a search the chip leaves empty, then a restart, on the
small home folder of tests/first_run_home.py with HOME and the XDG folders in a temporary
folder (scripts/first_run_screenshots.py's set-up: the user's own config is never read or
written; Xvfb is started when there is no DISPLAY). Each step is checked against what the
window should show (the filters in the query line, the offer to search without them, no
"Keyword results only" unless the vectors failed, no welcome after the restart) and saved
as `walk-<n>-<step>.png`; a step that goes wrong stops the walk with a sentence.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEARCHES = ("benchmark owner", "Raj", "ferry schedule", "offsite venue", "beans")
ELSEWHERE = "beans"  # the query edited under the chip: its words are in another type only


class Walk:
    """The app, its window and the screenshots taken so far."""

    def __init__(self, app: Any, out: Path) -> None:
        self.app, self.out, self.shots = app, out, []
        self.memex: Any = None

    def start(self) -> Any:
        from first_run_screenshots import NoOpener, wait

        from desktop.controller import MemexApp
        from engine.settings import load_settings

        self.memex = MemexApp(
            self.app, load_settings(), tray=False, hotkey=False, opener=NoOpener()
        )
        self.memex.window.hide_on_blur = False
        self.memex.window.summon()
        wait(self.app, self.memex.window.isVisible, "the window showing")
        return self.memex

    def grab(self, step: str) -> None:
        from first_run_screenshots import settle

        settle(self.app)
        path = self.out / f"walk-{len(self.shots) + 1}-{step}.png"
        self.memex.window.grab().save(str(path))
        self.shots.append(path)

    def search(self, text: str) -> Any:
        """Type the query as a user does (over the selected old one) and wait for its hits."""
        from first_run_screenshots import wait
        from PySide6.QtTest import QTest

        window = self.memex.window
        window.query.selectAll()
        QTest.keyClicks(window.query, text)
        wait(self.app, lambda: answered(window, text), f"the answer to “{text}”")
        return window.last_answer


def answered(window: Any, text: str) -> bool:
    answer = window.last_answer
    return (
        answer is not None and answer.request == window.request() and answer.request.query == text
    )


def check(condition: bool, what: str) -> None:
    if not condition:
        sys.exit(f"walk_screenshots: {what}")


def first_run(walk: Walk) -> None:
    from first_run_screenshots import wait

    memex = walk.start()
    welcome, tasks = memex.welcome, memex.tasks
    check(welcome is not None, "a first run shows the welcome")
    walk.grab("welcome")
    welcome.use_home.click()
    wait(walk.app, lambda: welcome.survey is not None, "the list of exports")
    check(all(" · " in welcome.exports.item(i).text() for i in range(welcome.exports.count())),
          "each export line starts with its type")  # fmt: skip
    walk.grab("recognised")
    welcome.index.click()
    wait(walk.app, lambda: tasks.work_state().total > 0 or not tasks.busy, "files counted")
    walk.grab("indexing")  # "files n of N" beside the bar
    wait(walk.app, lambda: not tasks.busy and tasks.work_state().label == "", "indexing")


def searches(walk: Walk) -> None:
    window = walk.memex.window
    for n, text in enumerate(SEARCHES, start=1):
        answer = walk.search(text)
        check(answer.response is not None, f"“{text}” failed: {answer.error}")
        fell_back = answer.response.outcome.fell_back
        check(fell_back == ("Keyword results only" in window.banner.text()),
              f"“{text}”: the banner does not match the outcome")  # fmt: skip
        check(not window.scope.button.isVisible(), f"“{text}” starts with a filter on")
        walk.grab(f"search-{n}")


def chip_then_empty(walk: Walk) -> None:
    from first_run_screenshots import wait

    window, app = walk.memex.window, walk.app
    elsewhere = set(walk.search(ELSEWHERE).counts)  # the types that hold its words
    walk.search(SEARCHES[0])
    source_type = next(t for t, n in window.filters.counts.items() if n and t not in elsewhere)
    window.filters.chips[source_type].click()
    wait(app, lambda: answered(window, SEARCHES[0]), "the search under the chip")
    check(window.scope.button.isVisible(), "the chip does not show in the query line")
    walk.grab("chip")
    window.query.setText(ELSEWHERE)  # an edit of the query, not a new one: the chip stays on
    wait(app, lambda: answered(window, ELSEWHERE), "the search left empty by the chip")
    check(window.scope.widen.isVisible(), "no offer to search without the filter")
    walk.grab("filtered-empty")


def restart(walk: Walk) -> None:
    walk.memex.shutdown()
    memex = walk.start()
    check(not memex.window.welcoming, "the restart shows the welcome again")
    walk.search(SEARCHES[1])
    walk.grab("restart")


def drive(out: Path) -> list[Path]:
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    from desktop.app import make_app

    walk = Walk(make_app(), out)
    first_run(walk)
    searches(walk)
    chip_then_empty(walk)
    restart(walk)
    walk.memex.shutdown()
    return walk.shots


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]
    from first_run_screenshots import private_folders, start_x

    from tests.first_run_home import build_home

    with tempfile.TemporaryDirectory(prefix="memex-walk-") as base:
        build_home(private_folders(Path(base)))
        server = start_x()
        try:
            for path in drive(out.resolve()):
                print(f"wrote {path}")
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`memex --self-test [--screenshot FILE] [--query Q]`: the real window, offscreen.

`--source TYPE` (repeatable) and `--person NAME` also turn chips on and set the person filter,
for screenshots of the filters.

Uses the configured index, or builds the demo index into a temporary folder when none is
configured or it does not exist. Types the query into the real window, waits for hits (and
the profile card for a person query), optionally saves a screenshot, and prints one line:
`memex self-test: ok — …` (exit 0) or `memex self-test: FAILED — …` (exit 1).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

DEMO_TODAY = "2026-06-30T12:00:00"  # the demo data layer's "today"
DEMO_QUERY = "Jonas"
TIMEOUT = 120.0
BUILD_TIMEOUT = 1200.0  # indexing the demo data with the real model on a slow machine


class SelfTestFailed(Exception):
    pass


class _NoOpener:
    def open(self, path: str, line: int | None) -> bool:
        return False

    def reveal(self, path: str) -> bool:
        return False


def _wait(app: Any, done: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise SelfTestFailed(f"{what} did not happen within {timeout:.0f} s")
        app.processEvents()
        time.sleep(0.01)


def _settings(args: Any) -> tuple[Any, Path | None]:
    """The configured settings, or demo settings on a fresh temp folder (and that folder)."""
    from engine.resources import demo_dir
    from engine.settings import load_settings, settings_from_options

    settings = settings_from_options(args.root, args.db, args.config)
    if settings.roots and settings.db_path.exists():
        if _is_demo(settings, demo_dir()):
            settings = replace(settings, now=DEMO_TODAY)  # dates read as the demo means them
        return settings.with_values(desktop__watching=False), None
    temp = Path(tempfile.mkdtemp(prefix="memex-selftest-"))
    shutil.copytree(demo_dir(), temp / "demo")
    demo = load_settings(
        args.config, roots=[str(temp / "demo")], db=str(temp / "index" / "memex.db"), now=DEMO_TODAY
    )
    return demo.with_values(desktop__watching=False), temp


def _is_demo(settings: Any, demo: Path) -> bool:
    """True when a root is a copy of the demo layer (same people file)."""
    people = (demo / "profile" / "relationships.json").read_bytes()
    for root in settings.roots:
        try:
            if (root / "profile" / "relationships.json").read_bytes() == people:
                return True
        except OSError:
            continue
    return False


def _default_query(settings: Any, demo: bool) -> str:
    if demo:
        return DEMO_QUERY
    from engine.people import load_people

    people = load_people(settings)
    return people[0].name if people else "note"


def screenshot(widget: Any, path: Path, dark: bool) -> None:
    """The window on a soft backdrop, as the docs show it."""
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter

    shot = widget.grab()
    margin = 28
    image = QImage(
        shot.width() + 2 * margin,
        shot.height() + 2 * margin,
        QImage.Format.Format_ARGB32_Premultiplied,
    )
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    gradient = QLinearGradient(QPointF(0, 0), QPointF(image.width(), image.height()))
    gradient.setColorAt(0, QColor("#1B1C22" if dark else "#E4E7F2"))
    gradient.setColorAt(1, QColor("#2A2638" if dark else "#F3ECF8"))
    painter.fillRect(image.rect(), gradient)
    painter.setPen(Qt.PenStyle.NoPen)
    for spread, alpha in ((10, 10), (6, 16), (3, 24)):
        painter.setBrush(QColor(0, 0, 0, alpha))
        painter.drawRoundedRect(
            QRectF(
                margin - spread,
                margin - spread + 4,
                shot.width() + 2 * spread,
                shot.height() + 2 * spread,
            ),
            14 + spread,
            14 + spread,
        )
    painter.drawPixmap(margin, margin, shot)
    painter.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(path)):
        raise SelfTestFailed(f"cannot save the screenshot to {path}")


def _narrow(app: Any, window: Any, sources: list[str], person: str | None) -> None:
    """Turn chips on (--source) and set the person (--person), as a user would."""
    for source_type in sources:
        chip = window.filters.chips.get(source_type)
        if chip is None:
            raise SelfTestFailed(f"no “{source_type}” chip for this query")
        chip.setChecked(True)
    if person:
        window.filters.set_person(person)
    _wait(app, lambda: window.last_answer.request == window.request(), "the filtered answer")


def _build_demo(memex: Any, app: Any) -> None:
    """Index the demo data on the app's writer, then give the filter its people."""
    built: list[Any] = []
    memex.tasks.reindex(built.append, on_error=built.append)
    _wait(app, lambda: bool(built), "indexing the demo data", BUILD_TIMEOUT)
    if isinstance(built[0], BaseException):
        raise SelfTestFailed(f"the demo index could not be built: {built[0]}")
    window = memex.window
    memex.tasks.people(lambda ps: window.filters.set_people([p.name for p in ps]))


def _check_hits(window: Any, answer: Any, query: str) -> None:
    if answer.response is None:
        raise SelfTestFailed(f"the search failed: {answer.error}")
    if window.model.rowCount() == 0:
        raise SelfTestFailed(f"no hits for “{query}”")


def _drive(
    memex: Any,
    app: Any,
    query: str,
    shot: Path | None,
    demo: bool,
    sources: list[str],
    person: str | None,
) -> str:
    from PySide6.QtTest import QTest

    window = memex.window
    if demo:
        _build_demo(memex, app)
    window.summon()
    QTest.keyClicks(window.query, query)
    _wait(
        app,
        lambda: window.last_answer is not None and window.last_answer.request.query == query,
        f"an answer for “{query}”",
    )
    if sources or person:
        _narrow(app, window, sources, person)
    answer = window.last_answer
    _check_hits(window, answer, query)
    card = ""
    if answer.person:
        _wait(app, window.card.isVisible, "the profile card")
        card = f", profile card: {window.card.name.text()}"
    _wait(app, lambda: bool(window.preview.toPlainText().strip()), "the preview")
    QTest.qWait(400)  # let the neighbours arrive for the picture
    verdict = (
        f"{window.model.rowCount()} hits for “{query}” in {answer.response.took_ms:.0f} ms "
        f"({answer.response.mode}){card}"
    )
    if shot is not None:
        screenshot(window, shot, memex.theme.dark)
        verdict += f"; screenshot {shot}"
    return verdict


def run_self_test(args: Any) -> int:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    temp: Path | None = None
    memex = None
    try:
        from desktop.app import make_app
        from desktop.controller import MemexApp

        settings, temp = _settings(args)
        app = make_app()
        memex = MemexApp(app, settings, tray=False, hotkey=False, opener=_NoOpener())
        memex.window.hide_on_blur = False
        query = args.query or _default_query(settings, temp is not None)
        shot = Path(args.screenshot).resolve() if args.screenshot else None
        verdict = _drive(
            memex, app, query, shot, temp is not None, args.source or [], (args.person or [None])[0]
        )
    except Exception as exc:  # any failure is the verdict, in one line
        sys.stdout.write(f"memex self-test: FAILED — {exc}\n")
        return 1
    finally:
        if memex is not None:
            memex.shutdown()
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    sys.stdout.write(f"memex self-test: ok — {verdict}\n")
    return 0

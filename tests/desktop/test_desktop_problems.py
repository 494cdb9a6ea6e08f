"""Status names each file with a problem, in words, with what to do; a file whose text was
indexed all the same is a warning, not an error (desktop/problems.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desktop_helpers import RecordingOpener, start_app, wait_for

from desktop.problems import GENERAL, advice
from engine import reindex
from engine.settings import Settings

BROKEN_FRONT_MATTER = "---\ntitle: [never closed\n---\n# Boat trip\n\nThe ferry leaves at nine.\n"


def test_status_lists_each_file_with_what_it_is_and_what_to_do(
    qapp: Any, qtbot: Any, settings_factory: Callable[..., Settings], opener: RecordingOpener
) -> None:
    settings = settings_factory(embedder__name="hashing", desktop__watching=False)
    root = settings.roots[0]
    (root / "trip.md").write_text(BROKEN_FRONT_MATTER, encoding="utf-8")
    (root / "locked.pdf").write_bytes(b"%PDF-1.4\n% not a real body\n")
    (root / "fine.md").write_text("# Fine\n\nNothing wrong here.\n", encoding="utf-8")
    reindex(settings=settings)
    memex = start_app(qapp, settings, opener)
    qtbot.addWidget(memex.window)
    try:
        memex.window.summon()
        memex.show_status()
        wait_for(qtbot, lambda: memex.status_box is not None)
        text = memex.status_box.text()
    finally:
        memex.shutdown()
        qapp.setQuitOnLastWindowClosed(True)
    assert "1 file(s) not indexed · 1 file(s) indexed with a problem" in text
    assert "Not indexed: locked.pdf — " in text
    assert "Indexed with a problem: trip.md — line 1: front matter" in text
    assert "Fix the note's front matter" in text and "fine.md" not in text
    # errors first, then warnings
    assert text.index("locked.pdf") < text.index("trip.md")


def test_the_advice_follows_what_the_problem_is_about() -> None:
    assert advice("reading .docx needs python-docx: pip install 'memex[documents]'").startswith(
        "Install the extra"
    )
    assert "password" in advice("encrypted PDF: it needs a password to be read")
    assert advice("something nobody foresaw") == GENERAL


def test_the_reindex_notice_counts_problems_without_calling_them_unread() -> None:
    from desktop.tray import reindex_summary
    from engine.records import IndexStats

    stats = IndexStats(files=3, chunks=4, errors=(("/n/trip.md", "line 1: front matter …"),))
    text = reindex_summary(stats)
    assert "1 file(s) with a problem (Status… says which)" in text and "could not" not in text


def test_files_of_one_name_are_told_apart_by_their_whole_paths() -> None:
    from pathlib import Path
    from types import SimpleNamespace

    from desktop.problems import problem_lines

    home = Path.home()
    status: Any = SimpleNamespace(
        errors=(
            (str(home / "Work" / "notes.md"), "line 1: front matter is not YAML"),
            (str(home / "Private" / "notes.md"), "not JSON: a value is missing (line 3)"),
            ("/media/usb/report.pdf", "encrypted PDF: it needs a password to be read"),
        ),
        indexed_with_errors=frozenset(),
    )
    text = "\n".join(problem_lines(status))
    assert "Not indexed: ~/Work/notes.md — " in text and "Not indexed: ~/Private/notes.md" in text
    assert "Not indexed: report.pdf — encrypted PDF" in text  # its name alone is enough

"""A person card's actions carry the numbers their searches show once clicked: "Only <name>"
and "All mentions", each counted as the search it opens (desktop/card_counts.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from desktop_helpers import RecordingOpener, start_app, type_query, wait_request  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from desktop.card_counts import all_mentions_request, only_person_request  # noqa: E402
from desktop.controller import MemexApp  # noqa: E402
from engine import reindex  # noqa: E402
from engine.records import SearchResult  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.sources import PROFILE_TYPE  # noqa: E402

NGOZI = "Ngozi Adeyemi"
LINES = [
    ("09:14", "Ngozi Adeyemi", "Morning! Is the ferry to Skye still running on Friday?"),
    ("09:16", "Lena Okafor", "I think so, the ferry leaves at eight"),
    ("09:17", "Ngozi Adeyemi", "Great, I'll book the cabin"),
    ("09:20", "Ngozi Adeyemi", "Do we need the car on the ferry?"),
    ("09:22", "Lena Okafor", "No, we walk on"),
    ("09:25", "Ngozi Adeyemi", "Then I'll pack light"),
    ("09:30", "Ngozi Adeyemi", "Bringing the blue tent"),
    ("09:31", "Ngozi Adeyemi", "And the stove"),
    ("09:40", "Ngozi Adeyemi", "Mum says hello"),
    ("09:41", "Ngozi Adeyemi", "She wants photos of the harbour"),
    ("09:45", "Ngozi Adeyemi", "Last ferry back is at six"),
    ("09:50", "Ngozi Adeyemi", "See you at the terminal"),
]
NOTES = {
    "Trip.md": "# Trip\n\nNgozi booked the ferry to Skye; we meet at the terminal.\n",
    "Garden.md": "# Garden\n\nBeans in bed 3, and Ngozi's tomatoes by the wall.\n",
    "Ferry times.md": "# Ferry times\n\nThe ferry leaves at eight and is back at six.\n",
}


def _home(root: Path) -> None:
    chat = "".join(f"14/03/2024, {t} - {who}: {text}\n" for t, who, text in LINES)
    (root / f"WhatsApp Chat with {NGOZI}.txt").write_text(chat, encoding="utf-8")
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")


@pytest.fixture
def ngozi_app(
    qapp: Any, qtbot: Any, settings_factory: Callable[..., Settings], opener: RecordingOpener
) -> Any:
    settings = settings_factory(embedder__name="hashing", desktop__watching=False)
    _home(settings.roots[0])
    reindex(settings=settings)
    memex = start_app(qapp, settings, opener)
    qtbot.addWidget(memex.window)
    memex.window.summon()
    yield memex
    memex.shutdown()
    qapp.setQuitOnLastWindowClosed(True)


def _count_on(label: str) -> int:
    found = re.search(r" · (\d+)$", label)
    assert found, label
    return int(found.group(1))


def _footer_matches(memex: MemexApp) -> int:
    found = re.search(r"(\d+) keyword match", memex.window.status.text())
    assert found, memex.window.status.text()
    return int(found.group(1))


def _hits(memex: MemexApp) -> list[SearchResult]:
    return [r for r in memex.window.model.results if r.source_type != PROFILE_TYPE]


def _click(qtbot: Any, button: Any) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_only_and_all_mentions_show_the_numbers_their_searches_count(
    qtbot: Any, ngozi_app: MemexApp
) -> None:
    window = ngozi_app.window
    type_query(qtbot, ngozi_app, "Ngozi ferry")
    assert window.card.isVisible() and window.card.profile is not None
    assert window.card.profile["name"] == NGOZI
    only, everything = _count_on(window.card.only.text()), _count_on(window.card.mentions.text())
    assert window.card.only.text() == f"Only {NGOZI} · {only}"
    assert window.card.mentions.text() == f"All mentions · {everything}"
    assert 0 < only <= everything
    asked = window.request()

    _click(qtbot, window.card.only)
    wait_request(qtbot, ngozi_app)
    assert window.request() == only_person_request(asked, NGOZI)
    assert _footer_matches(ngozi_app) == only
    assert window.filters.all_chip.text() == f"All  {only}"

    type_query(qtbot, ngozi_app, "Ngozi ferry")  # a new question: unfiltered again
    assert window.filters.person_name() is None
    _click(qtbot, window.card.mentions)
    wait_request(qtbot, ngozi_app)
    assert window.request() == all_mentions_request(NGOZI, asked.limit)
    assert _footer_matches(ngozi_app) == everything
    assert window.filters.all_chip.text() == f"All  {everything}"
    hits = [r for r in _hits(ngozi_app) if not r.related]
    assert len(hits) == everything  # fewer than a page: every mention, each a hit
    assert all("Ngozi" in (r.snippet + r.title + r.content) for r in hits)
    assert window.card.only.isChecked()  # what "All mentions" opened: her filter, on


def test_all_mentions_ignores_the_chips_and_dates_the_query_had(
    qtbot: Any, ngozi_app: MemexApp
) -> None:
    window = ngozi_app.window
    type_query(qtbot, ngozi_app, "Ngozi")
    everything = _count_on(window.card.mentions.text())
    window.filters.chips["note"].click()  # a chip on: "Only" counts under it, "All" does not
    wait_request(qtbot, ngozi_app)
    assert _count_on(window.card.mentions.text()) == everything
    only = _count_on(window.card.only.text())
    assert only == _footer_matches(ngozi_app) < everything  # the notes naming her
    _click(qtbot, window.card.mentions)
    wait_request(qtbot, ngozi_app)
    assert window.filters.selected_types() == () and window.filters.date_range() == (None, None)
    assert _footer_matches(ngozi_app) == everything

"""The window says who it takes to be you, and "This is me" on a card corrects it by writing
`me` into the people file when a root has one, else into the config file as `people.me`,
never into the user's data folders (desktop/owner.py, engine/people/curated.py `write_me`)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from desktop_helpers import RecordingOpener, start_app, type_query, wait_for  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from desktop.controller import MemexApp  # noqa: E402
from engine import reindex  # noqa: E402
from engine.settings import Settings  # noqa: E402

CHATS = [
    ["Lena Okafor", "Ngozi Adeyemi", "Raj Patel"],
    ["Lena Okafor", "Ngozi Adeyemi"],
    ["Lena Okafor", "Raj Patel"],
    ["Lena Okafor", "Mei Chen"],
]
INFERRED = (
    "You are taken to be Lena Okafor (inferred: the one person in most conversations); "
    "“This is me” on your own card corrects it."
)


def _chats(root: Path) -> None:
    """Four WhatsApp chats (the app's own export format), Lena in every one."""
    for number, names in enumerate(CHATS, 1):
        lines = [f"14/03/2024, 09:{10 + i:02d} - {n}: ferry plans {i}" for i, n in enumerate(names)]
        chat = root / f"WhatsApp Chat {number}.txt"
        chat.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def chats_app(
    qapp: Any, qtbot: Any, settings_factory: Callable[..., Settings], opener: RecordingOpener
) -> Iterator[MemexApp]:
    settings = settings_factory(
        embedder__name="hashing", desktop__watching=False, people__card_min_messages=1
    )
    _chats(settings.roots[0])
    reindex(settings=settings)
    memex = start_app(qapp, settings, opener)
    qtbot.addWidget(memex.window)
    memex.window.summon()
    wait_for(qtbot, lambda: len(memex.people) == 4)
    yield memex
    memex.shutdown()
    qapp.setQuitOnLastWindowClosed(True)


def _people_file(memex: MemexApp) -> Path:
    return memex.settings.roots[0] / memex.settings.people_file


def test_the_window_says_whom_it_infers_to_be_you(qtbot: Any, chats_app: MemexApp) -> None:
    chats_app.show_status()
    wait_for(qtbot, lambda: chats_app.status_box is not None)
    assert chats_app.status_box is not None
    assert chats_app.status_box.text().splitlines()[-1] == INFERRED
    card = chats_app.window.card
    type_query(qtbot, chats_app, "Lena")
    assert card.name.text() == "Lena Okafor"
    assert card.owner.text().startswith("You, as Memex takes it: you are in most of the")
    assert card.owner.isVisible() and card.me.isVisible()  # "This is me" confirms it
    type_query(qtbot, chats_app, "Ngozi")
    assert card.owner.isHidden()
    assert "Lena Okafor" not in card.seen_with.text()  # the owner is seen with no one


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    """Every file and folder under `folder`, with its size and mtime."""
    return [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))]


def _config(memex: MemexApp) -> Path:
    config = memex.settings.config_path
    assert config is not None and config.name == "no-config.toml"  # the test's, in tmp_path
    return config


def test_this_is_me_with_no_people_file_sets_people_me_in_the_config_and_the_window_follows(
    qtbot: Any, chats_app: MemexApp
) -> None:
    root, config = chats_app.settings.roots[0], _config(chats_app)
    config.write_text("[search]\nlimit = 7\n", encoding="utf-8")
    before = _listing(root)
    card = chats_app.window.card
    type_query(qtbot, chats_app, "Raj")
    assert card.name.text() == "Raj Patel" and card.owner.isHidden() and card.me.isVisible()
    qtbot.mouseClick(card.me, Qt.MouseButton.LeftButton)
    assert _listing(root) == before  # nothing made or changed among the user's data
    assert tomllib.loads(config.read_text(encoding="utf-8")) == {
        "search": {"limit": 7},
        "people": {"me": "Raj Patel"},
    }
    assert chats_app.settings.people.me == "Raj Patel"
    wait_for(qtbot, lambda: card.owner.text() == "You (your settings)")
    assert card.name.text() == "Raj Patel" and card.me.isHidden()
    wait_for(qtbot, lambda: any(p.owner == "setting" for p in chats_app.people))
    assert _status_last_line(qtbot, chats_app) == "You are Raj Patel (your settings)."
    type_query(qtbot, chats_app, "Ngozi")  # Raj, now the owner, is seen with no one
    assert card.seen_with.text() == "Lena Okafor"


def _status_last_line(qtbot: Any, memex: MemexApp) -> str:
    memex.status_box = None
    memex.show_status()
    wait_for(qtbot, lambda: memex.status_box is not None)
    assert memex.status_box is not None
    return str(memex.status_box.text().splitlines()[-1])


def test_this_is_me_writes_me_into_the_people_file_there_is_and_the_card_and_status_follow(
    qtbot: Any, chats_app: MemexApp
) -> None:
    path, config = _people_file(chats_app), _config(chats_app)
    path.parent.mkdir(parents=True)
    path.write_text('{"people": []}', encoding="utf-8")
    card = chats_app.window.card
    type_query(qtbot, chats_app, "Raj")
    assert card.name.text() == "Raj Patel" and card.owner.isHidden() and card.me.isVisible()
    qtbot.mouseClick(card.me, Qt.MouseButton.LeftButton)
    assert json.loads(path.read_text(encoding="utf-8")) == {"me": "Raj Patel", "people": []}
    assert config.read_text(encoding="utf-8") == ""  # the config is left as it was
    wait_for(qtbot, lambda: card.owner.text() == "You (your people file’s “me”)")
    assert card.name.text() == "Raj Patel" and card.me.isHidden()
    wait_for(qtbot, lambda: any(p.owner == "me" for p in chats_app.people))
    assert _status_last_line(qtbot, chats_app) == "You are Raj Patel (your people file’s “me”)."
    type_query(qtbot, chats_app, "Ngozi")  # Raj, now the owner, is seen with no one
    assert card.seen_with.text() == "Lena Okafor"
    type_query(qtbot, chats_app, "Lena")
    assert card.owner.isHidden() and card.me.isVisible()


def test_a_people_file_that_cannot_be_read_is_said_and_left_as_it_is(
    qtbot: Any, chats_app: MemexApp
) -> None:
    broken = '[{"name": "Raj Patel",'
    path = _people_file(chats_app)
    path.parent.mkdir(parents=True)
    path.write_text(broken, encoding="utf-8")
    card = chats_app.window.card
    type_query(qtbot, chats_app, "Raj")
    qtbot.mouseClick(card.me, Qt.MouseButton.LeftButton)
    banner = chats_app.window.banner
    assert banner.isVisible()
    assert banner.text().startswith(f"Memex could not note that you are Raj Patel: {path}: ")
    assert "not a JSON people file (line 1" in banner.text()
    assert path.read_text(encoding="utf-8") == broken

"""The profile card (desktop/card.py) shows what the people directory found of a person."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("PySide6")

from desktop.card import ProfileCard, facts_text  # noqa: E402
from engine.records import Conversation, Person  # noqa: E402

PRIYA = Person(
    "Priya Raman",
    "priya-raman",
    aliases=("Priya",),
    relationship="coworker",
    sources=(("slack", 6), ("meeting", 11)),
    messages=209,
    first="2025-07-03",
    last="2026-06-30T09:00:00",
    conversations=(
        Conversation("general 2026-06-30", "/d/general/2026-06-30.json", "slack", "2026-06-30"),
        Conversation("standup", "/d/standup.md", "meeting", None),
    ),
    seen_with=(("mei-chen", "Mei Chen"), ("erik-haugen", "Erik Haugen")),
)


def test_the_card_shows_sources_contact_latest_and_seen_with(qtbot: Any) -> None:
    card = ProfileCard()
    qtbot.addWidget(card)
    card.show_profile(PRIYA.as_dict(), only_on=False)
    assert card.facts.text() == (
        "Slack 6 · Meeting 11 · 209 messages\nFirst contact Jul 2025 · last Jun 2026"
    )
    assert card.latest.text() == "general 2026-06-30 · Jun 2026\nstandup"
    assert card.seen_with.text() == "Mei Chen, Erik Haugen"
    assert not card.latest.isHidden() and not card.seen_with.isHidden()
    assert card.milestones_title.isHidden()  # none in this card


def test_a_people_file_card_without_data_hides_the_data_rows(qtbot: Any) -> None:
    card = ProfileCard()
    qtbot.addWidget(card)
    only_curated = Person("Ann Lee", "ann-lee", milestones=(("2020-01-01", "met"),))
    card.show_profile(only_curated.as_dict(), only_on=True)
    assert facts_text(only_curated.as_dict()) == ""
    assert card.facts.isHidden() and card.latest.isHidden() and card.seen_title.isHidden()
    assert not card.milestones_title.isHidden()

"""A card's latest conversations are titled from the data (the chat's or channel's name, the
mail's subject), never a file stem, a day file's name or an archive's `.zip!`."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from engine import reindex
from engine.core import read_people
from engine.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"


def test_latest_conversations_are_named_as_the_data_names_them(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    root = settings.roots[0]
    chat = root / "Downloads" / "WhatsApp Chat with Raj Patel.txt"
    chat.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "whatsapp" / "WhatsApp Chat with Raj Patel.txt", chat)
    shutil.copytree(
        FIXTURES / "slack" / "export",
        root / "acme-slack",
        ignore=shutil.ignore_patterns("*.golden.*", "bad-*"),
    )
    reindex(settings=settings)
    people = {p.name: p for p in read_people(settings)}
    raj = [c.title for c in people["Raj Patel"].conversations]
    assert raj and all(title == "Raj Patel" for title in raj), raj
    titles = [c.title for p in people.values() for c in p.conversations]
    assert titles and not any(t.endswith((".txt", ".json")) or "zip!" in t for t in titles)
    assert not any(t[:4].isdigit() and t[4:5] == "-" for t in titles)  # no day file's name
    assert "#general" in titles  # the Slack channel, as its messages name it

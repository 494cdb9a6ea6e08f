"""Who the window takes to be you, the archive's owner, in words (docs/people.md, "You").

The people directory marks the owner (`Person.owner`): named by the people file's `me`,
else by the `people.me` setting, or inferred as the one person in most conversations. The card of a person says when it is
yours and offers "This is me" otherwise; Status says who you are taken to be and how.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.records import OWNER_INFERRED, OWNER_ME, OWNER_SETTING, Person

CORRECT = "“This is me” on your own card"
NAMED_BY = {OWNER_ME: "your people file’s “me”", OWNER_SETTING: "your settings"}


def owner_note(profile: dict[str, Any]) -> str:
    """The card's line for the owner ("" on anyone else's card)."""
    owner = profile.get("owner")
    if owner in NAMED_BY:
        return f"You ({NAMED_BY[owner]})"
    if owner == OWNER_INFERRED:
        return (
            "You, as Memex takes it: you are in most of the conversations. "
            f"Not you? Choose {CORRECT}."
        )
    return ""


def offers_this_is_me(profile: dict[str, Any]) -> bool:
    """ "This is me" on every card but the one the people file or the settings name."""
    return profile.get("owner") not in NAMED_BY


def owner_line(people: Iterable[Person]) -> str:
    """Status's line: who you are taken to be, how Memex knows, and how to correct it."""
    owner = next((p for p in people if p.owner), None)
    if owner is None:
        return f"Memex cannot tell who you are; {CORRECT} says it."
    if owner.owner in NAMED_BY:
        return f"You are {owner.name} ({NAMED_BY[owner.owner]})."
    return (
        f"You are taken to be {owner.name} (inferred: the one person in most "
        f"conversations); {CORRECT} corrects it."
    )

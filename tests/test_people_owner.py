"""The archive's owner is in every chat of theirs: inferred as the one person in at least
half of the conversations, and never listed as someone another person is "seen with"."""

from __future__ import annotations

from collections.abc import Callable

from engine.people.directory import build_directory
from engine.records import Mention, Person
from engine.settings import Settings

Row = tuple[str, str, Mention]


def people(settings: Settings, rows: list[Row]) -> dict[str, Person]:
    return {p.name: p for p in build_directory(rows, [], settings)}


def chat(n: int, *names: str) -> list[Row]:
    return [(f"/chats/{n}.txt", "whatsapp", Mention(name)) for name in names]


def test_the_owner_is_seen_with_no_one_else(settings_factory: Callable[..., Settings]) -> None:
    rows = [
        *chat(1, "Lena Okafor", "Ngozi Adeyemi", "Raj Patel"),
        *chat(2, "Lena Okafor", "Ngozi Adeyemi"),
        *chat(3, "Lena Okafor", "Raj Patel"),
        *chat(4, "Lena Okafor", "Mei Chen"),
    ]
    found = people(settings_factory(), rows)
    assert found["Ngozi Adeyemi"].seen_with == (("raj-patel", "Raj Patel"),)
    assert all(name != "Lena Okafor" for p in found.values() for _, name in p.seen_with)
    owner = [name for _, name in found["Lena Okafor"].seen_with]
    assert owner == ["Ngozi Adeyemi", "Raj Patel", "Mei Chen"]  # theirs, as before


def test_no_owner_when_no_one_is_in_half_the_chats(
    settings_factory: Callable[..., Settings],
) -> None:
    ann, bo, cy, di = "Ann Berg", "Bo Lind", "Cy Moss", "Di Nash"
    rows = [*chat(1, ann, bo), *chat(2, cy, di), *chat(3, ann, cy), *chat(4, bo, di)]
    found = people(settings_factory(), rows)
    assert [name for _, name in found[bo].seen_with] == [ann, di]  # both, as before

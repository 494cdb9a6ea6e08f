"""The archive's owner is in every chat of theirs: the one the people file's `me` names, or
else inferred as the one person in at least half of the conversations; never listed as
someone another person is "seen with"."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import reindex
from engine.core import Engine
from engine.people.curated import PeopleFileError, load_me, load_people, write_me
from engine.people.directory import build_directory
from engine.records import OWNER_INFERRED, OWNER_ME, OWNER_SETTING, Mention, Person
from engine.settings import Settings, load_settings

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


FOUR_CHATS = [
    *chat(1, "Lena Okafor", "Ngozi Adeyemi", "Raj Patel"),
    *chat(2, "Lena Okafor", "Ngozi Adeyemi"),
    *chat(3, "Lena Okafor", "Raj Patel"),
    *chat(4, "Lena Okafor", "Mei Chen"),
]


def owners(people: list[Person]) -> dict[str, str]:
    return {p.name: p.owner for p in people if p.owner}


def test_the_inferred_owner_is_marked_as_inferred(
    settings_factory: Callable[..., Settings],
) -> None:
    found = build_directory(FOUR_CHATS, [], settings_factory())
    assert owners(found) == {"Lena Okafor": OWNER_INFERRED}


@pytest.mark.parametrize(
    "me", ["Ngozi Adeyemi", "ngozi adeyemi", "ngozi-adeyemi", "profile:ngozi-adeyemi"]
)
def test_the_people_files_me_wins_over_the_inference(
    settings_factory: Callable[..., Settings], me: str
) -> None:
    found = {p.name: p for p in build_directory(FOUR_CHATS, [], settings_factory(), me)}
    assert owners(list(found.values())) == {"Ngozi Adeyemi": OWNER_ME}
    # Ngozi is seen with no one now; Lena, no longer taken for the owner, is again.
    assert all(name != "Ngozi Adeyemi" for p in found.values() for _, name in p.seen_with)
    assert [name for _, name in found["Raj Patel"].seen_with] == ["Lena Okafor"]


def test_me_names_someone_by_an_address_and_nobody_leaves_the_inference(
    settings_factory: Callable[..., Settings],
) -> None:
    rows = [
        *FOUR_CHATS,
        ("/mail/1.eml", "email_catalog", Mention("Mei Chen", emails=("mei@chen.example",))),
    ]
    settings = settings_factory()
    assert owners(build_directory(rows, [], settings, "Mei@Chen.example")) == {"Mei Chen": OWNER_ME}
    assert owners(build_directory(rows, [], settings, "Nobody Here")) == {
        "Lena Okafor": OWNER_INFERRED
    }


def test_write_me_keeps_the_people_and_keys_of_the_file(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory()
    path = settings.roots[0] / settings.people_file
    path.parent.mkdir(parents=True)
    path.write_text('[{"name": "Raj Patel", "relationship": "friend"}]', encoding="utf-8")
    assert write_me(settings, "Lena Okafor") == path
    assert reloaded(settings).people.me == ""  # the config is left as it was
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "me": "Lena Okafor",
        "people": [{"name": "Raj Patel", "relationship": "friend"}],
    }
    assert load_me(settings) == "Lena Okafor" and [p.name for p in load_people(settings)] == [
        "Raj Patel"
    ]
    path.write_text('{"people": [], "version": 2, "me": "x"}', encoding="utf-8")
    write_me(settings, "Ngozi Adeyemi")
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "me": "Ngozi Adeyemi",
        "people": [],
        "version": 2,
    }


def listing(folder: Path) -> list[tuple[str, int, int]]:
    """Every file and folder under `folder`, with its size and mtime."""
    found = sorted(folder.rglob("*"))
    return [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in found]


def reloaded(settings: Settings) -> Settings:
    """The settings as a new process reads them: its config file, then the roots and index."""
    assert settings.config_path is not None
    return load_settings(
        settings.config_path,
        env={},
        roots=[str(r) for r in settings.roots],
        db=str(settings.db_path),
        now=settings.now,
    )


def test_with_no_people_file_write_me_sets_people_me_in_the_config_not_in_the_root(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory()
    root, config = settings.roots[0], settings.config_path
    assert config is not None and tmp_path in config.parents  # never the user's own
    (root / "notes.md").write_text("# Ferry\n", encoding="utf-8")
    config.write_text('log_dir = "/logs"\n[search]\nlimit = 7\n', encoding="utf-8")
    before = listing(root)
    assert write_me(settings, "Lena Okafor") == config
    assert listing(root) == before  # no profile/ folder, no file, nothing touched
    assert tomllib.loads(config.read_text(encoding="utf-8")) == {
        "log_dir": "/logs",
        "search": {"limit": 7},
        "people": {"me": "Lena Okafor"},
    }
    again = reloaded(settings)
    assert again.people.me == "Lena Okafor" and again.search.limit == 7
    assert load_me(again) == ""  # no people file's `me`: the setting is the owner's name
    write_me(again, "Raj Patel")
    assert reloaded(settings).people.me == "Raj Patel" and listing(root) == before


def test_the_setting_names_the_owner_and_the_people_files_me_wins_over_it(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(people__me="raj-patel")
    assert owners(build_directory(FOUR_CHATS, [], settings)) == {"Raj Patel": OWNER_SETTING}
    found = build_directory(FOUR_CHATS, [], settings, "Mei Chen")
    assert owners(found) == {"Mei Chen": OWNER_ME}
    # A `me` naming no one is as if it were not there: the setting names the owner.
    assert owners(build_directory(FOUR_CHATS, [], settings, "Nobody")) == {
        "Raj Patel": OWNER_SETTING
    }
    nobody = settings_factory(people__me="Nobody Here")
    assert owners(build_directory(FOUR_CHATS, [], nobody)) == {"Lena Okafor": OWNER_INFERRED}


def test_write_me_never_overwrites_a_broken_people_file_nor_writes_the_config_then(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory()
    path = settings.roots[0] / settings.people_file
    path.parent.mkdir(parents=True)
    path.write_text('{"people": [', encoding="utf-8")
    with pytest.raises(PeopleFileError, match="not a JSON people file"):
        write_me(settings, "Raj Patel")
    assert path.read_text(encoding="utf-8") == '{"people": ['
    assert load_me(settings) == "" and reloaded(settings).people.me == ""


def four_chats_indexed(settings: Settings) -> None:
    """FOUR_CHATS as WhatsApp exports in the root, indexed."""
    for number in range(1, 5):
        names = [m.name for f, _, m in FOUR_CHATS if f == f"/chats/{number}.txt"]
        lines = [f"14/03/2024, 09:{10 + i:02d} - {name}: hello {i}" for i, name in enumerate(names)]
        chat = settings.roots[0] / f"WhatsApp Chat {number}.txt"
        chat.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reindex(settings=settings)


def test_an_index_follows_the_me_written_into_its_people_file(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    path = settings.roots[0] / settings.people_file
    path.parent.mkdir(parents=True)
    path.write_text('{"people": []}', encoding="utf-8")
    four_chats_indexed(settings)
    with Engine(settings) as engine:
        assert owners(engine.directory()) == {"Lena Okafor": OWNER_INFERRED}
        assert write_me(settings, "Raj Patel") == path
        engine.refresh()
        assert owners(engine.directory()) == {"Raj Patel": OWNER_ME}  # before any reindex
    assert reloaded(settings).people.me == ""  # the people file holds it, not the config
    reindex(settings=settings)
    with Engine(settings) as engine:
        assert owners(engine.directory()) == {"Raj Patel": OWNER_ME}


def test_a_new_engine_takes_the_owner_from_the_setting_write_me_made(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    four_chats_indexed(settings)
    assert write_me(settings, "Raj Patel") == settings.config_path
    noted = reloaded(settings).with_values(embedder__name="hashing")
    with Engine(noted) as engine:  # before any reindex: the directory rebuilt in memory
        assert owners(engine.directory()) == {"Raj Patel": OWNER_SETTING}
    reindex(settings=noted)
    with Engine(noted) as engine:
        assert owners(engine.directory()) == {"Raj Patel": OWNER_SETTING}
    assert not (settings.roots[0] / settings.people_file).parent.exists()

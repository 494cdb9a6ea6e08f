"""Exports inside `.zip` archives, indexed where they were downloaded, without unpacking.

A member is a file of its own (`<archive>!/<member>`), recognised by its content and read
with its siblings from the same archive; a changed archive is checked again, a removed one
takes its members with it; a zip bomb, a `../` member, a truncated or an oversized archive
is one clear error each, and loses nothing else.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.index import archives
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db
from tests.test_home_folder import FIXTURES, slack_export

SLACK_ZIP = "Downloads/Acme Slack export Mar 1 2024 - Mar 15 2024.zip"
WHATSAPP_ZIP = "Downloads/WhatsApp Chat - Climbing Crew.zip"


def zip_folder(folder: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())


def write_zip(target: Path, members: dict[str, bytes]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home folder holding a Slack export and an iOS WhatsApp export, both as downloaded."""
    staging, folder = tmp_path / "staging", tmp_path / "home"
    slack_export(staging)
    zip_folder(staging / "Downloads" / "acme-slack-export-Mar-2024", folder / SLACK_ZIP)
    chat = (FIXTURES / "whatsapp" / "_chat.txt").read_bytes()
    write_zip(folder / WHATSAPP_ZIP, {"_chat.txt": chat})
    (folder / "Documents").mkdir()
    return folder


@pytest.fixture
def at_home(home: Path, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(home, embedder__name="hashing")


def indexed(settings: Settings) -> dict[str, str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT source_file, source_type FROM index_state").fetchall()
    finally:
        conn.close()
    return {path: kind for path, kind in rows}


def members(settings: Settings, archive: str) -> dict[str, str]:
    """The indexed members of one archive, by member name."""
    prefix = str(settings.roots[0] / archive) + "!/"
    return {p[len(prefix) :]: k for p, k in indexed(settings).items() if p.startswith(prefix)}


def test_the_exports_inside_archives_are_indexed_as_they_lie(at_home: Settings) -> None:
    stats = reindex(settings=at_home)
    assert not stats.errors, stats.errors
    assert members(at_home, SLACK_ZIP) == {
        "general/2024-03-11.json": "slack",
        "general/2024-03-12.json": "slack",
        "random/2024-03-11.json": "slack",
        "D06DM0001/2024-03-11.json": "slack",
    }
    assert members(at_home, WHATSAPP_ZIP) == {"_chat.txt": "whatsapp"}
    searcher = Searcher(at_home)
    try:
        hits = searcher.search("retro notes", mode="bm25").results
    finally:
        searcher.close()
    assert hits and hits[0].source_file.endswith(".zip!/general/2024-03-12.json")
    assert "Ben Okafor" in hits[0].content  # users.json read from inside the same archive


def test_an_unchanged_archive_is_not_read_again(at_home: Settings) -> None:
    reindex(settings=at_home)
    again = reindex(settings=at_home)
    assert again.files == 0 and again.skipped == 5


def test_a_member_removed_from_a_changed_archive_is_removed(at_home: Settings, home: Path) -> None:
    reindex(settings=at_home)
    with zipfile.ZipFile(home / SLACK_ZIP) as archive:
        kept = {n: archive.read(n) for n in archive.namelist() if not n.startswith("random/")}
    write_zip(home / SLACK_ZIP, kept)
    stats = reindex(settings=at_home)
    assert "random/2024-03-11.json" not in members(at_home, SLACK_ZIP)
    assert len(members(at_home, SLACK_ZIP)) == 3
    assert stats.deleted_chunks > 0 and stats.chunks == 0  # the others' chunks were kept


def test_a_removed_archive_takes_its_members_with_it(at_home: Settings, home: Path) -> None:
    reindex(settings=at_home)
    (home / WHATSAPP_ZIP).unlink()
    reindex(settings=at_home)
    assert members(at_home, WHATSAPP_ZIP) == {}
    assert len(members(at_home, SLACK_ZIP)) == 4


def test_one_archive_given_as_a_path_is_indexed_as_the_walk_would(
    at_home: Settings, home: Path
) -> None:
    """The watcher's way in: a downloaded archive, then the same archive removed."""
    stats = reindex([home / WHATSAPP_ZIP], settings=at_home)
    assert stats.files == 1 and members(at_home, WHATSAPP_ZIP) == {"_chat.txt": "whatsapp"}
    assert members(at_home, SLACK_ZIP) == {}  # only what was given
    (home / WHATSAPP_ZIP).unlink()
    reindex([home / WHATSAPP_ZIP], settings=at_home)
    assert members(at_home, WHATSAPP_ZIP) == {}


def hostile_home(home: Path) -> None:
    chat = (FIXTURES / "whatsapp" / "_chat.txt").read_bytes()
    write_zip(
        home / "Downloads/mixed.zip",
        {
            "../../escaped.txt": chat,
            "/etc/absolute.txt": chat,
            "bomb/_chat.txt": b"0" * (8 * 2**20),  # 8 MiB of one byte: ~1000× smaller
            "ok/_chat.txt": chat,
        },
    )
    (home / "Downloads/truncated.zip").write_bytes((home / WHATSAPP_ZIP).read_bytes()[:200])


def test_hostile_members_are_refused_one_by_one_and_nothing_else_is_lost(
    at_home: Settings, home: Path
) -> None:
    hostile_home(home)
    stats = reindex(settings=at_home)
    errors = dict(stats.errors)
    mixed = str(home / "Downloads/mixed.zip")
    assert "leaves the archive" in errors[f"{mixed}!/../../escaped.txt"]
    assert "leaves the archive" in errors[f"{mixed}!//etc/absolute.txt"]
    assert "zip bomb" in errors[f"{mixed}!/bomb/_chat.txt"]
    assert "not a readable zip" in errors[str(home / "Downloads/truncated.zip")]
    assert members(at_home, "Downloads/mixed.zip") == {"ok/_chat.txt": "whatsapp"}
    assert len(members(at_home, SLACK_ZIP)) == 4 and members(at_home, WHATSAPP_ZIP)
    assert not (home.parent / "escaped.txt").exists() and not list(home.rglob("escaped.txt"))


def test_an_archive_that_becomes_unreadable_keeps_what_was_indexed(
    at_home: Settings, home: Path
) -> None:
    reindex(settings=at_home)
    whole = home / WHATSAPP_ZIP
    whole.write_bytes(whole.read_bytes()[:100])  # a download cut short, say
    stats = reindex(settings=at_home)
    assert "not a readable zip" in dict(stats.errors)[str(whole)]
    assert members(at_home, WHATSAPP_ZIP) == {"_chat.txt": "whatsapp"}


def test_an_archive_of_too_many_members_is_not_read(
    at_home: Settings, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBERS", 3)
    write_zip(home / "Downloads/many.zip", {f"{n}.txt": b"x" for n in range(4)})
    stats = reindex(settings=at_home)
    assert "holds 4 files, more than 3" in dict(stats.errors)[str(home / "Downloads/many.zip")]


def test_archives_can_be_left_alone(at_home: Settings) -> None:
    stats = reindex(settings=at_home.with_values(discovery__read_archives=False))
    assert stats.files == 0 and not stats.errors


def test_a_member_path_splits_back_into_its_archive_and_name(tmp_path: Path) -> None:
    path = archives.member_path(tmp_path / "a b.ZIP", "general/2024-03-11.json")
    assert str(path) == f"{tmp_path}/a b.ZIP!/general/2024-03-11.json"
    assert archives.split(path) == (tmp_path / "a b.ZIP", "general/2024-03-11.json")
    assert archives.split(tmp_path / "plain.zip") is None
    assert archives.split(tmp_path / "not.zip!folder/x") is None


def test_a_slack_export_unzipped_beside_its_zip_is_indexed_twice_apart(
    at_home: Settings, home: Path
) -> None:
    """Both copies are the user's files: each keeps its own path (no guessing which)."""
    shutil.copytree(FIXTURES / "whatsapp", home / "Documents" / "chats")
    reindex(settings=at_home)
    kinds = indexed(at_home)
    copies = ("Climbing Crew.zip!/_chat.txt", "chats/_chat.txt")  # the fixtures hold more chats
    assert sum(1 for p in kinds if p.endswith(copies)) == 2


def test_an_archive_of_no_export_is_opened_once_and_a_broken_one_told_once(
    at_home: Settings, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_zip(home / "Downloads/photos.zip", {"IMG_0001.jpg": b"\xff\xd8" * 100})
    (home / "Downloads/partial.zip").write_bytes(b"PK\x03\x04 not really")
    first = reindex(settings=at_home)
    assert [Path(p).name for p, _ in first.errors] == ["partial.zip"]
    opened: list[str] = []
    real = archives.list_archive
    monkeypatch.setattr(archives, "list_archive", lambda p: opened.append(p.name) or real(p))
    again = reindex(settings=at_home)
    assert again.errors == () and sorted(opened) == sorted(
        [Path(SLACK_ZIP).name, Path(WHATSAPP_ZIP).name]
    )
    write_zip(
        home / "Downloads/photos.zip",
        {"_chat.txt": (FIXTURES / "whatsapp" / "_chat.txt").read_bytes()},
    )
    reindex(settings=at_home)
    assert members(at_home, "Downloads/photos.zip") == {"_chat.txt": "whatsapp"}

"""Siblings: what a reader needs from the files beside its own (a Slack export's users.json)
is read by the indexer and handed in, and the files that read it depend on it."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePath

import apsw
import pytest

from engine.extractors import NO_SIBLINGS, Siblings, get_extractor
from engine.extractors.slack import USERS, listings
from engine.index.indexer import Action
from engine.index.runs import open_writer, reindex, run_index
from engine.index.siblings import SIBLING_NAMES, dependency_key
from engine.index.watcher import Watcher
from engine.settings import Route, Settings
from engine.store import db
from engine.store.sql import state as state_sql
from tests.conftest import assert_consistent

DEADLINE = 20.0


def users(*people: tuple[str, str]) -> str:
    return json.dumps([{"id": uid, "profile": {"real_name": name}} for uid, name in people])


def day(*messages: tuple[str, str, int]) -> str:
    """A day file: (user id, text, second of the day) per message."""
    return json.dumps(
        [
            {"type": "message", "user": uid, "text": text, "ts": f"{1710144000 + sec}.000100"}
            for uid, text, sec in messages
        ]
    )


def slack_export(root: Path) -> Path:
    """A workspace export of two channels; U1 is named only in users.json."""
    export = root / "data" / "slack" / "acme"
    for channel in ("general", "random"):
        (export / channel).mkdir(parents=True)
    (export / "users.json").write_text(users(("U1", "Ana Lima"), ("U2", "Ben Okafor")))
    (export / "general" / "2024-03-11.json").write_text(
        day(("U1", "kick-off at ten", 60), ("U2", "thanks <@U1>", 120))
    )
    (export / "general" / "2024-03-12.json").write_text(day(("U2", "standup moved", 60)))
    (export / "random" / "2024-03-11.json").write_text(day(("U1", "lunch anyone", 60)))
    return export


def texts(settings: Settings, pattern: str = "%") -> dict[str, str]:
    """Indexed content by file name (channel/day), of the files matching `pattern`."""
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute(
            "SELECT source_file, group_concat(content, '\n') FROM chunks "
            "WHERE source_file LIKE ? GROUP BY source_file",
            (pattern,),
        ).fetchall()
    finally:
        conn.close()
    return {"/".join(Path(path).parts[-2:]): text for path, text in rows}


def rename_ana(export: Path, to: str = "Ana Castillo") -> None:
    """Rewrite users.json with another name for U1, keeping its mtime and size out of play."""
    (export / "users.json").write_text(users(("U1", to), ("U2", "Ben Okafor")))


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


# -- the extractor is pure ---------------------------------------------------------------------


def test_slack_reads_names_from_the_siblings_it_is_given_never_from_disk(tmp_path: Path) -> None:
    export = slack_export(tmp_path)
    path = export / "general" / "2024-03-11.json"
    extract = get_extractor("slack")
    alone = extract(path.read_bytes(), path).drafts[0].content  # users.json is on disk
    assert "U1: kick-off" in alone and "@U1" in alone
    given = Siblings({USERS: users(("U1", "Ana Lima")).encode()})
    named = extract(path.read_bytes(), PurePath("elsewhere/general/2024-03-11.json"), given)
    assert "Ana Lima: kick-off" in named.drafts[0].content
    assert "thanks @Ana Lima" in named.drafts[0].content


def test_broken_listings_fall_back_to_ids() -> None:
    broken = Siblings({USERS: b"[{not json", "../dms.json": b'{"a": 1}'})
    assert listings(broken).users == {} and listings(broken).members == {}
    assert listings(NO_SIBLINGS).users == {}


def test_siblings_are_parsed_once_per_object() -> None:
    calls: list[int] = []

    def parse(siblings: Siblings) -> int:
        calls.append(1)
        return len(siblings.files)

    shared = Siblings({USERS: b"[]"})
    assert shared.parsed(parse) == shared.parsed(parse) == 1
    assert len(calls) == 1


def test_the_dependency_key_follows_the_content() -> None:
    assert dependency_key({}) is None
    one = dependency_key({USERS: b"[1]"})
    assert one == dependency_key({USERS: b"[1]"})
    assert one != dependency_key({USERS: b"[2]"})
    assert one != dependency_key({"../dms.json": b"[1]"})
    assert "users.json" in SIBLING_NAMES


# -- a changed users.json reindexes what depends on it -------------------------------------------


def test_a_renamed_user_reaches_the_unchanged_day_files(hashing: Settings) -> None:
    export = slack_export(hashing.roots[0])
    (hashing.roots[0] / "data" / "slack" / "log.jsonl").write_text(
        json.dumps({"ts": "1710144000.1", "user": "U1", "user_name": "ana", "text": "synced"})
    )
    first = reindex(settings=hashing)
    assert first.files == 4 and not first.errors
    assert "Ana Lima: kick-off" in texts(hashing)["general/2024-03-11.json"]

    again = reindex(settings=hashing)
    assert again.files == 0 and again.skipped == 4  # nothing changed: nothing is read

    rename_ana(export)
    renamed = reindex(settings=hashing)
    assert renamed.files == 3  # the three day files; the synced log reads no users.json
    now = texts(hashing)
    assert "Ana Castillo: kick-off" in now["general/2024-03-11.json"]
    assert "thanks @Ana Castillo" in now["general/2024-03-11.json"]
    assert "Ana Castillo: lunch anyone" in now["random/2024-03-11.json"]
    assert "Ana Lima" not in "\n".join(now.values())
    assert reindex(settings=hashing).files == 0  # the new key is stored
    assert_consistent(hashing.db_path)


def test_an_unchanged_rewrite_of_users_json_reindexes_nothing(hashing: Settings) -> None:
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)
    listing = export / "users.json"
    listing.write_bytes(listing.read_bytes())  # a new mtime, the same bytes
    os.utime(listing, (time.time() + 5, time.time() + 5))
    assert reindex(settings=hashing).files == 0


def test_removing_users_json_reindexes_with_ids(hashing: Settings) -> None:
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)
    (export / "users.json").unlink()
    assert reindex(settings=hashing).files == 3
    assert "U1: kick-off" in texts(hashing)["general/2024-03-11.json"]


def test_reindexing_the_sibling_path_reindexes_its_dependents(hashing: Settings) -> None:
    """What the watcher's batch does with a users.json event: `index_paths` on it."""
    export = slack_export(hashing.roots[0])
    reindex(settings=hashing)
    rename_ana(export)
    conn = open_writer(hashing)
    try:
        result = run_index(conn, hashing, None, _Silent(), paths=[export / "users.json"])
    finally:
        conn.close()
    indexed = sorted("/".join(Path(o.path).parts[-2:]) for o in result.changes)
    assert indexed == [
        "general/2024-03-11.json",
        "general/2024-03-12.json",
        "random/2024-03-11.json",
    ]
    assert all(o.action is Action.INDEXED for o in result.changes)
    assert "Ana Castillo: lunch anyone" in texts(hashing)["random/2024-03-11.json"]


def test_the_watcher_reindexes_day_files_when_users_json_changes(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing", watch__debounce_seconds=0.2)
    export = slack_export(settings.roots[0])
    watcher = Watcher(settings)
    watcher.start()
    try:
        assert watcher.wait_idle(DEADLINE)
        assert "Ana Lima: lunch" in texts(settings)["random/2024-03-11.json"]
        rename_ana(export)
        assert _wait_for(lambda: "Ana Castillo: lunch" in texts(settings)["random/2024-03-11.json"])
    finally:
        watcher.stop()


def test_a_sibling_outside_the_roots_is_not_read(hashing: Settings) -> None:
    """A route that puts day files at a root's top: `../users.json` would leave the root."""
    settings = replace(hashing, routes=(Route("*/*.json", "slack"),))
    root = settings.roots[0]
    (root.parent / "users.json").write_text(users(("U1", "Outsider")))
    (root / "general").mkdir()
    (root / "general" / "2024-03-11.json").write_text(day(("U1", "hello", 60)))
    assert reindex(settings=settings).files == 1
    assert "U1: hello" in texts(settings)["general/2024-03-11.json"]


# -- the column, on an index made before it --------------------------------------------------


def test_migrate_adds_the_depends_column_and_keeps_the_rows(tmp_path: Path) -> None:
    """An index of Memex's from before the column and the mentions: today's schema with
    both taken out (a file made by hand with one table would not be Memex's at all)."""
    path = tmp_path / "old.db"
    conn = db.connect(path)
    db.migrate(conn)
    conn.close()
    conn = apsw.Connection(str(path))
    conn.execute(
        "DROP TABLE mentions; DROP TABLE people; ALTER TABLE index_state DROP COLUMN depends; "
        "INSERT INTO index_state(source_file, source_type, mtime, size, indexed_at, error) "
        "VALUES('/r/a.md', 'note', 1.0, 2, 0.0, NULL)"
    )
    conn.close()
    conn = db.connect(path)
    try:
        db.migrate(conn)
        db.migrate(conn)  # safe on every start
        # Made before mentions were kept, too: marked to be read once more.
        assert conn.execute(state_sql.select_sql(), ("/r/a.md",)).fetchall() == [
            (1.0, 2, None, "mentions-pending")
        ]
    finally:
        conn.close()


class _Silent:
    def on_progress(self, done: int, total: int, path: str) -> None:
        pass

    def on_embedding(self, done: int, total: int) -> None:
        pass

    def on_error(self, path: str, message: str) -> None:
        raise AssertionError(f"{path}: {message}")


def _wait_for(predicate: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    """Poll until `predicate` holds or the deadline passes (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except KeyError:  # the file is not indexed yet
            pass
        time.sleep(0.05)
    return predicate()

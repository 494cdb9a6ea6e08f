"""A damaged index: pages overwritten in the middle of a real index, or the file cut short.
`--check` says it is damaged (exit 4), so do the writers and `status` (the integrity gate),
every command names the way forward, and `--repair` moves the file aside and rebuilds the
index from the files. Damage once found is remembered beside the file (`memex.db.damaged`):
readers refuse it too, until the file is repaired, restored or found sound.
tests/test_corruption_suite.py runs every command on each damage."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import recovery
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import damage_marker, db
from tests.conftest import assert_consistent, cli_args
from tests.test_indexing import write_layer

PAGE = 4096


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def overwrite_pages(path: Path, where: float = 0.5) -> None:
    """Four pages in the middle of the file become garbage, as a bad disk sector leaves them."""
    middle = int(os.path.getsize(path) * where) // PAGE * PAGE
    with path.open("r+b") as f:
        f.seek(middle)
        f.write(b"\xde\xad\xbe\xef" * (4 * PAGE // 4))


def overwrite_pages_a_quarter_in(path: Path) -> None:
    """Here SQLite's check itself gives up ("database disk image is malformed")."""
    overwrite_pages(path, 0.25)


def overwrite_one_page_header(path: Path) -> None:
    """A few bytes of one b-tree page's header: SQLite's check lists it, without raising."""
    middle = os.path.getsize(path) // 2 // PAGE * PAGE
    with path.open("r+b") as f:
        f.seek(middle + 1)
        f.write(b"\x07" * 7)


def truncate(path: Path) -> None:
    size = os.path.getsize(path)
    with path.open("r+b") as f:
        f.truncate(size // 3 // PAGE * PAGE + 100)


@pytest.fixture
def indexed(settings_factory: Callable[..., Settings]) -> tuple[Settings, list[str], int]:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    notes = settings.roots[0] / "notes"
    for i in range(40):  # enough pages that the middle of the file is data
        (notes / f"n{i}.md").write_text(f"# Note {i}\n" + f"Turnips and kale, row {i}. " * 60)
    reindex(settings=settings)
    conn = db.connect(settings.db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    conn.close()
    return settings, cli_args(settings), assert_consistent(settings.db_path).chunks


DAMAGE = [overwrite_pages, overwrite_pages_a_quarter_in, overwrite_one_page_header, truncate]


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__ for d in DAMAGE])
def test_a_damaged_index_is_found_named_and_rebuilt(
    indexed: tuple[Settings, list[str], int], damage: Callable[[Path], None]
) -> None:
    settings, args, chunks = indexed
    damage(settings.db_path)
    code, out, err = cli("maintenance", "--check", *args)
    assert code == 4, out + err
    assert "the index file is damaged" in out and db.REPAIR_HINT in out
    assert "still consistent" not in out + err
    code, out, err = cli("maintenance", *args)  # VACUUM reads every page
    assert code == 4 and "damaged" in err and db.REPAIR_HINT in err, out + err
    backup = ["backup", str(settings.db_path.parent / "backup.db")]
    for command in (["reindex"], ["reindex", "--full"], ["status"], backup):
        code, out, err = cli(*command, *args)  # the integrity gate: never called healthy
        assert code == 4 and db.REPAIR_HINT in err, (command, out, err)
    code, out, err = cli("--search", "turnips", *args)  # a reader: the damage was found
    assert code == 4 and db.REPAIR_HINT in err and out == "", (out, err)
    assert recovery.find_damage(settings.db_path) is not None

    code, out, err = cli("maintenance", "--repair", *args)
    assert code == 0, err
    assert not damage_marker.marker_path(settings.db_path).exists()  # repaired: forgotten
    assert cli("--search", "turnips", *args)[0] == 0
    [aside] = settings.db_path.parent.glob("memex.db.corrupt-*")
    assert aside.name in out and aside.stat().st_size > 0  # kept, never deleted
    assert assert_consistent(settings.db_path).chunks == chunks  # all of it, from the files
    assert cli("maintenance", "--check", *args)[0] == 0
    assert recovery.find_damage(settings.db_path) is None
    runs = [json.loads(line) for line in settings.log_path.read_text().splitlines()]
    [repair] = [r for r in runs if r["kind"] == "repair"]
    assert repair["rebuilt"]["moved_to"] == str(aside) and repair["rebuilt"]["chunks"] == chunks


def test_repair_without_roots_moves_nothing(
    indexed: tuple[Settings, list[str], int], tmp_path: Path
) -> None:
    settings, args, _ = indexed
    truncate(settings.db_path)
    size = os.path.getsize(settings.db_path)
    rootless = [a for i, a in enumerate(args) if i not in (0, 1)]  # no --root
    code, _, err = cli("maintenance", "--repair", *rootless)
    assert code == 4 and "give the data roots" in err, err
    assert os.path.getsize(settings.db_path) == size  # still there, untouched
    assert not list(settings.db_path.parent.glob("memex.db.corrupt-*"))


def test_a_sound_index_is_repaired_in_place(indexed: tuple[Settings, list[str], int]) -> None:
    settings, args, chunks = indexed
    code, out, _ = cli("maintenance", "--repair", *args)
    assert code == 0 and "FTS rebuilt" in out and "moved" not in out
    assert not list(settings.db_path.parent.glob("memex.db.corrupt-*"))
    assert assert_consistent(settings.db_path).chunks == chunks


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__ for d in DAMAGE])
def test_the_gate_names_what_sqlite_found(
    indexed: tuple[Settings, list[str], int], damage: Callable[[Path], None]
) -> None:
    settings, _, _ = indexed
    conn = db.connect(settings.db_path, create=False)
    assert db.quick_check(conn) is None
    db.verify(conn, settings.db_path)  # a sound file passes
    conn.close()
    damage(settings.db_path)
    with pytest.raises(db.IndexDamaged) as raised:
        db.connect(settings.db_path, create=False, verify_first=True).close()
    assert raised.value.reason and raised.value.reason in str(raised.value)
    assert str(raised.value).endswith(db.REPAIR_HINT) and "\n" not in str(raised.value)


# -- damage once found is remembered: the marker beside the index


def found_by_status(settings: Settings, args: list[str]) -> Path:
    """Damage the index where a search does not read (one b-tree page's header), let
    `status` (the gate) find it; the marker it leaves."""
    overwrite_one_page_header(settings.db_path)
    assert cli("status", *args)[0] == 4
    return damage_marker.marker_path(settings.db_path)


def test_the_marker_tells_the_reason_the_time_and_the_file(
    indexed: tuple[Settings, list[str], int],
) -> None:
    settings, args, _ = indexed
    assert not damage_marker.marker_path(settings.db_path).exists()  # sound: none
    marker = found_by_status(settings, args)
    assert marker.stat().st_mode & 0o777 == 0o600
    record = json.loads(marker.read_text(encoding="utf-8"))
    st = settings.db_path.stat()
    assert record["file"] == {
        "st_dev": st.st_dev,
        "st_ino": st.st_ino,
        "st_size": st.st_size,
        "st_mtime_ns": st.st_mtime_ns,
    }
    assert record["reason"] and record["found"].endswith("Z")
    code, out, err = cli("--search", "turnips", "--json", *args)
    assert code == 4 and out == "" and record["reason"] in err and db.REPAIR_HINT in err
    with pytest.raises(db.IndexDamaged, match="is damaged"):
        db.connect(settings.db_path, create=False)  # every open, readers included


@pytest.mark.parametrize("restore", ["copied over", "renamed over"])
def test_a_restored_backup_is_searched_again_and_the_marker_dropped(
    indexed: tuple[Settings, list[str], int], tmp_path: Path, restore: str
) -> None:
    settings, args, _ = indexed
    good = tmp_path / "good.db"
    assert cli("backup", str(good), *args)[0] == 0
    marker = found_by_status(settings, args)
    assert cli("--search", "turnips", *args)[0] == 4
    if restore == "copied over":  # the same inode, new bytes and mtime
        shutil.copy(good, settings.db_path)
    else:  # another inode
        os.replace(good, settings.db_path)
    code, out, err = cli("--search", "turnips", *args)
    assert code == 0 and "hits" in out, err
    assert not marker.exists()  # stale: removed by the first open that saw it


def test_a_check_that_finds_the_file_sound_forgets_the_damage(
    indexed: tuple[Settings, list[str], int],
) -> None:
    settings, args, _ = indexed
    damage_marker.remember(settings.db_path, "a read error that was the cable's fault")
    marker = damage_marker.marker_path(settings.db_path)
    code, _, err = cli("--search", "turnips", *args)
    assert code == 4 and "the cable's fault" in err and db.REPAIR_HINT in err
    assert cli("maintenance", "--check", *args)[0] == 0  # reads the file itself: sound
    assert not marker.exists()
    assert cli("--search", "turnips", *args)[0] == 0


def test_a_repair_of_a_sound_file_forgets_the_damage(
    indexed: tuple[Settings, list[str], int],
) -> None:
    settings, args, chunks = indexed
    damage_marker.remember(settings.db_path, "malformed, once")
    code, out, err = cli("maintenance", "--repair", *args)
    assert code == 0 and "FTS rebuilt" in out and "moved" not in out, err
    assert not damage_marker.marker_path(settings.db_path).exists()
    assert assert_consistent(settings.db_path).chunks == chunks


def test_the_first_finding_is_the_one_told(indexed: tuple[Settings, list[str], int]) -> None:
    settings, args, _ = indexed
    marker = found_by_status(settings, args)
    first = json.loads(marker.read_text(encoding="utf-8"))["reason"]
    assert cli("maintenance", "--check", *args)[0] == 4  # finds it again, in more words
    for command in (["--search", "turnips"], ["reindex"], ["maintenance"]):
        code, _, err = cli(*command, *args)
        assert code == 4 and f"({first})" in err, (command, err)


def test_a_marker_that_cannot_be_written_leaves_the_damage_reported(
    indexed: tuple[Settings, list[str], int],
) -> None:
    """Where the marker cannot be written (here a folder holds its name, as a read-only
    folder would refuse it), the gate still says "damaged"; nothing else goes wrong."""
    settings, args, _ = indexed
    blocked = damage_marker.marker_path(settings.db_path)
    blocked.mkdir()
    overwrite_one_page_header(settings.db_path)
    code, out, err = cli("status", *args)
    assert code == 4 and "damaged" in err and db.REPAIR_HINT in err and out == "", err
    assert blocked.is_dir() and not list(blocked.iterdir())
    assert [p.name for p in settings.db_path.parent.glob("memex.db.damaged.*")] == []
    db.connect(settings.db_path, create=False, readonly=True).close()  # readers still open


def test_a_read_only_open_writes_no_marker(indexed: tuple[Settings, list[str], int]) -> None:
    settings, _, _ = indexed
    overwrite_one_page_header(settings.db_path)
    with pytest.raises(db.IndexDamaged):
        db.connect(settings.db_path, readonly=True, verify_first=True)
    assert not damage_marker.marker_path(settings.db_path).exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_still_opens_and_reports_damage(
    indexed: tuple[Settings, list[str], int],
) -> None:
    settings, _, _ = indexed
    folder = settings.db_path.parent
    overwrite_one_page_header(settings.db_path)
    # SQLite reads a WAL index in a read-only folder only while its -shm exists: as it
    # does while the app or a watcher has it open.
    holder = db.connect(settings.db_path, create=False)
    holder.execute("SELECT count(*) FROM meta").fetchall()
    folder.chmod(0o500)
    try:
        db.connect(settings.db_path, readonly=True).close()  # a reader opens as before
        for readonly in (True, False):
            with pytest.raises(db.IndexDamaged):
                db.connect(settings.db_path, readonly=readonly, verify_first=True)
        assert not damage_marker.marker_path(settings.db_path).exists()
    finally:
        folder.chmod(0o700)
        holder.close()


def test_an_unreadable_or_foreign_marker_is_dropped(
    indexed: tuple[Settings, list[str], int],
) -> None:
    settings, args, _ = indexed
    marker = damage_marker.marker_path(settings.db_path)
    for text in ("{not json", '{"reason": 4, "file": {}}', "[]", '{"reason": "x", "file": {}}'):
        marker.write_text(text)
        assert cli("--search", "turnips", *args)[0] == 0, text
        assert not marker.exists(), text

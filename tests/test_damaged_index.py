"""A damaged index: pages overwritten in the middle of a real index, or the file cut short.
`--check` says it is damaged (exit 4), so do the writers and `status` (the integrity gate),
every command names the way forward, and `--repair` moves the file aside and rebuilds the
index from the files. tests/test_corruption_suite.py runs every command on each damage."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import recovery
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
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
    code, out, err = cli("--search", "turnips", *args)  # a reader: fine where it reads
    assert code == 0 or (code == 4 and db.REPAIR_HINT in err), (out, err)
    assert recovery.find_damage(settings.db_path) is not None

    code, out, err = cli("maintenance", "--repair", *args)
    assert code == 0, err
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

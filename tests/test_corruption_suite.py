"""The corruption suite: every command that opens the index, on an index damaged five ways.

Damage is deterministic: seeded random bytes over pages in the middle of the file, the file
cut to half its size — and one seeded page that a search does not read, which only a gated
command finds; once found, it is remembered (the marker), and every command refuses the file.
No run may exit 0 on a damaged index, none may print a traceback, and every one names the way
forward (`memex maintenance --repair`): the integrity gate of docs/security-integrity.md.
A file whose SQLite header is gone — another program's (non-SQLite) file in its place, its
100-byte header zeroed — cannot be told from a file that was never Memex's: every command
refuses it as not a Memex index (exit 3) and writes nothing (tests/test_foreign_files.py).
"""

from __future__ import annotations

import io
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import backup as backup_module
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import damage_marker, db
from tests.conftest import assert_consistent, cli_args, make_settings
from tests.test_indexing import write_layer
from tests.test_mcp import connect, error

PAGE = 4096
SEED = 2026
ROOT = Path(__file__).resolve().parent.parent
BOOT = "import sys; from engine.cli import main; sys.exit(main())"
HANG_SECONDS = 120  # only a net under a watcher that never stops: it exits in seconds
SINGLE_PAGE_SEEDS = range(20)
MAX_DRAWS = 60  # seeded pages tried per seed for one that the search does not read


def random_pages(path: Path) -> None:
    """Six pages in the middle half of the file become seeded random bytes (a bad sector)."""
    rng = random.Random(SEED)
    pages = path.stat().st_size // PAGE
    with path.open("r+b") as f:
        for page in sorted(rng.sample(range(pages // 4, 3 * pages // 4), 6)):
            f.seek(page * PAGE)
            f.write(rng.randbytes(PAGE))


def truncated_half(path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size // 2 // PAGE * PAGE)


def foreign_file(path: Path) -> None:
    """Another program's file under the index's name: not SQLite at all."""
    path.write_bytes(b"%PDF-1.7\n" + random.Random(SEED).randbytes(64 * 1024))


def zeroed_header(path: Path) -> None:
    with path.open("r+b") as f:
        f.write(b"\0" * 100)


DAMAGE: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (random_pages, truncated_half)}
NO_HEADER: dict[str, Callable[[Path], None]] = {
    f.__name__: f for f in (foreign_file, zeroed_header)
}

# Every command that opens the index ({root}, {backup} and {id} are filled in per run).
COMMANDS: dict[str, list[str]] = {
    "reindex": ["reindex"],
    "reindex --full": ["reindex", "--full"],
    "reindex PATH": ["reindex", "{root}/notes"],
    "maintenance": ["maintenance"],
    "maintenance --no-vacuum": ["maintenance", "--no-vacuum"],
    "maintenance --check": ["maintenance", "--check"],
    "maintenance --check --json": ["maintenance", "--check", "--json"],
    "backup": ["backup", "{backup}"],
    "backup --force": ["backup", "--force", "{backup}"],
    "status": ["status"],
    "status --json": ["status", "--json"],
    "--search": ["--search", "turnips"],
    "--search --json": ["--search", "turnips", "--json"],
    "opened": ["opened", "{id}"],
    "frecency": ["frecency"],
    "frecency --json": ["frecency", "--json"],
    "frecency --clear": ["frecency", "--clear"],
    "people": ["people"],
    "people --json": ["people", "--json"],
}


@pytest.fixture(scope="module")
def master(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A real index (hashing embedder) of the test layer and 40 long notes, checkpointed:
    (root, index file, one chunk's id). Built once; each run damages its own copy."""
    base = tmp_path_factory.mktemp("corruption")
    root, index = base / "root", base / "index" / "memex.db"
    root.mkdir()
    index.parent.mkdir()
    write_layer(root)
    for i in range(40):  # enough pages that the middle of the file is data
        (root / "notes" / f"n{i}.md").write_text(f"# Note {i}\n" + f"Turnips, row {i}. " * 60)
    reindex(settings=make_settings(root, index, embedder__name="hashing"))
    conn = db.connect(index)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    chunk_id = str(conn.execute("SELECT id FROM chunks LIMIT 1").fetchone()[0])
    conn.close()
    return root, index, chunk_id


def copy_of(master: tuple[Path, Path, str], tmp_path: Path) -> tuple[Settings, list[str]]:
    root, index, _ = master
    target = tmp_path / "index" / "memex.db"
    target.parent.mkdir()
    shutil.copy(index, target)
    settings = make_settings(root, target, embedder__name="hashing")
    return settings, cli_args(settings)


def argv_for(command: str, master: tuple[Path, Path, str], tmp_path: Path) -> list[str]:
    fill = {"{root}": str(master[0]), "{backup}": str(tmp_path / "backup.db"), "{id}": master[2]}
    argv = COMMANDS[command]
    for key, value in fill.items():
        argv = [a.replace(key, value) for a in argv]
    return argv


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("damage", DAMAGE)
def test_no_command_calls_a_damaged_index_healthy(
    master: tuple[Path, Path, str], tmp_path: Path, damage: str, command: str
) -> None:
    settings, args = copy_of(master, tmp_path)
    DAMAGE[damage](settings.db_path)
    before = settings.db_path.read_bytes()
    code, out, err = cli(*argv_for(command, master, tmp_path), *args)
    assert code == 4, (code, out, err)
    assert "Traceback" not in out + err
    assert "damaged" in out + err and db.REPAIR_HINT in out + err, (out, err)
    if "--check" not in command:  # the problems are on stdout there, a report
        assert out == "" and err.count("\n") == 1, (out, err)  # one sentence
    assert settings.db_path.read_bytes() == before  # nothing written to the damaged file
    assert not (tmp_path / "backup.db").exists()  # no backup of a damaged index


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("damage", NO_HEADER)
def test_no_command_writes_into_a_file_without_a_header(
    master: tuple[Path, Path, str], tmp_path: Path, damage: str, command: str
) -> None:
    settings, args = copy_of(master, tmp_path)
    NO_HEADER[damage](settings.db_path)
    before = settings.db_path.read_bytes()
    beside = sorted(p.name for p in settings.db_path.parent.iterdir())
    code, out, err = cli(*argv_for(command, master, tmp_path), *args)
    assert code == 3 and out == "" and err.count("\n") == 1, (code, out, err)
    assert "is not a Memex index (it is not an SQLite database" in err, err
    assert settings.db_path.read_bytes() == before
    assert sorted(p.name for p in settings.db_path.parent.iterdir()) == beside  # no marker
    assert not (tmp_path / "backup.db").exists()


@pytest.mark.parametrize("damage", DAMAGE)
def test_watch_stops_at_once_on_a_damaged_index(
    master: tuple[Path, Path, str], tmp_path: Path, damage: str
) -> None:
    settings, args = copy_of(master, tmp_path)
    DAMAGE[damage](settings.db_path)
    child = subprocess.Popen(
        [sys.executable, "-c", BOOT, "watch", "--polling", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = child.communicate(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=HANG_SECONDS)
        pytest.fail(f"watch kept running on a damaged index: {out} {err}")
    assert child.returncode == 4, (out, err)
    assert "Traceback" not in out + err and db.REPAIR_HINT in err, err


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("damage", DAMAGE)
async def test_mcp_tools_say_the_index_is_damaged(
    master: tuple[Path, Path, str], tmp_path: Path, damage: str
) -> None:
    settings, _ = copy_of(master, tmp_path)
    DAMAGE[damage](settings.db_path)
    log = tmp_path / "server.log"
    async with connect(settings, log) as session:
        messages = [await error(session, "search", query="turnips"), await error(session, "status")]
    for message in messages:
        assert "damaged" in message and db.REPAIR_HINT in message, message
    assert "Traceback" not in log.read_text(encoding="utf-8")


def test_every_command_passes_a_sound_index(master: tuple[Path, Path, str], tmp_path: Path) -> None:
    """The gate never stops a sound index: each command exits 0 (the check finds no problem)."""
    settings, args = copy_of(master, tmp_path)
    for command in COMMANDS:
        if command == "backup --force":
            continue  # "backup" has written the file; --force is the same copy again
        code, out, err = cli(*argv_for(command, master, tmp_path), *args)
        assert code == 0 and "Traceback" not in err, (command, out, err)
    assert assert_consistent(tmp_path / "backup.db").chunks > 0  # the checked copy
    assert not damage_marker.marker_path(settings.db_path).exists()  # nothing remembered


def test_a_backup_of_a_damaged_index_leaves_the_old_backup_as_it_was(
    master: tuple[Path, Path, str], tmp_path: Path
) -> None:
    settings, args = copy_of(master, tmp_path)
    target = tmp_path / "backup.db"
    assert cli("backup", str(target), *args)[0] == 0
    good = target.read_bytes()
    random_pages(settings.db_path)
    code, _, err = cli("backup", "--force", str(target), *args)
    assert code == 4 and db.REPAIR_HINT in err, err
    assert target.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.db", "index"]  # no partial


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_copy_that_fails_its_check_is_not_kept(
    master: tuple[Path, Path, str], tmp_path: Path, damage: str
) -> None:
    """The copy is checked before it replaces the target (here a copy damaged on purpose)."""
    partial, target = tmp_path / ".backup.db.partial", tmp_path / "backup.db"
    shutil.copy(master[1], partial)
    backup_module.verify_copy(partial, target)  # a sound copy passes
    DAMAGE[damage](partial)
    with pytest.raises(backup_module.BackupError, match="failed SQLite's check"):
        backup_module.verify_copy(partial, target)
    assert not target.exists() and os.path.exists(partial)  # backup() removes the partial


# -- one damaged page that a search does not read: found by a gated command, then remembered


def single_page(path: Path, page: int, seed: int) -> None:
    """One page (0-based) becomes seeded random bytes: a single bad sector."""
    with path.open("r+b") as f:
        f.seek(page * PAGE)
        f.write(random.Random(seed).randbytes(PAGE))


@pytest.fixture(scope="module")
def unread_pages(
    master: tuple[Path, Path, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[int, int]:
    """Per seed, the first of its seeded pages that a one-shot search does not read: the
    search exits 0 on it, so only a gated command can find the damage (deterministic: the
    same index, the same draws)."""
    base = tmp_path_factory.mktemp("unread")
    settings, args = copy_of(master, base)
    pages = master[1].stat().st_size // PAGE
    chosen: dict[int, int] = {}
    for seed in SINGLE_PAGE_SEEDS:
        draws = random.Random(seed)
        for _ in range(MAX_DRAWS):
            page = draws.randrange(1, pages)  # page 0 holds the header: read by every open
            shutil.copy(master[1], settings.db_path)
            single_page(settings.db_path, page, seed)
            if cli("--search", "turnips", *args)[0] == 0:
                chosen[seed] = page
                break
            damage_marker.forget(settings.db_path)  # the search found it: try another page
        else:
            pytest.fail(f"seed {seed}: every page drawn was read by the search")
    return chosen


def damaged_unread_copy(
    master: tuple[Path, Path, str], tmp_path: Path, unread: dict[int, int], seed: int
) -> tuple[Settings, list[str], str]:
    """A copy with the seed's unread page damaged, found by a gated command (`reindex` for
    even seeds, `status` for odd ones): (settings, CLI args, the gate's sentence)."""
    settings, args = copy_of(master, tmp_path)
    single_page(settings.db_path, unread[seed], seed)
    assert cli("--search", "turnips", *args)[0] == 0  # the search alone never sees it
    assert not damage_marker.marker_path(settings.db_path).exists()
    gate = ["reindex"] if seed % 2 == 0 else ["status"]
    code, out, err = cli(*gate, *args)
    assert code == 4 and db.REPAIR_HINT in err and out == "", (gate, out, err)
    return settings, args, err


@pytest.mark.parametrize("seed", SINGLE_PAGE_SEEDS)
def test_one_damaged_page_once_found_is_refused_by_every_command(
    master: tuple[Path, Path, str], tmp_path: Path, unread_pages: dict[int, int], seed: int
) -> None:
    settings, args, found = damaged_unread_copy(master, tmp_path, unread_pages, seed)
    marker = damage_marker.marker_path(settings.db_path)
    assert marker.stat().st_mode & 0o777 == 0o600
    before = settings.db_path.read_bytes()
    for command in COMMANDS:
        code, out, err = cli(*argv_for(command, master, tmp_path), *args)
        assert code == 4, (command, code, out, err)
        assert "Traceback" not in out + err and db.REPAIR_HINT in out + err, (command, err)
        if "--check" not in command:  # --check reads the file itself: its report on stdout
            assert out == "" and err == found, (command, out, err)  # the sentence first said
    assert settings.db_path.read_bytes() == before  # nothing written to the damaged file
    assert not (tmp_path / "backup.db").exists()
    assert marker.exists()


def test_the_unread_pages_lie_in_the_files_data(
    master: tuple[Path, Path, str], unread_pages: dict[int, int]
) -> None:
    """The pages chosen are spread over the file, not one page found again and again."""
    pages = master[1].stat().st_size // PAGE
    assert len(set(unread_pages.values())) >= 8, unread_pages
    assert all(0 < page < pages for page in unread_pages.values())


@pytest.mark.anyio
@pytest.mark.parametrize("seed", [SINGLE_PAGE_SEEDS[0], SINGLE_PAGE_SEEDS[1]])
async def test_mcp_refuses_one_damaged_page_once_found(
    master: tuple[Path, Path, str], tmp_path: Path, unread_pages: dict[int, int], seed: int
) -> None:
    settings, _, _ = damaged_unread_copy(master, tmp_path, unread_pages, seed)
    log = tmp_path / "server.log"
    async with connect(settings, log) as session:
        messages = [await error(session, "search", query="turnips"), await error(session, "status")]
    for message in messages:
        assert "damaged" in message and db.REPAIR_HINT in message, message
    assert "Traceback" not in log.read_text(encoding="utf-8")

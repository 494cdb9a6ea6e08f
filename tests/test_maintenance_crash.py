"""SIGKILL during a vec0 rebuild, a VACUUM or a reindex: `--check` passes, the next run finishes."""

from __future__ import annotations

import io
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from engine.cli import run
from engine.embedders.hashing import HashingEmbedder
from engine.index.maintenance import maintain
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db, vectors
from tests.conftest import assert_consistent, make_settings
from tests.test_crash import build_layer, kill_after

VECTORS = 12_000
DIM = 384

CHILD = """
import sys, time
from pathlib import Path
import engine.index.maintenance as m
from tests.conftest import make_settings

stage, count = sys.argv[3], int(sys.argv[4])
inserted = 0
real_insert = m.vectors.insert_vector

def insert(*args):
    # Park the child at a chosen row of the vec0 rebuild: the kill lands exactly there.
    global inserted
    rows = real_insert(*args)
    inserted += 1
    if stage == "rebuild" and inserted == count:
        print("here", flush=True)
        time.sleep(120)
    return rows

m.vectors.insert_vector = insert
real_open = m._open_existing
real_rebuild = m.rebuild_vectors
rebuilt = False

def rebuild(conn):
    global rebuilt
    rows = real_rebuild(conn)
    rebuilt = True
    return rows

calls = 0

def progress():
    # Called every 1000 VM steps: once VACUUM has run for a while, park it mid-way.
    global calls
    if stage == "vacuum" and rebuilt:
        calls += 1
        if calls == count:
            print("here", flush=True)
            time.sleep(120)
    return False

def open_existing(settings):
    conn = real_open(settings)
    conn.set_progress_handler(progress, 1000)
    return conn

m.rebuild_vectors = rebuild
m._open_existing = open_existing
settings = make_settings(Path(sys.argv[1]), Path(sys.argv[2]), embedder__name="hashing")
m.maintain(settings)
print("finished", flush=True)
"""


@pytest.fixture(scope="module")
def master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of 12,000 chunks with 384-d vectors, built with SQL (no extraction needed)."""
    path = tmp_path_factory.mktemp("rebuild-master") / "master.db"
    conn = db.connect(path)
    db.migrate(conn)
    vectors.ensure_vec_table(conn, HashingEmbedder(DIM))
    table = db.active_vec_table(conn)
    assert table is not None
    rng = np.random.default_rng(3)
    with db.transaction(conn):
        conn.execute(
            "INSERT INTO index_state(source_file, mtime, size, indexed_at) "
            "VALUES ('synthetic.jsonl', 0, 0, 0)"
        )
        for i in range(VECTORS):
            blob = rng.random(DIM, dtype=np.float32).tobytes()
            conn.execute(
                "INSERT INTO chunks(id, source_file, source_type, content, embedding, "
                "indexed_at, content_hash, content_date) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
                (
                    f"c{i}",
                    "synthetic.jsonl",
                    "slack",
                    f"message {i} about {i % 97}",
                    blob,
                    f"h{i}",
                    f"2026-0{1 + i % 9}-1{i % 10}",
                ),
            )
            vectors.insert_vector(
                conn, table, conn.last_insert_rowid(), blob, "slack", f"2026-0{1 + i % 9}-1{i % 10}"
            )
        conn.execute("DELETE FROM chunks WHERE seq % 3 = 0")  # churn: dead slots everywhere
        conn.execute(f"DELETE FROM {table} WHERE rowid % 3 = 0")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def check_cli(db_path: Path, root: Path) -> int:
    out, err = io.StringIO(), io.StringIO()
    config = db_path.parent / "check.toml"
    config.write_text("")
    code = run(
        [
            "maintenance",
            "--check",
            "--db",
            str(db_path),
            "--root",
            str(root),
            "--config",
            str(config),
        ],
        out,
        err,
    )
    assert code == 0, out.getvalue() + err.getvalue()
    return code


def kill_maintenance(root: Path, db_path: Path, stage: str, count: int) -> bool:
    """Run maintenance in a child parked at a stage; SIGKILL it there."""
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(db_path), stage, str(count)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    ) as child:
        assert child.stdout is not None
        reached = child.stdout.readline().strip() == "here"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    return reached


@pytest.mark.slow
# Kill points: the first, a middle and the last row of the vec0 rebuild, and inside VACUUM.
@pytest.mark.parametrize(
    ("stage", "count"),
    [("rebuild", 1), ("rebuild", 4000), ("rebuild", 8000), ("vacuum", 5), ("vacuum", 50)],
)
def test_sigkill_during_vector_rebuild_or_vacuum(
    master: Path, tmp_path: Path, stage: str, count: int
) -> None:
    db_path = tmp_path / "index" / "memex.db"
    db_path.parent.mkdir()
    shutil.copy(master, db_path)
    root = tmp_path / "root"
    root.mkdir()
    expected = assert_consistent(master)
    assert kill_maintenance(root, db_path, stage, count)  # killed mid-work, not after
    check_cli(db_path, root)
    assert assert_consistent(db_path) == expected  # old table or new, never a mix
    settings = make_settings(root, db_path, embedder__name="hashing")
    result = maintain(settings)  # the lock died with the child: the next run goes ahead
    assert result.maintenance is not None and result.maintenance.dead_slots_after.dead == 0
    assert assert_consistent(db_path) == expected


@pytest.mark.slow
def test_sigkill_during_reindex_then_check_and_finish(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0], files=20, messages=200)
    clean = reindex(settings=settings.with_values(db=str(tmp_path / "reference.db")))
    db_path = tmp_path / "crash.db"
    assert kill_after(settings.roots[0], db_path, 7)
    check_cli(db_path, settings.roots[0])
    stats = reindex(settings=settings.with_values(db=str(db_path)))
    assert stats.files == 20 - 6 or stats.files == 20 - 7  # at most one file's work redone
    counts = assert_consistent(db_path)
    assert counts.chunks == clean.chunks == counts.vectors

"""SIGKILL during a vec0 rebuild, a VACUUM or a reindex: `--check` passes, the next run finishes."""

from __future__ import annotations

import io
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from engine import db, vectors
from engine.cli import run
from engine.embedders.hashing import HashingEmbedder
from engine.indexer import reindex
from engine.maintenance import maintain
from engine.settings import Settings
from tests.conftest import assert_consistent, make_settings
from tests.test_crash import build_layer, kill_after

VECTORS = 12_000
DIM = 384

CHILD = """
import sys
from pathlib import Path
from engine.maintenance import maintain
from tests.conftest import make_settings

settings = make_settings(Path(sys.argv[1]), Path(sys.argv[2]), embedder__name="hashing")
print("go", flush=True)
maintain(settings)
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
        conn.execute("INSERT INTO index_state(source_file, mtime, size, indexed_at) "
                     "VALUES ('synthetic.jsonl', 0, 0, 0)")
        for i in range(VECTORS):
            blob = rng.random(DIM, dtype=np.float32).tobytes()
            conn.execute("INSERT INTO chunks(id, source_file, source_type, content, embedding, "
                         "indexed_at, content_hash, content_date) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
                         (f"c{i}", "synthetic.jsonl", "slack", f"message {i} about {i % 97}",
                          blob, f"h{i}", f"2026-0{1 + i % 9}-1{i % 10}"))
            vectors.insert_vector(conn, table, conn.last_insert_rowid(), blob, "slack",
                                  f"2026-0{1 + i % 9}-1{i % 10}")
        conn.execute("DELETE FROM chunks WHERE seq % 3 = 0")  # churn: dead slots everywhere
        conn.execute(f"DELETE FROM {table} WHERE rowid % 3 = 0")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def check_cli(db_path: Path, root: Path) -> int:
    out, err = io.StringIO(), io.StringIO()
    config = db_path.parent / "check.toml"
    config.write_text("")
    code = run(["maintenance", "--check", "--db", str(db_path), "--root", str(root),
                "--config", str(config)], out, err)
    assert code == 0, out.getvalue() + err.getvalue()
    return code


def kill_maintenance(root: Path, db_path: Path, delay: float) -> bool:
    """Run maintenance in a child; SIGKILL it `delay` seconds after it starts working."""
    with subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(db_path)],
                          stdout=subprocess.PIPE, text=True,
                          cwd=Path(__file__).parent.parent) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "go"
        time.sleep(delay)
        killed = child.poll() is None
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    return killed


@pytest.mark.slow
# Measured on this machine: rebuild 0.05-0.55 s after "go", VACUUM until ~0.9 s.
@pytest.mark.parametrize("delay", [0.1, 0.3, 0.5, 0.7])
def test_sigkill_during_vector_rebuild_or_vacuum(master: Path, tmp_path: Path,
                                                  delay: float) -> None:
    db_path = tmp_path / "index" / "memex.db"
    db_path.parent.mkdir()
    shutil.copy(master, db_path)
    root = tmp_path / "root"
    root.mkdir()
    expected = assert_consistent(master)
    assert kill_maintenance(root, db_path, delay)  # killed mid-work, not after
    check_cli(db_path, root)
    assert assert_consistent(db_path) == expected  # old table or new, never a mix
    settings = make_settings(root, db_path, embedder__name="hashing")
    result = maintain(settings)  # the lock died with the child: the next run goes ahead
    assert result["maintenance"]["dead_slots_after"]["dead"] == 0
    assert assert_consistent(db_path) == expected


@pytest.mark.slow
def test_sigkill_during_reindex_then_check_and_finish(
        settings_factory: Callable[..., Settings], tmp_path: Path) -> None:
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0], files=20, messages=200)
    clean = reindex(settings=settings.with_values(db=str(tmp_path / "reference.db")))
    db_path = tmp_path / "crash.db"
    assert kill_after(settings.roots[0], db_path, 7)
    check_cli(db_path, settings.roots[0])
    stats = reindex(settings=settings.with_values(db=str(db_path)))
    assert stats.files == 20 - 6 or stats.files == 20 - 7  # at most one file's work redone
    counts = assert_consistent(db_path)
    assert counts["chunks"] == clean.chunks == counts["vectors"]

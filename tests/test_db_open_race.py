"""A writer opening an index waits out a reader that holds the file (a warm search at
`memex watch`'s start) while it switches the file to WAL, rather than failing."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from engine.store import db, owner


def test_a_new_index_waits_for_a_reader_holding_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memex.db"
    reader = sqlite3.connect(path, check_same_thread=False)  # rollback mode, as a new file
    reader.execute(f"PRAGMA application_id={owner.APPLICATION_ID}")  # Memex's, stamped
    reader.execute("CREATE TABLE t(x)")
    reader.commit()
    reader.execute("BEGIN")
    reader.execute("SELECT * FROM t").fetchall()  # a shared lock: WAL cannot be switched on
    released = threading.Timer(0.3, reader.rollback)
    released.start()
    try:
        conn = db.connect(path)
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()
        finally:
            conn.close()
    finally:
        released.join()
        reader.close()
    assert mode == ("wal",)

"""SIGKILL at random moments of a reindex leaves a consistent index that the next run completes."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent

CHILD = """
import sys
from engine.index.runs import reindex
from tests.conftest import make_settings

class Loud:
    def on_progress(self, done, total, path):
        print(done, flush=True)
    def on_error(self, path, message):
        pass

root, db_path = sys.argv[1], sys.argv[2]
from pathlib import Path
reindex(settings=make_settings(Path(root), Path(db_path), embedder__name="hashing"), reporter=Loud())
print("finished", flush=True)
"""


def build_layer(root: Path, files: int = 30, messages: int = 300) -> None:
    slack = root / "data" / "slack"
    slack.mkdir(parents=True)
    for f in range(files):
        lines = [
            json.dumps(
                {
                    "ts": f"{1_780_000_000 + i * 61}.000100",
                    "channel": f"c{f}",
                    "user_name": f"Person {i % 7}",
                    "text": f"message {i} in channel {f} about topic {i % 13}",
                }
            )
            for i in range(messages)
        ]
        (slack / f"c{f:02d}.jsonl").write_text("\n".join(lines) + "\n")


def kill_after(root: Path, db_path: Path, files_done: int) -> bool:
    """Run a reindex in a child and SIGKILL it once it reports `files_done` files."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(db_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert child.stdout is not None
    killed = False
    for line in child.stdout:
        if line.strip() == "finished":
            break
        if int(line) >= files_done:
            child.send_signal(signal.SIGKILL)
            killed = True
            break
    child.wait(timeout=120)
    child.stdout.close()
    return killed


def check_after_crash(db_path: Path) -> None:
    if not db_path.exists():
        return
    conn = db.connect(db_path, create=False)
    schema = db.has_schema(conn)
    conn.close()
    if schema:  # a kill before the schema existed leaves nothing to check
        assert_consistent(db_path)


@pytest.mark.slow
def test_sigkill_during_reindex_never_corrupts(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0])
    reference = tmp_path / "reference.db"
    clean = reindex(settings=settings.with_values(db=str(reference)))
    rng = random.Random(7)
    for run in range(4):
        db_path = tmp_path / f"crash{run}.db"
        assert kill_after(settings.roots[0], db_path, rng.randint(1, 28))
        check_after_crash(db_path)
        # A second kill on the partial index, then the finishing run.
        kill_after(settings.roots[0], db_path, rng.randint(1, 5))
        check_after_crash(db_path)
        stats = reindex(settings=settings.with_values(db=str(db_path)))
        assert not stats.errors
        counts = assert_consistent(db_path)
        assert counts.chunks == clean.chunks == counts.vectors

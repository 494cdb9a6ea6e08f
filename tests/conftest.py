"""Shared fixtures: settings on temporary folders, the demo index built once and copied."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from engine.index.runs import reindex  # noqa: E402
from engine.resources import demo_dir  # noqa: E402
from engine.settings import Settings, load_settings  # noqa: E402
from engine.store import db  # noqa: E402

DEMO_TODAY = "2026-06-30T12:00:00"
EMPTY_ENV: dict[str, str] = {}
PRIVATE_FOLDER_VARIABLES = (
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "HOME",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "XDG_RUNTIME_DIR",  # the warm search socket and the desktop's instance socket
)
# The user's own folders, as they were before `private_user_folders` replaced them: only
# tests/test_private_run_log.py reads this, to check that nothing was written there.
REAL_FOLDER_ENV = {name: os.environ.get(name) for name in PRIVATE_FOLDER_VARIABLES}


def make_settings(root: Path | list[Path], db_path: Path, **overrides: Any) -> Settings:
    """Settings for a test: no user config file, no environment, the given roots and index."""
    roots = root if isinstance(root, list) else [root]
    config = db_path.parent / "no-config.toml"
    config.write_text("")
    overrides.setdefault("now", DEMO_TODAY)
    return load_settings(
        config,
        env=EMPTY_ENV,
        roots=[str(r) for r in roots],
        db=str(db_path),
        log_dir=str(db_path.parent / "logs"),
        **overrides,
    )


def cli_args(settings: Settings, extra_config: str = "") -> list[str]:
    """`--root/--db/--config` for these settings, with a config file (beside the index) that
    keeps the run log there and uses the hashing embedder."""
    config = settings.db_path.parent / "cli.toml"
    config.write_text(
        f'log_dir = "{settings.log_path.parent}"\n{extra_config}[embedder]\nname = "hashing"\n'
    )
    root, db_file = str(settings.roots[0]), str(settings.db_path)
    return ["--root", root, "--db", db_file, "--config", str(config)]


def assert_consistent(db_path: Path) -> db.Counts:
    """Chunk, FTS and vector counts agree, and the FTS5 rank=1 integrity-check passes."""
    conn = db.connect(db_path, create=False)
    try:
        counts = db.counts(conn)
        assert counts.chunks == counts.fts, counts
        assert counts.embedded == counts.vectors, counts
        assert counts.part_vectors == counts.parts >= counts.vectors, counts
        assert db.fts_integrity_ok(conn)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    return counts


@pytest.fixture(scope="session", autouse=True)
def private_user_folders(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Point the platform's config, data, state (logs) and cache folders into a temporary
    home for the whole run, subprocesses included: no test or CLI run under test ever reads
    the user's config or writes into their data or log folders."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        # HOME for macOS (~/Library/…), the others for Windows: platformdirs reads them there.
        for name in PRIVATE_FOLDER_VARIABLES:
            folder = home / name.lower()
            folder.mkdir(mode=0o700)  # private, as a runtime folder must be to be used
            patch.setenv(name, str(folder))
        patch.delenv("MEMEX_CONFIG", raising=False)
        patch.delenv("MEMEX_ROOT", raising=False)
        patch.delenv("MEMEX_DB", raising=False)
        # No search under test starts a warm process that outlives it; the tests of that
        # (tests/test_warm_autostart.py) turn it on for their own children.
        patch.setenv("MEMEX_NO_AUTOSTART", "1")
        yield home


@pytest.fixture
def settings_factory(tmp_path: Path) -> Callable[..., Settings]:
    def factory(root: Path | list[Path] | None = None, **overrides: Any) -> Settings:
        if root is None:
            root = tmp_path / "root"
            root.mkdir(exist_ok=True)
        return make_settings(root, tmp_path / "index" / "memex.db", **overrides)

    (tmp_path / "index").mkdir()
    return factory


@pytest.fixture(scope="session")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo layer indexed once per session with the real local model: (root, db)."""
    base = tmp_path_factory.mktemp("demo-master")
    root = base / "demo"
    shutil.copytree(demo_dir(), root)
    db_path = base / "index" / "memex.db"
    db_path.parent.mkdir()
    stats = reindex(settings=make_settings(root, db_path))
    assert stats.chunks > 0
    conn = db.connect(db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return root, db_path


@pytest.fixture
def demo_index(demo_master: tuple[Path, Path], tmp_path: Path) -> Settings:
    """A private copy of the demo index and its data layer, for one test."""
    master_root, master_db = demo_master
    root = tmp_path / "demo"
    shutil.copytree(master_root, root)
    db_path = tmp_path / "index" / "memex.db"
    db_path.parent.mkdir()
    shutil.copy(master_db, db_path)
    # Chunks store absolute paths: point the copy's rows at the copied layer.
    conn = db.connect(db_path)
    old, new = str(master_root), str(root)
    with db.transaction(conn):
        conn.execute("UPDATE chunks SET source_file = replace(source_file, ?, ?)", (old, new))
        conn.execute("UPDATE index_state SET source_file = replace(source_file, ?, ?)", (old, new))
    conn.close()
    return make_settings(root, db_path)

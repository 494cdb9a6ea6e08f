"""Memex's own folders (config, data, state, cache, run log) and its index's files are never
walked nor counted as files of no known format, in any root (engine/index/files.OwnPaths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.index.routes import classify, scan
from tests.conftest import make_settings


def home_with_memex_inside(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home folder whose XDG folders hold Memex's own files, as after a first run."""
    for variable, folder in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", "caches"),  # not .cache, which every walk leaves out
    ):
        monkeypatch.setenv(variable, str(home / folder))
    own = {
        ".config/memex/config.toml": "roots = ['~']\n",
        ".local/share/memex/memex.db": "SQLite format 3\0",
        ".local/state/memex/log/runs.jsonl": '{"kind": "reindex"}\n',
        "caches/memex/models/model.bin": "weights",
        "memex.db": "SQLite format 3\0",  # an index kept in the root itself
        "memex.db-wal": "wal",
        "memex.db.lock": "",
        "logs/runs.jsonl": '{"kind": "reindex"}\n',  # the configured run log folder
    }
    for relative, text in own.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text, encoding="utf-8")
    (home / "notes").mkdir()
    (home / "notes" / "trip.md").write_text("# Trip\n\nThe ferry at nine.\n", encoding="utf-8")


def test_the_walk_never_enters_memexs_own_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home_with_memex_inside(home, monkeypatch)
    settings = make_settings(home, home / "memex.db")
    assert settings.log_path == home / "logs" / "runs.jsonl"
    found = scan(settings)
    assert [f.relative for f in found.found] == ["notes/trip.md"]
    assert found.skipped.unknown == 0 and found.skipped.excluded == 0
    # The watcher's single paths follow the same rule.
    for relative in ("memex.db-wal", ".local/state/memex/log/runs.jsonl", "logs/runs.jsonl"):
        assert classify(home / relative, settings) is None, relative
    assert classify(home / "notes" / "trip.md", settings) is not None

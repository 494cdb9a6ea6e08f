"""Files that hold the user's data are private (0600) from their first byte: the backup while
it is written, and the run log (paths and error messages)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.index import backup, maintenance, runlog
from engine.index.runs import reindex
from engine.settings import Settings


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The common default umask: files created without an explicit mode get 0644."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


class WatchedConnection:
    """A connection that records the mode of VACUUM INTO's target as soon as it exists."""

    def __init__(self, conn: Any, modes: list[int]) -> None:
        self._conn, self._modes = conn, modes

    def execute(self, sql: str, bindings: Any = None) -> Any:
        result = self._conn.execute(sql, bindings)
        if sql.startswith("VACUUM INTO"):
            self._modes.append(mode(Path(bindings[0])))
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_the_backup_is_private_while_it_is_written(
    settings_factory: Callable[..., Settings],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    open_umask: None,
) -> None:
    settings = settings_factory(embedder__name="hashing")
    (settings.roots[0] / "notes").mkdir()
    (settings.roots[0] / "notes" / "a.md").write_text("# A\nA private note.\n")
    reindex(settings=settings)
    modes: list[int] = []
    real_open = backup._open_index
    monkeypatch.setattr(backup, "_open_index", lambda s: WatchedConnection(real_open(s), modes))
    target = tmp_path / "backup.db"
    maintenance.backup(settings, target)
    assert modes == [0o600]  # the partial file, right after VACUUM INTO filled it
    assert mode(target) == 0o600
    assert not list(tmp_path.glob(".backup.db.partial-*"))


def test_a_failed_backup_leaves_no_partial_file(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory(embedder__name="hashing")
    reindex(settings=settings)
    with pytest.raises(maintenance.BackupError):
        maintenance.backup(settings, tmp_path / "no-such-folder" / "backup.db")
    assert not list(tmp_path.rglob("*.partial-*"))


def test_the_run_log_is_created_private(
    settings_factory: Callable[..., Settings], open_umask: None
) -> None:
    settings = settings_factory(embedder__name="hashing")
    runlog.append(settings, runlog.make_record("reindex", files=1))
    assert mode(settings.log_path) == 0o600
    assert runlog.read_runs(settings)[-1]["files"] == 1


def test_an_existing_run_log_is_made_private(
    settings_factory: Callable[..., Settings], open_umask: None
) -> None:
    settings = settings_factory(embedder__name="hashing")
    settings.log_path.parent.mkdir(parents=True, exist_ok=True)
    settings.log_path.write_text('{"kind": "old"}\n')
    settings.log_path.chmod(0o644)
    runlog.append(settings, runlog.make_record("reindex"))
    assert mode(settings.log_path) == 0o600
    lines = settings.log_path.read_text().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["old", "reindex"]
    # The old line names no index: it is kept in the file but is not this index's run.
    assert [r["kind"] for r in runlog.read_runs(settings)] == ["reindex"]

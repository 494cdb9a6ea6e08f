"""What the index's file, folder, disk and lock can do: an empty file, a folder that cannot
be written, a full disk mid-reindex, a write lock held past the busy timeout, an API
key the server rejects. Each is one sentence and its documented exit code; nothing indexed
before is lost."""

from __future__ import annotations

import errno
import io
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from filelock import FileLock

from engine.cli import index as cli_index
from engine.cli import run
from engine.index.indexer import Indexer
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent, cli_args
from tests.fake_openai import FakeOpenAI
from tests.test_indexing import write_layer


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def layer(settings_factory: Callable[..., Settings]) -> tuple[Settings, list[str]]:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    return settings, cli_args(settings)


def with_db(args: list[str], db_file: Path) -> list[str]:
    return [*args[:3], str(db_file), *args[4:]]


def test_status_of_an_empty_file_says_there_is_no_index_yet(
    layer: tuple[Settings, list[str]], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for command in (["status"], ["--search", "x"]):
        code, out, err = cli(*command, *with_db(layer[1], empty))
        assert code == 3 and "no Memex index" in err and "memex reindex" in err, err


@pytest.fixture
def read_only_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder that cannot be written. As root, chmod binds nothing: creating a file in it
    then fails the way it does for everyone else (EACCES), by a patched os.open."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):
        real_open = os.open

        def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if Path(path).parent == folder and flags & os.O_CREAT:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing_open)
    yield folder
    folder.chmod(0o755)


def test_an_index_in_a_read_only_folder_is_one_sentence(
    layer: tuple[Settings, list[str]], read_only_folder: Path, tmp_path: Path
) -> None:
    """Before: the lock file could not be created and the writer lock waited forever."""
    args = with_db(layer[1], read_only_folder / "memex.db")
    for command in ("reindex", "watch"):
        code, _, err = cli(command, *args)
        assert code == 4, err
        assert "cannot write the index" in err and "Permission denied" in err, err
        assert "choose a writable folder with --db" in err
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    code, _, err = cli("reindex", *with_db(layer[1], not_a_folder / "memex.db"))
    assert code == 4 and "cannot write the index" in err and "Traceback" not in err


def test_a_full_disk_during_reindex_loses_nothing(
    layer: tuple[Settings, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, args = layer
    assert cli("reindex", *args)[0] == 0
    before = assert_consistent(settings.db_path)
    notes = settings.roots[0] / "notes"
    for i in range(3):
        (notes / f"more{i}.md").write_text(f"# More {i}\nLentils number {i}.\n")
    real_insert = Indexer._insert
    calls = {"n": 0}

    def filling_disk(self: Indexer, chunk: Any, ordinal: int) -> int:
        calls["n"] += 1
        if calls["n"] == 2:  # the second new file: its transaction is rolled back
            raise apsw.FullError("database or disk is full")
        return real_insert(self, chunk, ordinal)

    monkeypatch.setattr(Indexer, "_insert", filling_disk)
    code, _, err = cli("reindex", *args)
    assert code == 4, err
    [line] = err.splitlines()
    assert "database or disk is full (is the disk full?)" in line
    assert "everything indexed before is kept" in line and "run 'memex reindex' again" in line
    during = assert_consistent(settings.db_path)  # one file more, never half of one
    assert during.chunks == before.chunks + 1 and cli("maintenance", "--check", *args)[0] == 0
    monkeypatch.setattr(Indexer, "_insert", real_insert)
    assert cli("reindex", *args)[0] == 0
    assert assert_consistent(settings.db_path).chunks == before.chunks + 3


def test_a_write_lock_held_past_the_busy_timeout_exits_5(
    layer: tuple[Settings, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings, args = layer
    assert cli("reindex", *args)[0] == 0
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)  # the busy timeout, made tiny
    holder = db.connect(settings.db_path, create=False)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        (settings.roots[0] / "notes" / "new.md").write_text("# New\nQuinoa.\n")
        code, _, err = cli("reindex", *args)
        assert code == 5, err
        assert "waiting: another program holds the index's write lock" in capsys.readouterr().err
        assert "is busy: another program has held its write lock for more than 0.05 s" in err
        assert "try again" in err
        code, _, err = cli("maintenance", "--no-vacuum", *args)
        assert code == 5 and "is busy" in err, err
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert cli("reindex", *args)[0] == 0  # the lock is free: the same run goes through
    assert assert_consistent(settings.db_path).chunks > 0


def test_a_reindex_waiting_for_another_memex_says_so(
    layer: tuple[Settings, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, args = layer
    other = FileLock(str(settings.db_path) + ".lock")  # another memex writing
    other.acquire()
    told: list[str] = []

    def tell(message: str) -> None:  # the other memex finishes once we are told to wait
        told.append(message)
        other.release()

    monkeypatch.setattr(cli_index, "tell", tell)
    assert cli("reindex", *args)[0] == 0
    assert told == ["waiting: another memex (memex watch, the desktop app or a reindex) is "
                    "writing the index"]  # fmt: skip


@pytest.mark.parametrize("model", ["text-embedding-ada-002", "text-embedding-3-small"])
def test_a_rejected_api_key_is_an_error_of_the_run(
    layer: tuple[Settings, list[str]], model: str
) -> None:
    """Before: a key rejected while the model's dimension was probed went unreported
    (exit 0, 0 errors, chunks without vectors, and `--check` passed)."""
    settings, args = layer
    server = FakeOpenAI().start()
    try:
        server.script(*([401] * 20))
        config = Path(args[5])
        config.write_text(
            f'log_dir = "{settings.log_path.parent}"\n[embedder]\nname = "openai"\n'
            f'base_url = "{server.base_url}"\nmodel = "{model}"\nmax_retries = 0\n'
        )
        code, out, err = cli("reindex", *args)
        assert code == 4, err
        assert "1 error(s)" in out and "rejected the API key (HTTP 401)" in out
        assert "rejected the API key (HTTP 401)" in err and "found by keywords" in err
        [record] = [json.loads(line) for line in settings.log_path.read_text().splitlines()]
        assert record["error_count"] == 1 and record["errors"][0]["file"] == "<embedder>"
        server._script.clear()  # the key is accepted again: the next run embeds the rest
        code, out, err = cli("reindex", *args)
        assert code == 0, err
        counts = assert_consistent(settings.db_path)
        assert counts.vectors == counts.chunks > 0
    finally:
        server.stop()

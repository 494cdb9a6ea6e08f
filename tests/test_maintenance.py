"""Maintenance, check, repair, backup, the run log and `memex status` bloat reporting."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import runlog
from engine.index.maintenance import check_index, dead_slots
from engine.index.runs import reindex, writer_lock
from engine.index.status import collect_status
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent, cli_args
from tests.test_crash import build_layer


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.01)
    return predicate()


def files_indexed(settings: Settings) -> int:
    conn = db.connect(settings.db_path, create=False)
    try:
        return int(conn.execute("SELECT count(*) FROM index_state").fetchone()[0])
    except Exception:  # the schema may not exist yet
        return 0
    finally:
        conn.close()


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def args_for(settings: Settings) -> list[str]:
    return cli_args(settings)


@pytest.fixture
def churned(settings_factory: Callable[..., Settings]) -> Settings:
    """An index of 40 chat files (> 1,024 vectors), then 30 of them deleted."""
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0], files=40, messages=400)
    reindex(settings=settings)
    for i, path in enumerate(sorted((settings.roots[0] / "data" / "slack").iterdir())):
        if i % 4:  # spread over every vec0 chunk, as real churn is
            path.unlink()
    stats = reindex(settings=settings)
    assert stats.deleted_files == 30
    return settings


def test_maintenance_after_heavy_churn_shrinks_the_file_and_checks_clean(churned: Settings) -> None:
    conn = db.connect(churned.db_path, create=False)
    before = dead_slots(conn)
    conn.close()
    assert before.dead > 0 and before.fraction >= 0.25, before
    status = collect_status(churned)
    assert status.maintenance_suggested
    code, out, _ = cli("status", *args_for(churned))
    assert code == 0 and "memex maintenance" in out and "vec slots" in out

    code, out, err = cli("maintenance", "--json", *args_for(churned))
    assert code == 0, err
    m = json.loads(out)["maintenance"]
    assert m["size_after"]["total"] < m["size_before"]["total"]
    assert m["bytes_reclaimed"] > 0
    assert m["dead_slots_after"]["dead"] == 0
    after = m["counts_after"]
    assert after["vectors"] == after["embedded"] and after["parts"] == m["vectors_rebuilt"]
    assert set(m["timings"]) == {"rebuild_vectors", "vacuum", "checkpoint"}

    code, out, _ = cli("maintenance", "--check", *args_for(churned))
    assert code == 0 and "check      ok" in out
    assert not collect_status(churned).maintenance_suggested
    assert_consistent(churned.db_path)
    last = runlog.last_run(churned)
    assert last is not None and last["kind"] == "check" and last["ok"]
    kinds = [r["kind"] for r in runlog.read_runs(churned)]
    assert kinds[-2:] == ["maintenance", "check"]


@pytest.fixture
def small_index(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0], files=4, messages=120)
    reindex(settings=settings)
    return settings


def test_maintenance_refuses_while_another_writer_holds_the_lock(small_index: Settings) -> None:
    churned = small_index
    lock = writer_lock(churned)
    with lock:
        for extra in ([], ["--repair"], ["--no-vacuum"]):
            code, _, err = cli("maintenance", *extra, *args_for(churned))
            assert code == 4
            assert "another writer" in err and err[-1] == "\n" and err.count("\n") == 1
    code, _, _ = cli("maintenance", "--no-vacuum", *args_for(churned))
    assert code == 0


def test_check_finds_broken_rows_and_repair_fixes_them(small_index: Settings) -> None:
    churned = small_index
    conn = db.connect(churned.db_path, create=False)
    with db.transaction(conn):
        conn.execute("DROP TRIGGER chunks_ad")  # deletions that bypass FTS and vectors
        conn.execute("DELETE FROM chunks WHERE seq IN (SELECT seq FROM chunks LIMIT 5)")
        conn.execute(
            "UPDATE chunks SET source_file = 'gone.jsonl' WHERE seq IN "
            "(SELECT seq FROM chunks ORDER BY seq DESC LIMIT 3)"
        )
    db.migrate(conn)  # the trigger comes back
    conn.close()
    report = check_index(churned)
    assert not report.ok
    assert report.orphan_vectors >= 5 and report.orphan_chunk_files == 1  # part rows of 5 chunks
    assert not report.fts_ok
    code, out, _ = cli("maintenance", "--check", *args_for(churned))
    assert code == 4 and "problem:" in out

    code, out, err = cli("maintenance", "--repair", *args_for(churned))
    assert code == 0, out + err
    assert "orphan chunk(s) dropped" in out and "check      ok" in out
    assert_consistent(churned.db_path)


def test_backup_while_indexing_is_consistent_and_never_overwrites(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0], files=30, messages=300)
    first = settings.roots[0] / "data" / "slack" / "c00.jsonl"
    reindex([first], settings=settings)
    indexing = threading.Thread(target=reindex, kwargs={"settings": settings})
    indexing.start()
    target = tmp_path / "backup.db"
    try:
        assert wait_for(lambda: files_indexed(settings) >= 3)
        code, out, err = cli("backup", str(target), *args_for(settings))
        during = indexing.is_alive()
    finally:
        indexing.join(timeout=120)
    assert code == 0, err
    assert during  # the copy was taken while the writer was committing files
    assert target.stat().st_mode & 0o777 == 0o600
    copy = settings.with_values(db=str(target))
    assert check_index(copy).ok
    counts = assert_consistent(target)
    assert counts.chunks > 0

    code, _, err = cli("backup", str(target), *args_for(settings))
    assert code == 2 and "--force" in err  # a usage problem (exit 2), not an unusable index
    code, _, err = cli("backup", str(target), "--force", *args_for(settings))
    assert code == 0, err
    assert assert_consistent(target) == assert_consistent(settings.db_path)


def test_every_reindex_appends_a_run_log_line_that_status_shows(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    build_layer(settings.roots[0], files=3, messages=40)
    reindex(settings=settings)
    path = settings.roots[0] / "data" / "slack" / "c01.jsonl"
    with path.open("a") as handle:
        handle.write(
            json.dumps(
                {
                    "ts": "1790000000.000100",
                    "channel": "c1",
                    "user_name": "Ann",
                    "text": "a late message",
                }
            )
            + "\n"
        )
    (settings.roots[0] / "data" / "slack" / "c02.jsonl").unlink()
    reindex(settings=settings)
    first, second = runlog.read_runs(settings)[-2:]
    assert first["kind"] == "reindex" and first["reasons"]["embedded.new"] == first["embedded"]
    assert set(first["timings"]) >= {"discover", "extract", "embed", "write"}
    assert second["files"] == 1 and second["deleted_files"] == 1
    assert second["reasons"]["embedded.changed"] >= 1
    assert second["reasons"]["deleted.file_gone"] > 0
    assert second["chunks_unchanged"] > 0 and second["error_count"] == 0
    code, out, _ = cli("status", *args_for(settings))
    assert code == 0 and "last run   reindex" in out


def test_the_last_run_line_of_a_repair_names_its_duration() -> None:
    from engine.cli.status import describe_run

    line = describe_run(
        {"kind": "repair", "at": "2026-06-30T12:00:00", "ok": True, "repair": {"seconds": 0.25}}
    )
    assert line == "repair 2026-06-30T12:00:00: ok, 0.25s"
    assert "None" not in describe_run({"kind": "check", "at": "x", "ok": False})

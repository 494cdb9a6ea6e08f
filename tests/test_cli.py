"""The headless CLI in-process: every command, every exit code, the --json schema."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from engine.cli import run
from engine.settings import Settings
from engine.store import db
from tests.conftest import cli_args
from tests.test_indexing import write_layer

RESULT_KEYS = {
    "id",
    "source_type",
    "source_file",
    "content_date",
    "score",
    "title",
    "snippet",
    "content",
    "matched_terms",
    "location",
    "profile",
}
# The --json shapes of `memex status` and `memex maintenance`: scripts read these keys.
STATUS_KEYS = {
    "db",
    "roots",
    "files",
    "chunks",
    "per_type",
    "counts",
    "embedder",
    "vec_table",
    "reembed",
    "sizes",
    "free_page_fraction",
    "errors",
    "last_run",
    "vector_slots",
    "maintenance_suggested",
    "schema_version",
    "size_bytes",
    "vector_coverage",  # keyword-first indexing: how much of the index has its vectors
    "log",
}
COUNT_KEYS = {"chunks", "fts", "embedded", "vectors", "parts", "part_vectors"}
SLOT_KEYS = {"table", "allocated", "live", "dead", "fraction", "dead_bytes"}
CHECK_KEYS = {
    "ok",
    "problems",
    "integrity",
    "fts_ok",
    "counts",
    "orphan_vectors",
    "missing_vectors",
    "orphan_chunk_files",
    "stale_vec_tables",
    "dead_slots",
}
MAINTENANCE_KEYS = {
    "size_before",
    "size_after",
    "bytes_reclaimed",
    "vectors_rebuilt",
    "counts_before",
    "counts_after",
    "dead_slots_before",
    "dead_slots_after",
    "vacuum",
    "wal_checkpoint",
    "timings",
    "seconds",
}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def layer(settings_factory: Callable[..., Settings]) -> list[str]:
    settings = settings_factory()
    write_layer(settings.roots[0])
    return cli_args(settings)


@pytest.fixture
def logged_layer(settings_factory: Callable[..., Settings], tmp_path: Path) -> list[str]:
    """CLI arguments for an indexed layer whose run log stays in tmp_path."""
    settings = settings_factory()
    write_layer(settings.roots[0])
    args = cli_args(settings)
    assert cli("reindex", *args)[0] == 0
    return args


def test_status_and_maintenance_json_keep_their_keys(logged_layer: list[str]) -> None:
    db_path = logged_layer[3]
    conn = db.connect(db_path, create=False)
    conn.execute(
        "UPDATE index_state SET error = 'unreadable' "
        "WHERE rowid = (SELECT min(rowid) FROM index_state)"
    )
    conn.close()
    code, out, _ = cli("status", "--json", *logged_layer)
    status = json.loads(out)
    assert code == 0 and set(status) == STATUS_KEYS
    assert set(status["counts"]) == COUNT_KEYS and set(status["vector_slots"]) == SLOT_KEYS
    assert set(status["sizes"]) == {"db", "db_wal", "db_shm"}
    assert status["size_bytes"] == sum(status["sizes"].values())
    assert [set(e) for e in status["errors"]] == [{"file", "error", "indexed"}]
    assert status["reembed"] is None and status["last_run"]["kind"] == "reindex"

    code, out, _ = cli("maintenance", "--check", "--json", *logged_layer)
    result = json.loads(out)
    assert code == 0 and set(result) == {"check"}
    check = result["check"]
    assert set(check) == CHECK_KEYS and check["ok"] is True and check["problems"] == []
    assert set(check["counts"]) == COUNT_KEYS and set(check["dead_slots"]) == SLOT_KEYS

    code, out, _ = cli("maintenance", "--json", *logged_layer)
    result = json.loads(out)
    assert code == 0 and set(result) == {"maintenance"}
    m = result["maintenance"]
    assert set(m) == MAINTENANCE_KEYS
    assert set(m["size_before"]) == set(m["size_after"]) == {"db", "db_wal", "total"}
    assert set(m["counts_after"]) == COUNT_KEYS and set(m["dead_slots_after"]) == SLOT_KEYS
    assert set(m["wal_checkpoint"]) == {"busy", "log_frames", "checkpointed"}


def test_check_of_an_index_without_schema_prints_a_note(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    db.connect(empty).close()
    config = tmp_path / "empty.toml"
    config.write_text(f'log_dir = "{tmp_path / "logs"}"\n')
    code, out, _ = cli(
        "maintenance",
        "--check",
        "--json",
        "--db",
        str(empty),
        "--root",
        str(tmp_path),
        "--config",
        str(config),
    )
    assert code == 0
    assert json.loads(out) == {
        "check": {"ok": True, "problems": [], "note": "no schema yet (empty index)"}
    }


def test_usage_errors_exit_2(layer: list[str]) -> None:
    cli("reindex", *layer)
    for argv in (
        ["--search", "x", "--mode", "fuzzy"],
        ["--search", "x", "--since", "someday"],
        ["--search", "x", "--limit", "0"],
        ["--bogus"],
        [],
    ):
        code, _, err = cli(*layer, *argv) if argv else cli("discover", "--nope")
        assert code == 2, argv
        assert err.startswith("memex: ") and err.count("\n") == 1


def test_bad_config_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[search]\nnope = 1\n")
    code, _, err = cli("--config", str(config), "--search", "x")
    assert code == 2 and "unknown setting" in err


def test_a_file_that_is_not_an_index_exits_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    code, _, err = cli("--db", str(bad), "--root", str(tmp_path), "--search", "x")
    assert code == 3 and "Traceback" not in err and "is not a Memex index" in err, err


def test_no_results_is_success(layer: list[str]) -> None:
    cli("reindex", *layer)
    code, out, _ = cli(*layer, "--search", "zzzqqq", "--mode", "bm25")
    assert code == 0 and "No results" in out


@hsettings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.text(alphabet=st.characters(), max_size=300)
    | st.sampled_from(['"', "AND", "c++", "NEAR(", "(", "*", "^", "a:b", "🎉", "\x00", "x" * 10000])
)
@example(query="--A")
@example(query="--")
def test_any_query_string_is_safe(layer: list[str], query: str) -> None:
    if not Path(layer[3]).exists():
        cli("reindex", *layer)
    # A query that starts with '-' is passed after `--`, as `memex --help` says to.
    search = ["--search", "--", query] if query.startswith("-") else ["--search", query]
    code, out, err = cli(*layer, *search, "--json")
    assert code == 0, err
    assert isinstance(json.loads(out)["results"], list)


def test_headless_commands_never_import_qt(layer: list[str]) -> None:
    cli("reindex", *layer)
    script = (
        "import sys; from desktop.launcher import main; "
        f"code = main({layer + ['--search', 'beans', '--json']!r}); "
        "assert 'PySide6' not in sys.modules, 'PySide6 imported'; sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]

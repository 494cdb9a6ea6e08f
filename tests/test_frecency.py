"""Frecency (engine/search/rank/frecency.py, engine/store/opens.py, `memex opened`/`frecency`)."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path

import pytest

from bench.common import bench_settings
from engine.cli import run
from engine.core import Engine
from engine.search import Searcher
from engine.search.hits import Hit
from engine.search.rank.frecency import apply_frecency, frecency_factor, open_weight
from engine.settings import Settings
from engine.store import db, opens
from tests.conftest import cli_args

NOW = datetime(2026, 6, 30, 12, 0)


def test_each_open_fades_with_its_half_life() -> None:
    assert open_weight(["2026-06-30T12:00:00"], NOW, 14) == pytest.approx(1.0)
    assert open_weight(["2026-06-16T12:00:00"], NOW, 14) == pytest.approx(0.5)
    assert open_weight(["2026-06-16T12:00:00", "2026-06-02T12:00:00"], NOW, 14) == (
        pytest.approx(0.75)
    )
    assert frecency_factor(0.0, 0.1) == 1.0
    assert frecency_factor(1.0, 0.1) == pytest.approx(1.05)
    assert frecency_factor(1e9, 0.1) < 1.1


def test_an_opened_hit_settles_a_near_tie_but_not_a_clear_gap() -> None:
    cands = [Hit.chunk(1, 0.50), Hit.chunk(2, 0.49), Hit.chunk(3, 0.30)]  # ids "1", "2", "3"
    fresh = ["2026-06-30T11:00:00"]
    out = apply_frecency(cands, {"2": fresh}, NOW, 14, 0.1)
    assert [c.seq for c in out] == [2, 1, 3]
    assert out[0].signals["frecency"] == pytest.approx(1.05, abs=1e-3)
    many = {"3": fresh * 50}
    assert [c.seq for c in apply_frecency(cands, many, NOW, 14, 0.1)] == [1, 2, 3]
    old = {"2": ["2025-06-30T12:00:00"]}  # a year ago: all but gone
    assert [c.seq for c in apply_frecency(cands, old, NOW, 14, 0.1)] == [1, 2, 3]


def test_opens_are_stored_apart_and_readers_cope_without_the_table(
    demo_index: Settings,
) -> None:
    path = demo_index.db_path
    conn = db.connect(path, create=False)
    assert not db.table_exists(conn, opens.TABLE)
    assert opens.open_times(conn, ["x"]) == {} and opens.opened(conn) == []
    conn.close()
    searcher = Searcher(demo_index)
    hits = searcher.search("standup", 5).results  # no table: no boost, no error
    searcher.close()
    conn = db.connect(path, create=False)
    assert hits and not db.table_exists(conn, opens.TABLE)  # a reader never makes it
    conn.close()
    opens.record_open(path, hits[1].id, hits[1].source_file, NOW)
    opens.record_open(path, hits[1].id, hits[1].source_file, NOW)
    conn = db.connect(path, create=False)
    assert opens.open_times(conn, [hits[1].id, "other"]) == {hits[1].id: [NOW.isoformat()] * 2}
    assert db.SCHEMA_VERSION == 1 and db.get_meta(conn, "schema_version") == "1"
    conn.close()
    assert opens.clear_opens(path) == 2


def search_json(settings: Settings, query: str) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    argv = [*cli_args(settings), "--search", query, "--json", "--explain"]
    assert run(argv, out, err) == 0, err.getvalue()
    results: list[dict] = json.loads(out.getvalue())["results"]
    return results


def command(settings: Settings, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([argv[0], *cli_args(settings), *argv[1:]], out, err)
    return code, out.getvalue(), err.getvalue()


def test_memex_opened_lifts_the_hit_and_frecency_clear_forgets(demo_index: Settings) -> None:
    before = search_json(demo_index, "standup moved")
    chosen = before[2]
    assert command(demo_index, "opened", chosen["id"])[:2] == (0, "recorded 1 open\n")
    after = search_json(demo_index, "standup moved")
    lifted = next(r for r in after if r["id"] == chosen["id"])
    assert lifted["explain"]["frecency"] == pytest.approx(1.05, abs=1e-3)
    assert lifted["score"] == pytest.approx(chosen["score"] * 1.05, rel=1e-3)
    assert [r["id"] for r in after].index(chosen["id"]) <= 2
    code, listed, _ = command(demo_index, "frecency", "--json")
    assert code == 0 and [(o["id"], o["opens"]) for o in json.loads(listed)] == [(chosen["id"], 1)]
    assert command(demo_index, "frecency", "--clear")[1] == "cleared 1 recorded opens\n"
    assert search_json(demo_index, "standup moved") == before


def test_opened_refuses_an_unknown_id(demo_index: Settings) -> None:
    code, _, err = command(demo_index, "opened", "no-such-chunk")
    assert code == 2 and "no result with id 'no-such-chunk'" in err


def test_the_engine_records_on_its_writer_and_the_setting_turns_it_off(
    demo_index: Settings,
) -> None:
    with Engine(demo_index) as engine:
        hit = engine.search("standup moved", 5).results[3]
        engine.record_open(hit.id, hit.source_file).result()
        on = engine.search("standup moved", 5, explain=True).results
    assert any(h.id == hit.id and h.explain and "frecency" in h.explain for h in on)
    off = Searcher(demo_index.with_values(search__frecency=False))
    try:
        plain = off.search("standup moved", 5, explain=True).results
    finally:
        off.close()
    assert all("frecency" not in (h.explain or {}) for h in plain)


def test_benchmarks_run_without_frecency(tmp_path: Path) -> None:
    settings = bench_settings([tmp_path], tmp_path / "index" / "memex.db")
    assert settings.search.frecency is False

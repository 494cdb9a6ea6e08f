"""The speed and operations renderers of bench/report: synthetic records in the shape the
benchmarks write, each rendered to the figures it holds."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bench.report import operations, speed
from bench.report.sections import Section

FLOOR = "floor: embed + numpy scan + FTS5 + RRF"
PEER = "peer: embed + Chroma + rank_bm25 + RRF"


def pct(
    p50: float, p95: float | None = None, p99: float | None = None, n: int = 200
) -> dict[str, float]:
    p95 = p50 * 1.5 if p95 is None else p95
    return {"p50": p50, "p95": p95, "p99": p99 or p95 * 1.2, "n": float(n)}


def perf_record() -> dict[str, Any]:
    build = {
        "root": "/x/layer",
        "db": "/x/memex.db",
        "chunks": 10110,
        "files": 270,
        "seconds": 160.2,
        "chunks_per_s": 63.1,
        "peak_rss_mb": 470.0,
        "load_avg_before": 0.5,
        "load_avg_after": 1.1,
        "built_at": "2026-12-01T10:00:00",
        "resumed": False,
    }
    figures = {
        "cache_load_s": 0.21,
        "cache_mb": 26.8,
        "keyword_index_load_s": 0.4,
        "keyword_index_mb": 12.5,
        "warm_rss_mb": 612.0,
        "warm_anon_mb": 380.0,
        "peer_builds": {"chroma_build_s": 9.1, "rank_bm25_build_s": 1.2},
        "recall": {"vec0 float KNN": 1.0, "vector cache": 0.981, "Chroma HNSW": 0.94},
        "build": build,
        "no_change_s": 1.94,
        "no_change_rss_mb": 294.0,
        "db_mb": 88.3,
        "cold_search_s": 0.61,
        "queries": 200,
        "query_examples": ["standup"],
    }
    one_shot, warm = "Memex one-shot path (vec0)", "Memex warm path (vector cache)"
    latency = {
        "numpy exact scan alone (k=50), BLAS threads = cores": pct(0.7),
        f"{one_shot} hybrid": pct(19.6),
        f"{warm} hybrid": pct(9.5, 11.0),
        f"{warm} vector": pct(8.8),
        f"{warm} hybrid, --source slack": pct(9.3, 11.0),
        f"{warm} hybrid, --since 90 days": pct(7.3, 9.9),
        f"{warm} hybrid, --person Maya": pct(8.1),
        "query embedding alone": pct(4.1),
        FLOOR: pct(6.0),
        PEER: pct(12.0),
    }
    return {
        "chunks": 10110,
        "floor": FLOOR,
        "peer": PEER,
        "figures": figures,
        "latency_ms": latency,
    }


def row(text: str, starts: str) -> str:
    """The table line that begins with `| starts`."""
    return next(line for line in text.splitlines() if line.startswith(f"| {starts}"))


def test_perf_shows_each_path_beside_the_floor_and_the_peer() -> None:
    text = speed.render_perf(perf_record())
    warm = row(text, "Memex warm path (vector cache) hybrid |")
    assert "9.50" in warm and "11.00" in warm
    assert "0.79×" in warm and "1.6×" in warm  # 9.5 / 12.0 peer, 9.5 / 6.0 floor
    assert "1.00×" in row(text, PEER) and "1.0×" in row(text, FLOOR)
    assert "10,110" in row(text, "chunks indexed") and "63.1 chunks/s" in text
    assert "0.9810" in row(text, "recall@10 vs exact: vector cache")
    assert "chroma_build_s" in text and "0.61 s" in text


def test_perf_filter_rows_are_divided_by_their_own_unfiltered_search() -> None:
    text = speed.render_perf(perf_record())
    since = row(text, "Memex warm path (vector cache): --since 90 days")
    assert "7.3 ms" in since and "0.77×" in since and "0.90×" in since


def test_perf_without_peers_still_renders() -> None:
    data = perf_record()
    data["peer"] = None
    del data["latency_ms"][PEER]
    for key in ("peer_builds", "keyword_index_load_s"):
        del data["figures"][key]
    data["figures"]["build"]["resumed"] = True
    text = speed.render_perf(data)
    assert "| – |" in row(text, "Memex warm path (vector cache) hybrid |")
    assert "1.6×" in row(text, "Memex warm path (vector cache) hybrid |")
    assert "No peer stack" in text and "resumed" in text


def scale_record() -> dict[str, Any]:
    figures = {
        "cache_load_s": 15.5,
        "cache_mb": 2936.0,
        "keyword_index_load_s": 29.5,
        "keyword_index_mb": 900.0,
        "warm_rss_mb": 5084.0,
        "warm_anon_mb": 4617.0,
        "rss_before_loads_mb": 250.0,
        "anon_before_loads_mb": 120.0,
        "parts": 1911762,
        "chunks": 1045267,
        "vector_recall_at_10": 0.98,
        "rss_after_searches_mb": 5286.0,
        "anon_after_searches_mb": 4619.0,
    }
    latency = {
        "Memex warm path hybrid": pct(32.7, 44.5),
        "Memex warm path hybrid, --person Maya": pct(34.6, 44.3),
    }
    return {"figures": figures, "latency_ms": latency}


def test_scale_renders_the_warm_paths_and_the_memory() -> None:
    text = speed.render_scale(scale_record())
    assert "32.7 ms" in row(text, "Memex warm path hybrid |") and "44.5 ms" in text
    assert "1.06×" in row(text, "Memex warm path: --person Maya")
    assert "1,045,267 / 1,911,762" in text and "0.9800" in text and "5,286" in text
    assert "no floor" in text


def vector_size() -> dict[str, Any]:
    def scan(p50: float, r10: float) -> dict[str, float]:
        return {**pct(p50), "recall@10": r10, "recall@50": r10 - 0.01}

    quiet = {
        speed.EXACT: scan(110.0, 1.0),
        "binary, re-score 320×k": scan(43.1, 0.977),
        "load_avg_1m_after": 1.2,
    }
    busy = {
        speed.EXACT: scan(109.8, 1.0),
        "binary, re-score 320×k": scan(43.2, 0.977),
        "load_avg_1m_after": 1.9,
    }
    memory = {"float matrix MB": 1536.0, "binary build s": 0.32}
    return {"parts": 1_000_000, "chunks": 399_814, "memory": memory, "quiet": quiet, "busy": busy}


def test_vector_scale_shows_each_scan_beside_the_exact_scan() -> None:
    text = speed.render_vector_scale({"k": 50, "sigma": 0.038, "sizes": [vector_size()]})
    binary = row(text, "binary, re-score 320×k")
    assert "43.1 / 64.7" in binary and "0.39×" in binary and "43.2 / 64.8" in binary
    assert "0.9770" in binary and "1.00×" in row(text, speed.EXACT)
    assert "1,000,000 parts" in text and "1536.0 MB" in text and "0.32 s" in text


def test_vector_scale_without_a_busy_run_still_renders() -> None:
    size = vector_size()
    size["busy"] = {}
    assert "| – |" in row(
        speed.render_vector_scale({"k": 50, "sigma": 0.038, "sizes": [size]}), speed.EXACT
    )


def test_blas_limit_and_embed_overlap() -> None:
    limiters = {
        "no limit (default threads)": {"empty block µs": pct(0.3), "product µs": pct(7991.0)},
        "OneBlasThread made once": {"empty block µs": pct(2.9), "product µs": pct(534.0)},
    }
    text = speed.render_blas_limit(
        {"rows": 10000, "calls": 1000, "busy": True, "limiters": limiters}
    )
    assert (
        "7,991" in row(text, "no limit") and "534" in row(text, "OneBlasThread") and "busy" in text
    )
    ways = {"beside the keyword side": pct(14.8), "before it": pct(16.4)}
    text = speed.render_embed_overlap({"chunks": {"100000": ways}})
    assert "14.8 ms" in row(text, "100,000 | embedded beside") and "0.90×" in text


def test_embed_overlap_without_the_other_way_still_renders() -> None:
    text = speed.render_embed_overlap({"chunks": {"10000": {"beside the keyword side": pct(9.0)}}})
    assert "9.0 ms" in text and "| – |" in text


def timed(median: float) -> dict[str, Any]:
    return {
        "median_s": median,
        "min_s": median - 0.01,
        "max_s": median + 0.02,
        "runs": 21,
        "answered_warm": 0,
    }


def test_warm_cli_holds_each_index_and_the_interpreter_floor() -> None:
    index = {
        "args": [],
        "one_shot": timed(0.512),
        "nothing_running": timed(0.513),
        "warm": timed(0.077),
        "same_output": True,
        "watch_rss_mb": 247.0,
    }
    data = {"python_start_s": 0.018, "demo": index, "perf-10000": {**index, "same_output": False}}
    text = speed.render_warm_cli(data)
    assert "0.512 s (0.502–0.532)" in row(text, "demo") and "**0.077 s" in row(text, "demo")
    assert "NO" in row(text, "perf-10000") and "0.018 s" in row(text, "floor")
    del data["python_start_s"]
    assert "floor" not in speed.render_warm_cli(data)


def test_warm_cli_in_a_row_beside_one_shot() -> None:
    def series(total: float, warm: int) -> dict[str, Any]:
        first = 2 if warm else None
        return {
            "first_s": 1.2,
            "total_after_first_s": total,
            "median_after_first_s": 0.1,
            "answered_warm": warm,
            "first_warm": first,
        }

    runs = {
        "count": 20,
        "autostart_off": series(17.5, 0),
        "autostart_on": series(2.1, 19),
        "same_output": True,
    }
    index = {
        "one_shot": timed(0.9),
        "nothing_running": timed(0.9),
        "warm": timed(0.08),
        "same_output": True,
        "watch_rss_mb": 250.0,
        "in_a_row": runs,
    }
    text = speed.render_warm_cli({"demo": index})
    assert text.count("20 `memex --search") == 1
    assert "**17.50 s**" in row(text, "demo, auto-start off") and "| 0 |" in text
    assert "**2.10 s**" in row(text, "demo, auto-start on") and "19 (from search 2)" in text
    del index["in_a_row"]
    assert "auto-start" not in speed.render_warm_cli({"demo": index})


def test_mcp_latency() -> None:
    data = {
        "mcp": {
            "start_to_initialized_s": 0.582,
            "first_call_ms": 318.0,
            "round_trip_ms": pct(9.5, 12.2),
            "server_took_ms": pct(6.7, 8.3),
        },
        "one_shot_ms": {**pct(407.0, 445.0, n=20), "mean": 410.0},
    }
    text = speed.render_mcp_latency(data)
    assert "9.5 ms" in row(text, "`search` through MCP") and "(200 calls)" in text
    assert "407 ms" in row(text, "`memex --search --json`") and "582 ms" in text and "43×" in text


def first_hour_record() -> dict[str, Any]:
    return {
        "chunks_asked": 10000,
        "files": 270,
        "chunks": 10110,
        "embedded": 10110,
        "file_phase_s": 1.9,
        "first_keyword_search": {"at_s": 1.9, "hits": 10, "took_ms": 2.6},
        "vector_phase_s": 158.1,
        "total_s": 160.0,
        "vectors_left": 0,
        "peak_rss_mb": 470.0,
        "raw_model": {
            "chunks": 10110,
            "tokens": 1630410,
            "seconds": 158.3,
            "chunks_per_s": 63.9,
            "tokens_per_s": 10300,
        },
        "tokens": 1630410,
        "vector_chunks_per_s": 63.9,
        "vector_tokens_per_s": 10313,
        "raw_over_vector_phase": 1.0,
    }


def test_first_hour_shows_the_vector_phase_beside_the_raw_model() -> None:
    text = operations.render_first_hour(first_hour_record())
    assert "**1.9 s**" in text and "10 hits, 2.6 ms" in text
    assert "63.9 chunks/s" in row(text, "vector phase") and "10,313 tokens/s" in text
    assert "10,300 tokens/s" in row(text, "floor: the raw model") and "1.0×" in text
    assert "63.2 chunks/s" in row(text, "end to end")


def test_first_hour_keyword_only_still_renders() -> None:
    f = first_hour_record()
    for key in (
        "raw_model",
        "tokens",
        "vector_chunks_per_s",
        "vector_tokens_per_s",
        "raw_over_vector_phase",
    ):
        del f[key]
    f.update(embedded=0, vector_phase_s=0.0, total_s=19.8, vectors_left=100267)
    text = operations.render_first_hour(f)
    assert "not run" in text and "100,267" in text and "raw model" not in text


def test_embedders_and_demo() -> None:
    data = {
        "tokens": {"short": 15.8, "windows": 160.0},
        "results": [
            {
                "embedder": "local",
                "load_seconds": 1.0,
                "short": {"wall": 617.0, "cpu": 700.0},
                "windows": {"wall": 52.0, "cpu": 60.0},
            }
        ],
    }
    text = operations.render_embedders(data)
    assert "617 / 700" in row(text, "local") and "short (15.8 tokens)" in text
    demo = {
        "chunks": 1213,
        "index_seconds": 31.9,
        "peak_rss_mb": 1024.0,
        "cold_search_s": 0.92,
        "db_mb": 8.29,
        "latency_ms": {"hybrid": pct(9.0), "bm25": pct(3.0)},
    }
    text = operations.render_demo(demo)
    assert "38.0" in row(text, "chunks/s") and "3.0 / 4.5 / 5.4 ms" in row(text, "warm bm25")


def walk(seconds: float, heads: int) -> dict[str, Any]:
    return {
        "seconds": seconds,
        "files_seen": 62000,
        "files_per_s": round(62000 / seconds),
        "found": 1015,
        "unknown": 800,
        "excluded_folders": 412,
        "heads_read": heads,
        "bytes_read": heads * 2,
        "bytes_read_per_unknown_file": 15.7 if heads else 0.0,
    }


def test_home_discovery() -> None:
    data = {
        "home": {"files": 100000},
        "first_reindex": {"seconds": 11.85, "files": 1015, "chunks": 1023},
        "cold_walk": walk(2.947, 12703),
        "no_change_walk": walk(0.886, 0),
        "no_change_cli_reindex": {"median_s": 2.812, "runs": [2.832, 2.812, 2.798]},
        "no_change_cli_reindex_without_verdicts": {
            "median_s": 4.247,
            "runs": [4.247, 4.116, 4.464],
        },
    }
    text = operations.render_home_discovery(data)
    assert "2.947" in row(text, "cold") and "12,703" in row(text, "cold") and "15.7" in text
    assert "**2.812 s**" in row(text, "with the verdicts") and "4.116" in row(text, "without them")
    assert "11.85 s" in text and "100,000 files" in text


def test_people_with_and_without_the_demo_part() -> None:
    data = {
        "build": {
            "people_in": 5000,
            "mentions": 100000,
            "seconds": 7.9,
            "people_out": 5113,
            "with_card": 5100,
            "stored_bytes": 6_500_000,
        },
        "matcher": {
            "people": 10000,
            "build_ms": 740.0,
            "p50_us": 10.0,
            "p95_us": 17.0,
            "queries": 2700,
        },
        "demo_without_people_file": {
            "people_with_card": 18,
            "person_cases": 12,
            "found": 8,
            "cases": {
                "p1": {"query": "q", "wanted": "Tommy", "found": None},
                "p2": {"query": "q", "wanted": "Maya", "found": "Maya"},
            },
        },
    }
    text = operations.render_people(data)
    assert "5,113 people (5,100 with a card), 6.5 MB" in text and "p50 10.0 µs" in text
    assert "8 of 12" in text and "“Tommy”" in text and "Maya”" not in text
    del data["demo_without_people_file"]
    assert "8 of 12" not in operations.render_people(data)


def test_freshness_and_churn() -> None:
    saves = [
        {"kind": k, "seconds": s, "cold_cli_seconds": 3.4}
        for k, s in [("new note", 2.3), ("append", 2.5), ("new note", 2.4)]
    ]
    data = {
        "chunks": 3000,
        "initial_index_seconds": 60.0,
        "debounce": 2.0,
        "saves": saves,
        "median_seconds": 2.4,
        "max_seconds": 2.5,
        "median_cold_cli_seconds": 3.4,
        "watch_exit_code": 0,
    }
    text = operations.render_freshness(data)
    assert "**2.40 s**" in row(text, "3 |") and "2.35 s" in row(text, "new note")
    snap = {
        "size_bytes": 50_000_000,
        "chunks": 5000,
        "dead_slots": 100,
        "allocated_slots": 5100,
        "dead_fraction": 0.02,
        "free_page_fraction": 0.3,
        "maintenance_suggested": True,
    }
    churn = {
        "embedder": "local",
        "initial": {"seconds": 40.0, **snap},
        "before_maintenance": snap,
        "after_maintenance": snap,
        "rounds": [
            {"changed_files": 30, "deleted_files": 14, "embedded": 1500, "deleted_chunks": 900}
        ],
        "maintenance": {
            "size_before": 80_000_000,
            "size_after": 50_000_000,
            "bytes_reclaimed": 30_000_000,
            "reclaimed_fraction": 0.375,
            "vectors_rebuilt": True,
            "timings": {"vacuum": 1.5},
        },
    }
    text = operations.render_churn(churn)
    assert (
        "30.0 MB of 80.0 MB (38%)" in text
        and "vacuum 1.50 s" in text
        and "1500" in row(text, "1 |")
    )


def test_hostile_http_pairs_each_answer_and_shows_a_missing_server() -> None:
    def run(server: str, seconds: float, bound: float) -> dict[str, Any]:
        return {
            "server": server,
            "answer": "hang",
            "seconds": seconds,
            "bound_s": bound,
            "within_bound_plus_1s": True,
            "rss_growth_mb": 0.3,
            "rss_ok": True,
            "results": 8,
            "mode": "hybrid",
            "warning": "",
        }

    rows = [
        run("re-rank", 5.02, 5.0),
        run("embedding", 10.02, 10.0),
        {**run("re-rank", 0.87, 5.0), "answer": "endless"},
    ]
    text = operations.render_hostile_http({"ok": True, "rss_limit_mb": 100.0, "rows": rows})
    assert "5.02 s (5 s)" in row(text, "hang") and "10.02 s (10 s)" in row(text, "hang")
    assert "| – |" in row(text, "endless") and ": yes." in text


def test_mcp_fuzz() -> None:
    data = {
        "lines": 5000,
        "seed": 7,
        "unanswered": 0,
        "wrong_id": 0,
        "extra_lines": 0,
        "alive_after": True,
        "round_trip_ms": pct(3.2, 51.7, 77.3),
        "search_round_trip_ms": pct(23.3, 65.4, 88.5, n=2154),
        "rss_mb_after_warmup": 313.5,
        "rss_mb_end": 349.5,
        "rss_mb_by_lines": [[1500, 349.3], [5000, 349.5]],
        "slowest": [{"ms": 583.0, "line": "…"}],
        "exit_code": 0,
        "tracebacks_in_log": 0,
    }
    text = operations.render_mcp_fuzz(data)
    assert "3.2 / 51.7 / 77.3 ms" in text and "the 2,154 `search` calls" in text
    assert "349.3 (1,500 lines)" in text and "583 ms" in text and "yes, 0, 0" in text
    data.update(rss_mb_by_lines=[], slowest=[])
    assert "slowest" not in operations.render_mcp_fuzz(data)


@pytest.mark.parametrize("section", [*speed.SECTIONS, *operations.SECTIONS], ids=lambda s: s.result)
def test_sections_have_stable_names_and_commands(section: Section) -> None:
    assert section.result.replace("-", "").replace("_", "").replace(".", "").isalnum()
    assert section.command.startswith(".venv/bin/python -m bench.")
    assert section.part


def test_result_names_are_unique() -> None:
    names = [s.result for s in [*speed.SECTIONS, *operations.SECTIONS]]
    assert len(names) == len(set(names))


def test_records_are_not_changed_by_rendering() -> None:
    data = perf_record()
    kept = copy.deepcopy(data)
    speed.render_perf(data)
    assert data == kept

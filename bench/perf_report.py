"""The tables and the JSON file of bench.perf: one run's figures and latency samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.common import markdown_table, percentiles, write_record

Samples = dict[str, list[float]]
FLOOR = "floor: embed + numpy scan + FTS5 + RRF"


# -- tables ---------------------------------------------------------------------------------


def latency_table(samples: Samples, peer: str | None, floor: str) -> str:
    base = {name: percentiles(v)["p50"] for name, v in samples.items()}
    rows = []
    for name, values in samples.items():
        p = percentiles(values)
        ratios = [
            f"{p['p50'] / base[peer]:.2f}×" if peer in base else "–",
            f"{p['p50'] / base[floor]:.1f}×",
        ]
        rows.append([name, round(p["p50"], 2), round(p["p95"], 2), round(p["p99"], 2), *ratios])
    return markdown_table(
        ["query path (warm)", "p50 ms", "p95 ms", "p99 ms", "p50 ÷ peer", "p50 ÷ floor"], rows
    )


def process_table(figures: dict[str, Any]) -> str:
    b = figures["build"]
    rows = [
        ["chunks indexed", b["chunks"]],
        [
            "full index (memex reindex, child process)",
            f"resumed after an interruption: the last {b['seconds']} s only, throughput not measured"
            if b.get("resumed")
            else f"{b['seconds']} s = {b['chunks_per_s']} chunks/s",
        ],
        ["peak RSS during the full reindex", f"{b['peak_rss_mb']} MB"],
        [
            "load average before / after the build",
            f"{b['load_avg_before']} / {b['load_avg_after']}",
        ],
        [
            "no-change reindex",
            f"{figures['no_change_s']:.2f} s (peak RSS {figures['no_change_rss_mb']:.0f} MB)",
        ],
        [
            "cold `memex --search` (new process → printed results, median of 5)",
            f"{figures['cold_search_s']:.2f} s",
        ],
        ["database size (db + wal)", f"{figures['db_mb']:.1f} MB"],
        *warm_rows(figures),
    ]
    rows += [[f"{name}", f"{value} s"] for name, value in figures.get("peer_builds", {}).items()]
    rows += [[f"recall@10 vs exact: {name}", value] for name, value in figures["recall"].items()]
    return markdown_table(["figure", "value"], rows)


def warm_rows(figures: dict[str, Any]) -> list[list[str]]:
    """The warm path's loads and memory."""
    rows = [
        [
            "vector cache: first load / matrix size",
            f"{figures['cache_load_s']} s / {figures['cache_mb']} MB",
        ]
    ]
    if "keyword_index_load_s" in figures:
        loaded = f"{figures['keyword_index_load_s']} s / {figures['keyword_index_mb']} MB"
        rss, anon = figures["warm_rss_mb"], figures.get("warm_anon_mb", 0)
        rows.append(["keyword index: first load / postings size", loaded])
        rows.append(["bench process RSS / anonymous, both loaded", f"{rss:.0f} / {anon:.0f} MB"])
    return rows


def targets_table(figures: dict[str, Any], samples: Samples) -> str:
    """SPEC §11's targets (stated for 100k chunks) against this run."""
    hybrid = percentiles(samples["Memex one-shot path (vec0) hybrid"])
    cached = percentiles(samples["Memex warm path (vector cache) hybrid"])
    b = figures["build"]
    rows = [
        ["warm hybrid p50 ≤ 10 ms", f"{hybrid['p50']:.1f} ms", f"{cached['p50']:.1f} ms"],
        ["warm hybrid p95 ≤ 20 ms", f"{hybrid['p95']:.1f} ms", f"{cached['p95']:.1f} ms"],
        ["cold `memex --search` ≤ 0.8 s", f"{figures['cold_search_s']:.2f} s", "–"],
        [
            "indexing ≥ 150 chunks/s",
            "not measured (resumed build)" if b.get("resumed") else f"{b['chunks_per_s']} chunks/s",
            "–",
        ],
        ["no-change reindex ≤ 3 s", f"{figures['no_change_s']:.2f} s", "–"],
    ]
    return markdown_table(
        ["SPEC §11 target", "one-shot path (vec0)", "warm path (vector cache)"], rows
    )


# -- output ----------------------------------------------------------------------------------


def print_report(result: dict[str, Any], chunks: int, peer: str | None) -> None:
    print(f"## {chunks} chunks\n")
    print(process_table(result["figures"]) + "\n")
    print(latency_table(result["samples"], peer, FLOOR))
    print("\n" + targets_table(result["figures"], result["samples"]))


def write_json(
    path: Path, before: dict[str, Any], result: dict[str, Any], chunks: int, peer: str | None
) -> None:
    """The run's figures and each path's percentiles, with the names of the floor and peer
    paths the report divides by (bench.report.speed)."""
    summary = {
        name: {k: round(v, 3) for k, v in percentiles(s).items()}
        for name, s in result["samples"].items()
    }
    figures = {"chunks": chunks, "floor": FLOOR, "peer": peer, "figures": result["figures"]}
    write_record(path, before, {**figures, "latency_ms": summary})

"""The report's "Speed" part: query latency beside the floor and the peer of the same run.

Each renderer reads one result file of bench.perf, bench.scale, bench.vector_scale,
bench.blas_limit, bench.embed_overlap, bench.cold_start, bench.warm_load, bench.warm_cli or
bench.mcp_latency. Ratios are computed here from the file's own figures, so a timing is
only ever divided by another of the same run.
"""

from __future__ import annotations

from typing import Any

from bench.report.sections import Render, Section
from bench.report.tables import markdown_table

PART = "Speed"
FILTERS = ("--source", "--since", "--person")


def ms(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}f} ms"


def ratio(value: float, base: float | None, digits: int = 2) -> str:
    return f"{value / base:.{digits}f}×" if base else "–"


def p50_of(latency: dict[str, Any], name: str | None) -> float | None:
    return latency[name]["p50"] if name and name in latency else None


# -- bench.perf ----------------------------------------------------------------------------


def latency_table(data: dict[str, Any]) -> str:
    """Every path's p50/p95/p99 and its p50 over the peer's and the floor's, same run."""
    latency = data["latency_ms"]
    peer, floor = p50_of(latency, data.get("peer")), p50_of(latency, data.get("floor"))
    rows = [
        [
            name,
            f"{p['p50']:.2f}",
            f"{p['p95']:.2f}",
            f"{p['p99']:.2f}",
            ratio(p["p50"], peer),
            ratio(p["p50"], floor, 1),
        ]
        for name, p in latency.items()
    ]
    headers = ["query path (warm)", "p50 ms", "p95 ms", "p99 ms", "p50 ÷ peer", "p50 ÷ floor"]
    return markdown_table(headers, rows)


def filter_table(latency: dict[str, Any]) -> str:
    """Each filtered search's p50 and p95 over the unfiltered hybrid search of its path."""
    rows = []
    for name, p in latency.items():
        path, _, flag = name.partition(" hybrid, ")
        base = latency.get(f"{path} hybrid")
        if flag.startswith(FILTERS) and base:
            rows.append(
                [
                    f"{path}: {flag}",
                    ms(p["p50"]),
                    ratio(p["p50"], base["p50"]),
                    ratio(p["p95"], base["p95"]),
                ]
            )
    if not rows:
        return ""
    return markdown_table(["filtered search", "p50", "p50 ÷ unfiltered", "p95 ÷ unfiltered"], rows)


def build_rows(figures: dict[str, Any]) -> list[list[Any]]:
    b = figures["build"]
    if b.get("resumed"):
        throughput = f"resumed after an interruption: the last {b['seconds']} s only"
    else:
        throughput = f"{b['seconds']} s = {b['chunks_per_s']} chunks/s"
    return [
        ["chunks indexed", f"{b['chunks']:,}"],
        ["full index (`memex reindex`, child process)", throughput],
        ["peak RSS during the full reindex", f"{b['peak_rss_mb']:,.0f} MB"],
        [
            "load average before / after the build",
            f"{b['load_avg_before']} / {b['load_avg_after']}",
        ],
    ]


def warm_rows(figures: dict[str, Any]) -> list[list[Any]]:
    """The warm path's loads and memory (bench.perf and bench.scale)."""
    rows = [
        [
            "vector cache: first load / matrix",
            f"{figures['cache_load_s']} s / {figures['cache_mb']} MB",
        ]
    ]
    if "keyword_index_load_s" in figures:
        index = f"{figures['keyword_index_load_s']} s / {figures['keyword_index_mb']} MB"
        both = f"{figures['warm_rss_mb']:,.0f} / {figures.get('warm_anon_mb', 0):,.0f} MB"
        rows += [["keyword index: first load / postings", index]]
        rows += [["process RSS / anonymous, both loaded", both]]
    return rows


def process_table(figures: dict[str, Any]) -> str:
    rows = build_rows(figures) if "build" in figures else []
    rows += [
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
    rows += [[name, f"{value} s"] for name, value in figures.get("peer_builds", {}).items()]
    rows += [
        [f"recall@10 vs exact: {name}", f"{v:.4f}"] for name, v in figures.get("recall", {}).items()
    ]
    return markdown_table(["figure", "value"], rows)


def render_perf(data: dict[str, Any]) -> str:
    figures = data["figures"]
    lines = [
        f"{data['chunks']:,} chunks, {figures['queries']} queries." if "chunks" in data else "",
        process_table(figures),
        latency_table(data),
        filter_table(data["latency_ms"]),
    ]
    if not data.get("peer"):
        lines.append("No peer stack in this run (`--no-peers`): the floor is the comparison.")
    return "\n\n".join(line for line in lines if line)


# -- bench.scale ---------------------------------------------------------------------------


def render_scale(data: dict[str, Any]) -> str:
    f = data["figures"]
    rows = [
        ["chunks / parts", f"{f['chunks']:,} / {f['parts']:,}"],
        *warm_rows(f),
        ["vector recall@10 vs the exact scan (k = 50 asked)", f"{f['vector_recall_at_10']:.4f}"],
        [
            "RSS: before the loads / after the searches",
            f"{f['rss_before_loads_mb']:,.0f} / {f['rss_after_searches_mb']:,.0f} MB",
        ],
        [
            "anonymous: before the loads / after the searches",
            f"{f['anon_before_loads_mb']:,.0f} / {f['anon_after_searches_mb']:,.0f} MB",
        ],
    ]
    latency = data["latency_ms"]
    paths = [[name, ms(p["p50"]), ms(p["p95"]), ms(p["p99"])] for name, p in latency.items()]
    return "\n\n".join(
        part
        for part in (
            markdown_table(["figure", "value"], rows),
            markdown_table(["warm path", "p50", "p95", "p99"], paths),
            filter_table(latency),
            "This run times the warm Searcher alone: it holds no floor or peer path; "
            "compare with the perf sections only through their own floor rows.",
        )
        if part
    )


# -- bench.vector_scale, bench.blas_limit, bench.embed_overlap ------------------------------

EXACT = "exact float, 1 BLAS thread"


def memory_table(memory: dict[str, Any]) -> str:
    rows = [
        [name.removesuffix(" MB").removesuffix(" s"), f"{value} {name.rsplit(' ', 1)[-1]}"]
        for name, value in memory.items()
    ]
    return markdown_table(["memory and build", "value"], rows)


def scan_table(size: dict[str, Any]) -> str:
    quiet, busy = size["quiet"], size["busy"]
    floor = quiet.get(EXACT, {}).get("p50")
    rows = []
    for name, q in quiet.items():
        if not isinstance(q, dict):
            continue
        b = busy.get(name, {})
        busy_cell = f"{b['p50']:.1f} / {b['p95']:.1f}" if b else "–"
        rows.append(
            [
                name,
                f"{q['p50']:.1f} / {q['p95']:.1f}",
                ratio(q["p50"], floor),
                busy_cell,
                f"{q['recall@10']:.4f}",
                f"{q['recall@50']:.4f}",
            ]
        )
    headers = ["scan (k = 50)", "quiet p50 / p95 ms", "quiet p50 ÷ exact", "busy p50 / p95 ms"]
    return markdown_table([*headers, "recall@10", "recall@50"], rows)


def render_vector_scale(data: dict[str, Any]) -> str:
    parts = []
    for size in data["sizes"]:
        parts.append(f"**{size['parts']:,} parts** ({size['chunks']:,} chunks):")
        parts += [scan_table(size), memory_table(size["memory"])]
    parts.append(
        f"k = {data['k']}; synthesized rows: a real seed vector plus noise σ = {data['sigma']}."
    )
    return "\n\n".join(parts)


def render_blas_limit(data: dict[str, Any]) -> str:
    rows = []
    for name, f in data["limiters"].items():
        empty, product = f["empty block µs"], f["product µs"]
        rows.append(
            [
                name,
                f"{empty['p50']:.1f} / {empty['p95']:.1f}",
                f"{product['p50']:,.0f} / {product['p95']:,.0f}",
            ]
        )
    busy = "one core kept busy" if data.get("busy") else "quiet"
    head = f"{data['rows']:,} × 384 float32 product, {data['calls']:,} calls each, {busy}:"
    headers = ["limiter", "empty block p50 / p95 µs", "product p50 / p95 µs"]
    return f"{head}\n\n{markdown_table(headers, rows)}"


def render_embed_overlap(data: dict[str, Any]) -> str:
    rows = []
    for chunks, ways in data["chunks"].items():
        before = ways.get("before it", {}).get("p50")
        for name, p in ways.items():
            rows.append(
                [
                    f"{int(chunks):,}",
                    f"embedded {name}",
                    ms(p["p50"]),
                    ms(p["p95"]),
                    ratio(p["p50"], before),
                ]
            )
    headers = ["chunks", "query embedding", "search p50", "p95", "p50 ÷ before it"]
    return markdown_table(headers, rows)


# -- bench.cold_start ------------------------------------------------------------------------


COLD_KINDS = (
    ("memex", "`memex --search` (one-shot)"),
    ("memex_vec0", "`memex --search`, no kept matrix (vec0)"),
    ("memex_before", "`memex --search` at the commit before"),
    ("floor", "floor: model, query vector, one FTS5 query"),
    ("python", "bare `python -c pass`"),
)


def render_cold_start(data: dict[str, Any]) -> str:
    """Per index: each kind's median (min–max) and its ratio to the floor, same run."""
    rows = []
    for name, f in data["indexes"].items():
        times, floor = f["timings"], f["timings"]["floor"]["median_s"]
        for kind, label in COLD_KINDS:
            if kind in times:
                t = times[kind]
                rows.append(
                    [name, f"{f['chunks']:,}", label, seconds_cell(t), ratio(t["median_s"], floor)]
                )
    headers = ["index", "chunks", "process", "wall clock", "÷ floor"]
    modules = [
        f"{name}: {f['modules']['engine']} engine modules loaded, "
        f"{f['modules']['index_and_extractors']} of engine.index/extractors"
        + (
            f" (at the commit before: {f['modules_before']['engine']}, "
            f"{f['modules_before']['index_and_extractors']})"
            if "modules_before" in f
            else ""
        )
        for name, f in data["indexes"].items()
    ]
    runs = f"Median of {data['runs']} runs each, min–max in brackets; query '{data['query']}'."
    said = {"SavedVectors": "the kept matrix", "Vec0Backend": "vec0 (the file did not match)"}
    sides = [
        f"{name}: {said.get(f['vector_side'], f['vector_side'])}"
        for name, f in data["indexes"].items()
        if "vector_side" in f
    ]
    lead = "The one-shot's vector side once a warm process kept its matrix: "
    kept = [lead + "; ".join(sides) + "."] if sides else []
    return "\n\n".join([markdown_table(headers, rows), runs, "; ".join(modules) + ".", *kept])


# -- bench.warm_load ------------------------------------------------------------------------

WARM_ARMS = (
    ("read", "read from the index (no files)"),
    ("write", "read, written beside the index, mapped"),
    ("mapped", "mapped from the files"),
)


def render_warm_load(data: dict[str, Any]) -> str:
    """Per arm: the first load of the vectors and the postings, the first search, memory."""
    rows = []
    for arm, label in WARM_ARMS:
        f = data["arms"][arm]
        rows.append(
            [
                label,
                f"{f['vectors_load_s']:.2f} s",
                f"{f['keyword_load_s']:.2f} s",
                f"**{f['load_s']:.2f} s**" if arm == "mapped" else f"{f['load_s']:.2f} s",
                ms(f["first_search_s"] * 1000),
                f"{f['rss_mb']:,.0f} / {f['anon_mb']:,.0f} / {f['file_mb']:,.0f}",
                "yes" if data["same_results"][arm] else "**no**",
            ]
        )
    headers = [
        "warm process",
        "vectors",
        "keyword postings",
        "first load",
        "first search (ms)",
        "RSS / anonymous / file-backed (MB)",
        "same results",
    ]
    files = data["file_mb"]
    lead = (
        f"{data['chunks']:,} chunks, 384-dimensional vectors; each arm a new process, median "
        f"of {data['runs']}; {data['queries']} queries in each of hybrid, bm25 and vector mode "
        f"compared with the read arm's. Files beside the index: `memex.db.keyword` "
        f"{files['keyword']:,.1f} MB, `memex.db.vectors` {files['vectors']:,.1f} MB (the "
        f"index: {data['db_mb']:,.1f} MB)."
    )
    return "\n\n".join([lead, markdown_table(headers, rows)])


# -- bench.warm_cli, bench.mcp_latency -----------------------------------------------------


def seconds_cell(f: dict[str, Any]) -> str:
    return f"{f['median_s']:.3f} s ({f['min_s']:.3f}–{f['max_s']:.3f})"


def render_warm_cli(data: dict[str, Any]) -> str:
    rows = []
    for name in [n for n in data if n == "demo" or n.startswith(("perf-", "hashing-"))]:
        f = data[name]
        rows.append(
            [
                name,
                seconds_cell(f["one_shot"]),
                seconds_cell(f["nothing_running"]),
                f"**{seconds_cell(f['warm'])}**",
                f"{f['watch_rss_mb']:,.0f} MB",
                "yes" if f["same_output"] else "NO",
            ]
        )
    start = data.get("python_start_s")
    if start is not None:
        rows.append(["floor: bare `python -c pass`", f"{start:.3f} s", "", "", "", ""])
    headers = ["index", "one-shot", "nothing running", "warm (`memex watch`)", "watch RSS"]
    table = markdown_table([*headers, "same output"], rows)
    text = f"{table}\n\nMedian of the runs, min–max in brackets."
    kept = [
        f"{name}: {', '.join('memex.db' + s for s in data[name]['files_kept']) or 'none'}"
        for name in data
        if isinstance(data[name], dict) and "files_kept" in data[name]
    ]
    if kept:
        text += (
            " Files a warm process left beside each index before the runs: " + "; ".join(kept) + "."
        )
    in_a_row = render_in_a_row(data)
    return f"{text}\n\n{in_a_row}" if in_a_row else text


def render_in_a_row(data: dict[str, Any]) -> str:
    """Searches one after another from a shell, auto-start off and on ('' if not run)."""
    rows, count = [], 0
    for name in [n for n in data if n == "demo" or n.startswith(("perf-", "hashing-"))]:
        row = data[name].get("in_a_row")
        if row:
            count = row["count"]
            rows += [
                in_a_row_cells(f"{name}, auto-start {label}", row, key)
                for label, key in (("off", "autostart_off"), ("on", "autostart_on"))
            ]
    if not rows:
        return ""
    headers = ["searches in a row", "the first", "all after the first", "median after it"]
    table = markdown_table([*headers, "answered warm", "same output"], rows)
    return (
        f"{count} `memex --search … --json` one after the other, as a script makes them:\n\n{table}"
    )


def in_a_row_cells(label: str, row: dict[str, Any], key: str) -> list[str]:
    f = row[key]
    warm = f"{f['answered_warm']} (from search {f['first_warm']})" if f["answered_warm"] else "0"
    return [
        label,
        f"{f['first_s']:.3f} s",
        f"**{f['total_after_first_s']:.2f} s**",
        f"{f['median_after_first_s']:.3f} s",
        warm,
        "yes" if row["same_output"] else "NO",
    ]


def render_mcp_latency(data: dict[str, Any]) -> str:
    mcp, one_shot = data["mcp"], data["one_shot_ms"]
    trip, took = mcp["round_trip_ms"], mcp["server_took_ms"]
    rows = [
        [
            f"`search` through MCP, warm, client round trip ({int(trip['n'])} calls)",
            ms(trip["p50"]),
            ms(trip["p95"]),
        ],
        ["of which the engine (`took_ms` in the result)", ms(took["p50"]), ms(took["p95"])],
        [
            f"`memex --search --json`, one-shot ({int(one_shot['n'])} processes)",
            ms(one_shot["p50"], 0),
            ms(one_shot["p95"], 0),
        ],
        [
            "`memex mcp` start → `initialize` answered",
            ms(mcp["start_to_initialized_s"] * 1000, 0),
            "",
        ],
        ["first `search` call after `initialize`", ms(mcp["first_call_ms"], 0), ""],
    ]
    faster = ratio(one_shot["p50"], trip["p50"], 0)
    table = markdown_table(["", "p50", "p95"], rows)
    return f"{table}\n\nThe one-shot p50 over the warm round trip's: {faster}."


def perf_section(chunks: int, busy: bool) -> Section:
    suffix = "-busy" if busy else ""
    flag = " --no-peers --busy" if busy else ""
    label = "one core busy" if busy else "quiet"
    return Section(
        title=f"{chunks:,} chunks beside the floor and a peer stack ({label})",
        result=f"perf-{chunks}{suffix}",
        render=render_perf,
        command=f".venv/bin/python -m bench.perf --chunks {chunks}{flag} --quiet-load 1.2",
        part=PART,
    )


def section(title: str, result: str, render: Render, command: str) -> Section:
    return Section(title, result, render, f".venv/bin/python -m {command}", PART)


SECTIONS: list[Section] = [
    perf_section(10_000, busy=False),
    perf_section(100_000, busy=False),
    perf_section(10_000, busy=True),
    perf_section(100_000, busy=True),
    section("1M chunks, warm process (quiet)", "scale-10x", render_scale, "bench.scale"),
    section(
        "1M chunks, warm process (one core busy)",
        "scale-10x-busy",
        render_scale,
        "bench.scale --busy",
    ),
    section(
        "Vector side at scale",
        "vector_scale",
        render_vector_scale,
        "bench.vector_scale --parts 100000 1000000",
    ),
    section(
        "BLAS held to one thread (quiet)",
        "blas_limit",
        render_blas_limit,
        "bench.blas_limit --calls 1000",
    ),
    section(
        "BLAS held to one thread (one core busy)",
        "blas_limit-busy",
        render_blas_limit,
        "bench.blas_limit --calls 1000 --busy",
    ),
    section(
        "The query embedding beside the keyword side",
        "embed_overlap",
        render_embed_overlap,
        "bench.embed_overlap",
    ),
    section(
        "The query embedding beside the keyword side (one core busy)",
        "embed_overlap-busy",
        render_embed_overlap,
        "bench.embed_overlap --busy",
    ),
    section(
        "Cold start",
        "cold_start",
        render_cold_start,
        "bench.cold_start --hashing-chunks 100000 --quiet-load 1.2",
    ),
    section(
        "Warm start: the index read, or its files mapped",
        "warm_load",
        render_warm_load,
        "bench.warm_load --chunks 100000 --runs 3 --quiet-load 1.2",
    ),
    section(
        "Warm start at 1M chunks",
        "warm_load-1000000",
        render_warm_load,
        "bench.warm_load --chunks 1000000 --runs 1 --quiet-load 1.2",
    ),
    section(
        "Warm CLI",
        "warm_cli",
        render_warm_cli,
        "bench.warm_cli --hashing-chunks 100000 --quiet-load 1.2",
    ),
    section(
        "MCP: warm search latency",
        "mcp_latency",
        render_mcp_latency,
        "bench.mcp_latency --quiet-load 1.4",
    ),
]

"""The report's operational parts: indexing, discovery and people, freshness, trust boundaries.

Each renderer reads one result file of bench.first_hour, bench.embedders (and
bench.model_ceiling, rendered by bench/report/model_ceiling.py), bench.demo,
bench.home_discovery, bench.people, bench.reindex_nochange, bench.freshness, bench.churn,
bench.hostile_http, bench.mcp_fuzz or bench.warm_slow_clients.
"""

from __future__ import annotations

import statistics
from typing import Any

from bench.report import model_ceiling
from bench.report.sections import Render, Section
from bench.report.tables import markdown_table

INDEXING = "Indexing"
DISCOVERY = "Discovery and people"
FRESHNESS = "Freshness and churn"
TRUST = "Trust boundaries"


def figure_table(rows: list[list[Any]]) -> str:
    return markdown_table(["", "figure"], rows)


def mb(size_bytes: float) -> str:
    return f"{size_bytes / 1e6:,.1f} MB"


# -- Indexing ------------------------------------------------------------------------------


def vector_rows(f: dict[str, Any]) -> list[list[Any]]:
    """The vector phase beside the raw model on the same texts (its floor), when they ran."""
    if not f.get("embedded"):
        return [["vector phase", "not run (`--keyword-only`)"]]
    per_s = f.get("vector_chunks_per_s") or round(f["embedded"] / f["vector_phase_s"], 1)
    tokens = f", {f['vector_tokens_per_s']:,} tokens/s" if "vector_tokens_per_s" in f else ""
    rows = [["vector phase", f"{f['vector_phase_s']} s: **{per_s} chunks/s**{tokens}"]]
    raw = f.get("raw_model")
    if raw:
        rate = (
            f"{raw['seconds']} s: {raw['chunks_per_s']} chunks/s, {raw['tokens_per_s']:,} tokens/s"
        )
        rows.append(["floor: the raw model on the same texts", rate])
        rows.append(["raw model rate ÷ vector phase rate", f"{f['raw_over_vector_phase']}×"])
    return rows


def render_first_hour(f: dict[str, Any]) -> str:
    search = f["first_keyword_search"]
    first = f"{search['at_s']} s ({search['hits']} hits, {search['took_ms']} ms)" if search else "–"
    rows = [
        [
            "files / chunks / chunks embedded",
            f"{f['files']:,} / {f['chunks']:,} / {f['embedded']:,}",
        ],
        ["file phase: every chunk keyword-searchable", f"**{f['file_phase_s']} s**"],
        ["first keyword search answered", first],
        *vector_rows(f),
        ["end to end", f"{f['total_s']} s ({f['chunks'] / f['total_s']:.1f} chunks/s)"],
        ["vectors left", f"{f['vectors_left']:,}"],
        ["peak RSS of the index run", f"{f['peak_rss_mb']:,.0f} MB"],
    ]
    return figure_table(rows)


def render_embedders(data: dict[str, Any]) -> str:
    tokens = data["tokens"]
    headers = ["embedder", "load s"]
    headers += [f"{name} ({tokens[name]} tokens): texts/s wall / per CPU-s" for name in tokens]
    rows = [
        [r["embedder"], f"{r['load_seconds']:.1f}"]
        + [f"{r[name]['wall']:,.0f} / {r[name]['cpu']:,.0f}" for name in tokens]
        for r in data["results"]
    ]
    return markdown_table(headers, rows)


def render_demo(f: dict[str, Any]) -> str:
    chunks, seconds = f["chunks"], f["index_seconds"]
    rows: list[list[Any]] = [
        ["chunks", f"{chunks:,}"],
        ["index time (`memex reindex`, child process)", f"{seconds:.1f} s"],
        ["chunks/s", f"{chunks / seconds:.1f}"],
        ["peak RSS of the reindex", f"{f['peak_rss_mb']:,.0f} MB"],
    ]
    for mode, p in f["latency_ms"].items():
        name = f"warm {mode} p50 / p95 / p99 ({int(p['n'])} queries)"
        rows.append([name, f"{p['p50']:.1f} / {p['p95']:.1f} / {p['p99']:.1f} ms"])
    rows.append(["cold `memex --search` (median of 5)", f"{f['cold_search_s']:.2f} s"])
    rows.append(["database size", f"{f['db_mb']:.2f} MB"])
    return figure_table(rows)


# -- Discovery and people ------------------------------------------------------------------


def walk_row(name: str, w: dict[str, Any]) -> list[Any]:
    return [
        name,
        f"{w['seconds']:.3f}",
        f"{w['files_seen']:,}",
        f"{w['files_per_s']:,}",
        f"{w['excluded_folders']:,}",
        f"{w['heads_read']:,}",
        f"{w['bytes_read_per_unknown_file']}",
    ]


def render_home_discovery(data: dict[str, Any]) -> str:
    walks = markdown_table(
        [
            "walk",
            "seconds",
            "files seen",
            "files/s",
            "folders not entered",
            "heads read",
            "bytes read per unknown file",
        ],
        [
            walk_row("cold (nothing known)", data["cold_walk"]),
            walk_row("no change (types and verdicts known)", data["no_change_walk"]),
        ],
    )
    kept, without = data["no_change_cli_reindex"], data["no_change_cli_reindex_without_verdicts"]
    runs = markdown_table(
        ["no-change `memex reindex` (child process)", "median", "runs"],
        [
            [
                "with the verdicts of unknown files",
                f"**{kept['median_s']:.3f} s**",
                ", ".join(f"{s:.3f}" for s in kept["runs"]),
            ],
            [
                "without them (every candidate read again)",
                f"{without['median_s']:.3f} s",
                ", ".join(f"{s:.3f}" for s in without["runs"]),
            ],
        ],
    )
    first, home = data["first_reindex"], data["home"]
    lead = (
        f"A home folder of {home['files']:,} files. The first reindex ({first['files']:,} files, "
        f"{first['chunks']:,} chunks with their vectors) took {first['seconds']} s."
    )
    return f"{lead}\n\n{walks}\n\n{runs}"


def render_people(data: dict[str, Any]) -> str:
    b, m = data["build"], data["matcher"]
    rows = [
        [
            f"`build_directory`: {b['people_in']:,} people in {b['mentions']:,} mentions",
            f"{b['seconds']:.1f} s → {b['people_out']:,} people ({b['with_card']:,} with a card), {mb(b['stored_bytes'])} stored",
        ],
        [
            f"`PeopleMatcher.find` over {m['people']:,} people ({m['queries']:,} queries)",
            f"p50 {m['p50_us']} µs, p95 {m['p95_us']} µs (built in {m['build_ms'] / 1000:.2f} s)",
        ],
    ]
    demo = data.get("demo_without_people_file")
    if demo:
        rows.append(
            [
                "the demo layer without its people file: people with a card",
                f"{demo['people_with_card']}",
            ]
        )
        rows.append(
            ["its person cases whose person is found", f"{demo['found']} of {demo['person_cases']}"]
        )
        missed = [c["wanted"] for c in demo["cases"].values() if c["found"] != c["wanted"]]
        if missed:
            rows.append(["not found", ", ".join(f"“{name}”" for name in missed)])
    return figure_table(rows)


def _reindex_cell(bed: dict[str, Any], strong: bool = False) -> str:
    """The child process's median (its runs) · the profiled in-process run."""
    cli, median = bed["cli"], f"{bed['cli']['median_s']:.2f} s"
    runs = ", ".join(f"{s:.2f}" for s in cli["runs"])
    median = f"**{median}**" if strong else median
    return f"{median} ({runs}) · {bed['in_process']['seconds']:.2f} s"


def render_reindex_nochange(data: dict[str, Any]) -> str:
    """The no-change reindex on both beds, beside the figures of an earlier commit."""
    earlier = data.get("before")
    beds = [
        (f"{data['chunk_bed']['layer_chunks']:,}-chunk chat layer", "chunk_bed"),
        (f"home folder of {data['home_bed']['home_files']:,} files", "home_bed"),
    ]
    headers = ["no-change `memex reindex`", "files / chunks indexed"]
    if earlier:
        headers.append(f"commit {earlier['run']['commit']}")
    headers.append(f"commit {data['run']['commit']}")
    rows = []
    for name, key in beds:
        bed = data[key]
        row = [name, f"{bed['indexed_files']:,} / {bed['chunks']:,}"]
        row += [_reindex_cell(earlier[key])] if earlier else []
        rows.append([*row, _reindex_cell(bed, strong=True)])
    parts = [markdown_table(headers, rows)]
    lead = "Each cell: a child process's median (its runs) · one run in this process, profiled."
    if earlier:
        run, cpu = earlier["run"], earlier["run"]["machine_before"]["cpu"]
        load = f"{run['machine_before']['load_avg_1m']} → {run['machine_after']['load_avg_1m']}"
        lead += f" Commit {run['commit']}: run {run['date']} on {cpu}, load average {load}."
    parts.insert(0, lead)
    for name, key in beds:
        profile = data[key]["in_process"]
        top = ", ".join(f"`{t['function']}` {t['cumulative_s']:.3f} s" for t in profile["top"][:6])
        stages = ", ".join(f"{k} {v:.3f} s" for k, v in profile["timings"].items()) or "none"
        parts.append(f"{name.capitalize()}, under cProfile: stages {stages}; {top}.")
    return "\n\n".join(parts)


# -- Freshness and churn -------------------------------------------------------------------


def render_freshness(data: dict[str, Any]) -> str:
    lead = (
        f"{data['chunks']:,} chunks (indexed in {data['initial_index_seconds']} s), debounce "
        f"{data['debounce']} s, `memex watch` exit code {data['watch_exit_code']}."
    )
    totals = markdown_table(
        ["saves", "median save → found", "max", "median cold `memex --search` process"],
        [
            [
                len(data["saves"]),
                f"**{data['median_seconds']:.2f} s**",
                f"{data['max_seconds']:.2f} s",
                f"{data['median_cold_cli_seconds']:.2f} s",
            ]
        ],
    )
    kinds: dict[str, list[float]] = {}
    for save in data["saves"]:
        kinds.setdefault(save["kind"], []).append(save["seconds"])
    per_kind = markdown_table(
        ["kind of save", "saves", "median save → found"],
        [[k, len(v), f"{statistics.median(v):.2f} s"] for k, v in kinds.items()],
    )
    return f"{lead}\n\n{totals}\n\n{per_kind}"


def snapshot_row(name: str, s: dict[str, Any]) -> list[Any]:
    return [
        name,
        mb(s["size_bytes"]),
        f"{s['chunks']:,}",
        f"{s['dead_slots']:,} of {s['allocated_slots']:,} ({s['dead_fraction']:.0%})",
        f"{s['free_page_fraction']:.0%}",
        "yes" if s["maintenance_suggested"] else "no",
    ]


def render_churn(data: dict[str, Any]) -> str:
    snapshots = markdown_table(
        ["index", "size", "chunks", "dead vec0 slots", "free pages", "maintenance suggested"],
        [
            snapshot_row(
                f"after the first index ({data['initial']['seconds']} s)", data["initial"]
            ),
            snapshot_row(
                f"after {len(data['rounds'])} rounds of churn", data["before_maintenance"]
            ),
            snapshot_row("after `memex maintenance`", data["after_maintenance"]),
        ],
    )
    rounds = markdown_table(
        ["round", "files changed", "files deleted", "chunks embedded", "chunks deleted"],
        [
            [n + 1, r["changed_files"], r["deleted_files"], r["embedded"], r["deleted_chunks"]]
            for n, r in enumerate(data["rounds"])
        ],
    )
    m = data["maintenance"]
    timings = ", ".join(f"{name} {s:.2f} s" for name, s in m["timings"].items())
    reclaimed = (
        f"Maintenance reclaimed {mb(m['bytes_reclaimed'])} of {mb(m['size_before'])} "
        f"({m['reclaimed_fraction']:.0%}); vectors rebuilt: {m['vectors_rebuilt']}; {timings}. "
        f"Embedder: {data['embedder']}."
    )
    return f"{snapshots}\n\n{rounds}\n\n{reclaimed}"


# -- Trust boundaries ----------------------------------------------------------------------


def render_hostile_http(data: dict[str, Any]) -> str:
    """One line per hostile answer, its re-rank search beside its embedding search."""
    by_answer: dict[str, dict[str, dict[str, Any]]] = {}
    for row in data["rows"]:
        by_answer.setdefault(row["answer"], {})[row["server"]] = row
    servers = list(dict.fromkeys(row["server"] for row in data["rows"]))
    headers = ["server's answer"]
    headers += [f"{s} search (bound)" for s in servers]
    headers += [f"RSS growth ({' / '.join(servers)})", "results (mode)"]
    rows = []
    for answer, runs in by_answer.items():
        got = [runs.get(s) for s in servers]
        cells = [answer]
        cells += [f"{r['seconds']:.2f} s ({r['bound_s']:g} s)" if r else "–" for r in got]
        cells.append(" / ".join(f"{r['rss_growth_mb']:.1f}" if r else "–" for r in got) + " MB")
        cells.append(" / ".join(f"{r['results']} ({r['mode']})" if r else "–" for r in got))
        rows.append(cells)
    verdict = "yes" if data["ok"] else "**no**"
    limit = data.get("rss_limit_mb", 100)
    return (
        f"{markdown_table(headers, rows)}\n\nEvery search within its bound + 1 s, with results, "
        f"RSS growth under {limit:g} MB: {verdict}."
    )


def render_mcp_fuzz(f: dict[str, Any]) -> str:
    trip, search = f["round_trip_ms"], f["search_round_trip_ms"]
    rss = " → ".join(f"{mb_:.1f} ({n:,} lines)" for n, mb_ in f["rss_mb_by_lines"])
    rows = [
        [
            "lines sent / unanswered / wrong id / extra answers",
            f"{f['lines']:,} / {f['unanswered']} / {f['wrong_id']} / {f['extra_lines']}",
        ],
        [
            "alive after, exit code, tracebacks in its log",
            f"{'yes' if f['alive_after'] else '**no**'}, {f['exit_code']}, {f['tracebacks_in_log']}",
        ],
        [
            "round trip p50 / p95 / p99, all lines",
            f"{trip['p50']:.1f} / {trip['p95']:.1f} / {trip['p99']:.1f} ms",
        ],
        [
            f"round trip p50 / p95 / p99, the {int(search['n']):,} `search` calls",
            f"{search['p50']:.1f} / {search['p95']:.1f} / {search['p99']:.1f} ms",
        ],
        ["RSS after warm-up → end", f"{f['rss_mb_after_warmup']:.1f} → {f['rss_mb_end']:.1f} MB"],
    ]
    if rss:
        rows.append(["RSS (MB) by lines sent", rss])
    if f.get("slowest"):
        slowest = f["slowest"][0]
        rows.append(["slowest line", f"{slowest['ms']:,.0f} ms"])
    return f"Seed {f['seed']}.\n\n{figure_table(rows)}"


def render_warm_slow_clients(f: dict[str, Any]) -> str:
    """Who answered the clients, how fast, against the deadline; the silent clients let go."""
    rows = []
    for path in ("warm", "one-shot"):
        took = [r["seconds"] for r in f["rows"] if r["path"] == path]
        rows.append([path, len(took), f"{max(took):.2f} s" if took else "–"])
    bound = f["rerank_bound_s"] + 1
    server = f["server"]
    return (
        f"{f['clients']} clients at once, {f['silent']} of them sending a large `--json` search "
        f"and never reading; re-ranker {f['rerank_delay_s']:g} s a call, bound "
        f"{f['rerank_bound_s']:g} s.\n\n"
        f"{markdown_table(['answered by', 'clients', 'slowest'], rows)}\n\n"
        f"Every client answered within {bound:g} s: {'yes' if f['late'] == 0 else '**no**'} "
        f"({f['late']} late). The next search, the silent clients still connected: "
        f"{f['after']['path']}, {f['after']['seconds']:.2f} s. The server let go of "
        f"{server['dropped']} silent client(s) at their write deadline; {server['busy']} "
        "request(s) declined busy."
    )


def section(title: str, result: str, render: Render, command: str, part: str) -> Section:
    return Section(title, result, render, f".venv/bin/python -m {command}", part)


SECTIONS: list[Section] = [
    section(
        "The first hour at 10k chunks",
        "first_hour-10000",
        render_first_hour,
        "bench.first_hour --chunks 10000 --quiet-load 1.0",
        INDEXING,
    ),
    section(
        "The first hour at 100k chunks: the file phase",
        "first_hour-100000-keyword",
        render_first_hour,
        "bench.first_hour --chunks 100000 --keyword-only",
        INDEXING,
    ),
    section(
        "The first hour at 100k chunks: both phases",
        "first_hour-100000-noraw",
        render_first_hour,
        "bench.first_hour --chunks 100000 --no-raw",
        INDEXING,
    ),
    section(
        "Embedding throughput per embedder",
        "embedders",
        render_embedders,
        "bench.embedders --short 1000 --chunks 150 --repeat 2",
        INDEXING,
    ),
    section(
        "The local model at this CPU's limit",
        "model_ceiling",
        model_ceiling.render,
        "bench.model_ceiling --quiet-load 1.2",
        INDEXING,
    ),
    section("The demo index", "demo", render_demo, "bench.demo --quiet-load 1.4", INDEXING),
    section(
        "A home folder of 100,000 files",
        "home_discovery",
        render_home_discovery,
        "bench.home_discovery --files 100000 --runs 3",
        DISCOVERY,
    ),
    section("People", "people", render_people, "bench.people", DISCOVERY),
    section(
        "A no-change reindex at 100k chunks and over a 100k-file home",
        "reindex_nochange",
        render_reindex_nochange,
        "bench.reindex_nochange --chunks 100000 --files 100000 --runs 3",
        FRESHNESS,
    ),
    section(
        "Save to searchable, default debounce",
        "freshness-debounce-2",
        render_freshness,
        "bench.freshness --chunks 3000 --saves 12 --debounce 2.0",
        FRESHNESS,
    ),
    section(
        "Save to searchable, short debounce",
        "freshness-debounce-0.5",
        render_freshness,
        "bench.freshness --chunks 1000 --saves 12 --debounce 0.5",
        FRESHNESS,
    ),
    section(
        "Space reclaimed by maintenance after churn",
        "churn",
        render_churn,
        "bench.churn --chunks 5000 --rounds 3",
        FRESHNESS,
    ),
    section(
        "Hostile re-rank and embedding servers",
        "hostile_http",
        render_hostile_http,
        "bench.hostile_http",
        TRUST,
    ),
    section("MCP fuzz", "mcp_fuzz", render_mcp_fuzz, "bench.mcp_fuzz --lines 5000", TRUST),
    section(
        "Warm server under slow clients",
        "warm_slow_clients",
        render_warm_slow_clients,
        "bench.warm_slow_clients",
        TRUST,
    ),
]

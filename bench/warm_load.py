"""A warm process's first load and memory at 100k chunks: the index read, or its files mapped.

    .venv/bin/python -m bench.warm_load [--chunks 100000] [--runs 3] [--queries 50]

A warm process (the desktop app, `memex watch`, the warm server a search starts) holds the
keyword postings and the vector matrix. Each arm is a new child process that makes a
Searcher with both, as the warm process does, times their first load, runs the queries in
every mode and reports its memory (VmRSS, RssAnon, RssFile from /proc) and the results:
- `read`: both read from the index (`keep_file=False`: what every start did before the files);
- `write`: the files absent: read from the index, written beside it and mapped;
- `mapped`: the files present: mapped, nothing read but the chunks' ids (median of `--runs`).
The results of every query in every mode must be the same in all three arms. The bed is the
speed benchmark's chat layer (bench/perf_data.py) indexed once with the `hashing` embedder
at 384 dimensions (`embedder.model = "hashing-384"`): vectors of the local model's size and
number of parts, built in minutes rather than its hour (the model's own memory, about
100 MB, is not in these processes). Writes bench/out/warm_load.json (warm_load-<chunks>.json
at another `--chunks`).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import cold_start, perf_data
from bench.common import OUT, REPO, add_quiet_load, machine, wait_for_quiet, write_figures

MODES = ("hybrid", "bm25", "vector")
CONFIG = '[embedder]\nname = "hashing"\nmodel = "hashing-384"\n'
ARMS = ("read", "write", "mapped")


def child(db: str, config: str, arm: str, n_queries: int) -> dict[str, Any]:
    """One arm in this process: load, search, measure."""
    from bench.perf import current_rss_mb
    from engine.embedders import create_embedder
    from engine.search import Searcher
    from engine.search.retrieve.keyword_index import KeywordIndex
    from engine.search.retrieve.vector_cache import VectorCache
    from engine.settings import load_settings
    from engine.store import db as store

    settings = load_settings(Path(config), env={}, db=db, search__frecency=False)
    keep = arm != "read"
    started = time.perf_counter()
    scan, rescore = settings.search.vector_scan, settings.search.vector_rescore
    cache = VectorCache(db, scan, rescore, keep_file=keep)
    index = KeywordIndex(db, keep_file=keep)
    cache.refresh()
    vectors_s = time.perf_counter() - started
    index.refresh()
    loaded_s = time.perf_counter() - started
    searcher = Searcher(
        settings, embedder=create_embedder(settings), vector_cache=cache, keyword_index=index
    )
    conn = store.connect(Path(db), create=False)
    queries = make_queries(conn, n_queries)
    conn.close()
    first = time.perf_counter()
    searcher.search(queries[0], 10)
    first_s = time.perf_counter() - first
    results = {
        mode: [[r.id for r in searcher.search(q, 10, mode=mode).results] for q in queries]
        for mode in MODES
    }
    return {
        "vectors_load_s": round(vectors_s, 3),
        "keyword_load_s": round(loaded_s - vectors_s, 3),
        "load_s": round(loaded_s, 3),
        "first_search_s": round(first_s, 3),
        "mapped": {"vectors": cache.mapped, "keyword": index.mapped},
        "rss_mb": round(current_rss_mb(), 1),
        "anon_mb": round(current_rss_mb("RssAnon"), 1),
        "file_mb": round(current_rss_mb("RssFile"), 1),
        "results": results,
    }


def make_queries(conn: Any, n: int) -> list[str]:
    """Two to four words of chunks picked with a fixed seed."""
    rng = random.Random(7)
    top = int(conn.execute("SELECT max(seq) FROM chunks").fetchone()[0])
    queries: list[str] = []
    while len(queries) < n:
        row = conn.execute("SELECT content FROM chunks WHERE seq = ?", (rng.randint(1, top),))
        found = row.fetchone()
        words = [w for w in (found[0] if found else "").split() if w.isalpha() and len(w) > 3]
        if len(words) >= 4:
            queries.append(" ".join(rng.sample(words, rng.randint(2, 4))))
    return queries


def bed(chunks: int) -> list[str]:
    """`--root/--db/--config` of the chat layer indexed with 384-dimensional hashing vectors."""
    target = OUT / f"warm_load-{chunks}"
    target.mkdir(parents=True, exist_ok=True)
    (target / "config.toml").write_text(CONFIG)
    args = cold_start.index_args(target / "layer", target)
    if not (target / "built").exists():
        perf_data.LayerWriter(target / "layer", chunks).write()
        command = [sys.executable, "-c", cold_start.MAIN, "reindex", *args]
        env = cold_start.child_env()
        subprocess.run(command, check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
        (target / "built").write_text(time.strftime("%Y-%m-%d %H:%M"))
    return args


def run_arm(args: list[str], arm: str, n_queries: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.warm_load", "--child", args[3], args[5], arm]
    command += ["--queries", str(n_queries)]
    env = cold_start.child_env()
    done = subprocess.run(command, check=True, env=env, cwd=REPO, capture_output=True, text=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(chunks: int, runs: int, n_queries: int) -> dict[str, Any]:
    args = bed(chunks)
    db = Path(args[3])
    arms: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    for _ in range(runs):
        arms["read"].append(run_arm(args, "read", n_queries))
        for suffix in (".keyword", ".vectors"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        arms["write"].append(run_arm(args, "write", n_queries))
        arms["mapped"].append(run_arm(args, "mapped", n_queries))
    reference = arms["read"][0]["results"]
    same = {arm: all(r["results"] == reference for r in results) for arm, results in arms.items()}
    figures = {
        arm: {
            key: statistics.median(r[key] for r in results)
            for key in ("vectors_load_s", "keyword_load_s", "load_s", "first_search_s")
            + ("rss_mb", "anon_mb", "file_mb")
        }
        for arm, results in arms.items()
    }
    files = {s: Path(str(db) + s).stat().st_size / 1e6 for s in (".keyword", ".vectors")}
    return {
        "chunks": chunks,
        "runs": runs,
        "queries": n_queries,
        "arms": figures,
        "mapped_counts": {arm: arms[arm][0]["mapped"] for arm in ARMS},
        "same_results": same,
        "file_mb": {k.lstrip("."): round(v, 1) for k, v in files.items()},
        "db_mb": round(db.stat().st_size / 1e6, 1),
    }


def result_name(chunks: int) -> str:
    """bench/out/warm_load.json at the default 100k chunks, warm_load-<chunks>.json else."""
    return "warm_load" if chunks == 100_000 else f"warm_load-{chunks}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--child", nargs=3, metavar=("DB", "CONFIG", "ARM"))
    add_quiet_load(parser)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.queries)))
        return 0
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    figures = measure(args.chunks, args.runs, args.queries)
    for arm, row in figures["arms"].items():
        print(arm, row)
    print("same results:", figures["same_results"], "files MB:", figures["file_mb"])
    write_figures(result_name(args.chunks), before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())

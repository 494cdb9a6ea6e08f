"""The first hour with a real archive: keyword search within minutes, vectors filling in behind.

    .venv/bin/python -m bench.first_hour --chunks 10000 [--keyword-only] [--quiet-load 1.2]

Writes the speed benchmark's data layer (bench/perf_data.py, cached under bench/out/), then
indexes it into a fresh database in a child process, the way `memex reindex` does (the file
phase, then the vector phase), and reports:
- when the first keyword search answered (run on its own read connection the moment the file
  phase committed its last file), with its hit count;
- the vector phase's rate (chunks/s, tokens/s) beside the local model's raw rate on the same
  texts in the same process (`LocalEmbedder.embed` over every chunk, batches of 256), and the
  end-to-end rate;
- the child's peak RSS during the index run (before the raw-rate pass).
`--keyword-only` stops when the file phase ends; `--no-raw` skips the raw-rate pass (at 100k
it would take as long again). Writes bench/out/first_hour-<chunks>[-keyword|-noraw].json.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import perf_data
from bench.common import OUT, bench_settings, digest, machine, wait_for_quiet, write_figures
from engine.index.indexer import NullReporter
from engine.index.runs import open_writer, prepare_embedder, run_index
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db

PROBE = "coffee tomorrow morning"  # words common in chat: the search has real work to do
RAW_BATCH = 256


class PhaseClock(NullReporter):
    """Notes when the file phase ends (the first vector report) and searches right then."""

    def __init__(self, settings: Settings, started: float, keyword_only: bool) -> None:
        self.settings, self.started, self.keyword_only = settings, started, keyword_only
        self.files_done: float | None = None
        self.first_search: dict[str, Any] = {}
        self.stop = False

    def on_embedding(self, done: int, total: int) -> None:
        if self.files_done is None:
            self.files_done = time.perf_counter() - self.started
            self.first_search = keyword_search(self.settings, self.started)
        self.stop = self.keyword_only


def keyword_search(settings: Settings, started: float) -> dict[str, Any]:
    """A bm25 search on its own read connection; when it answered, since `started`."""
    searcher = Searcher(settings, vector_cache=False, keyword_index=False)
    try:
        response = searcher.search(PROBE, 10, mode="bm25")
    finally:
        searcher.close()
    return {"at_s": round(time.perf_counter() - started, 2), "hits": len(response.results),
            "took_ms": round(response.took_ms, 1)}  # fmt: skip


def index_once(settings: Settings, keyword_only: bool) -> dict[str, Any]:
    """The two phases on one write connection; their figures."""
    started = time.perf_counter()
    clock = PhaseClock(settings, started, keyword_only)
    conn = open_writer(settings)
    try:
        embedder, reason = prepare_embedder(conn, settings, clock, None, load=True)
        result = run_index(conn, settings, embedder, clock, missing_reason=reason,
                           should_stop=lambda: clock.stop, started=started)  # fmt: skip
    finally:
        conn.close()
    total = time.perf_counter() - started
    files_done = clock.files_done or total
    stats = result.stats
    return {"files": stats.files, "chunks": stats.chunks, "embedded": stats.embedded,
            "file_phase_s": round(files_done, 1), "first_keyword_search": clock.first_search,
            "vector_phase_s": round(total - files_done, 1), "total_s": round(total, 1),
            "vectors_left": result.vectors_left,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}  # fmt: skip


def raw_rate(settings: Settings, limit: int) -> dict[str, Any]:
    """The local model alone on the first `limit` chunk texts of the index (newest first,
    as the vector phase takes them): seconds, chunks/s, tokens/s."""
    from tokenizers import Tokenizer

    from engine.embedders.local import TOKENIZER, LocalEmbedder

    conn = db.connect(settings.db_path, create=False)
    texts = [r[0] for r in conn.execute(
        "SELECT content FROM chunks ORDER BY content_date DESC, seq LIMIT ?", (limit,))]  # fmt: skip
    conn.close()
    model = LocalEmbedder(max_tokens=settings.embedder.max_tokens,
                          batch_size=settings.embedder.batch_size)  # fmt: skip
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.enable_truncation(max_length=settings.embedder.max_tokens)
    tokens = sum(len(e.ids) for e in tokenizer.encode_batch(texts))
    started = time.perf_counter()
    for start in range(0, len(texts), RAW_BATCH):
        model.embed(texts[start : start + RAW_BATCH])
    seconds = time.perf_counter() - started
    return {"chunks": len(texts), "tokens": tokens, "seconds": round(seconds, 1),
            "chunks_per_s": round(len(texts) / seconds, 1),
            "tokens_per_s": round(tokens / seconds)}  # fmt: skip


def child(target: Path, keyword_only: bool, raw: bool) -> None:
    settings = bench_settings([target / "layer"], target / "memex.db")
    figures = index_once(settings, keyword_only)
    if raw and not keyword_only and figures["embedded"]:
        figures["raw_model"] = raw_rate(settings, figures["embedded"])
        figures["tokens"] = figures["raw_model"]["tokens"]
    print(json.dumps(figures))


def layer(chunks: int) -> Path:
    target = OUT / f"first_hour-{chunks}-{digest([Path(perf_data.__file__)], str(chunks))}"
    if not (target / "layer").is_dir():
        perf_data.LayerWriter(target / "layer", chunks).write()
    for name in ("memex.db", "memex.db-wal", "memex.db-shm"):
        (target / name).unlink(missing_ok=True)
    return target


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.first_hour", description=__doc__.split("\n")[0]
    )
    p.add_argument("--chunks", type=int, default=10_000)
    p.add_argument("--keyword-only", action="store_true", help="stop after the file phase")
    p.add_argument("--quiet-load", type=float, default=0.0, metavar="LOAD",
                   help="first wait for the 1-minute load average to fall below LOAD")  # fmt: skip
    p.add_argument("--no-raw", action="store_true", help="skip the raw model-rate pass")
    p.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.child:
        child(args.child, args.keyword_only, not args.no_raw)
        return 0
    target = layer(args.chunks)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    command = [sys.executable, "-m", "bench.first_hour", "--child", str(target)]
    command += ["--keyword-only"] if args.keyword_only else []
    command += ["--no-raw"] if args.no_raw else []
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    figures = {"chunks_asked": args.chunks, **json.loads(out.splitlines()[-1])}
    if "raw_model" in figures and figures["vector_phase_s"]:
        figures["vector_chunks_per_s"] = round(figures["embedded"] / figures["vector_phase_s"], 1)
        figures["vector_tokens_per_s"] = round(figures["tokens"] / figures["vector_phase_s"])
        figures["raw_over_vector_phase"] = round(
            figures["raw_model"]["chunks_per_s"] / figures["vector_chunks_per_s"], 2)  # fmt: skip
    suffix = "-keyword" if args.keyword_only else ("-noraw" if args.no_raw else "")
    print(json.dumps(figures, indent=2))
    write_figures(f"first_hour-{args.chunks}{suffix}", before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
